"""How much the coordinator holds: many parties in one session, and an honest session beside outsiders.

``--parties N``: `ppc run` of an N-party scenario (each party its own process, two columns, `drbt` with
k = 1, synthetic blobs of ``--rows`` records), against a 4-party run of the same scenario shape; prints both
times. Before the asyncio server, 70 parties deadlocked the coordinator's 64 threads.

``--by-hand N``: the same shape started as a user starts it by hand: each party's two columns in its own CSV
file, `ppc credentials`, `ppc coordinator`, then N separate `ppc party` processes at once, against 4 parties
started the same way; prints both times (first command to the coordinator's exit, with every party's labels
written).

``--idle N --parked M``: one coordinator in this process; N streams (Upload and PostDistances alternately)
that never send a message and M GetPeers parked by a party of another session, while an honest two-party
session (loopback gRPC, threads) runs; prints its time against the same session with no adversary, and the
slowest GetStatus answer throughout. The server's caps are raised so that every adversary call is admitted
(the defaults would refuse most of the parked calls at once).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc  # noqa: E402
import numpy as np  # noqa: E402

from bench.harness import Figures, blobs_scenario, ppc_run  # noqa: E402
from coordinator.limits import Limits  # noqa: E402
from coordinator.registry import Registry  # noqa: E402
from coordinator.server import start_server  # noqa: E402
from coordinator.session import DONE, SessionSpec  # noqa: E402
from protos.ppcsim.v1 import array_pb2, session_pb2, session_pb2_grpc  # noqa: E402
from protos.serde import Layout  # noqa: E402


def many(parties: int, rows: int, out: Figures) -> str:
    said = []
    for n in (4, parties):
        text = blobs_scenario(f"load{n}", rows, n, 2, 'method = "drbt"\nk = 1', 'algorithm = "kmeans"\nn_clusters = 4',
                              clusters=4)
        seconds, report = ppc_run(text, "--no-eval")
        joined = report["join"]["rows_joined"]
        print(f"{n} parties x 2 columns, {rows} records: ppc run {seconds:.1f} s, {joined} records joined")
        out.add(f"{n} parties: ppc run s", seconds)
        said.append(f"{n} parties {seconds:.1f} s")
    out.check(f"{parties} parties: every record joined", float(joined == rows), "==", 1)
    return f"{rows:,} records: " + ", ".join(said)


def by_hand_scenario(folder: Path, parties: int, rows: int) -> Path:
    """The by-hand scenario: ``parties`` parties, each with its own CSV of ``rows`` records (an id and two
    columns of four Gaussian blobs), ``drbt`` with k = 1, k-means with 4 clusters."""
    rng = np.random.default_rng(7)
    centres = rng.normal(scale=5.0, size=(4, 2 * parties))
    X = centres[rng.integers(0, 4, size=rows)] + rng.normal(size=(rows, 2 * parties))
    tables = []
    for j in range(parties):
        lines = ["id,a,b", *(f"r{i},{X[i, 2 * j]:.6f},{X[i, 2 * j + 1]:.6f}" for i in range(rows))]
        (folder / f"p{j}.csv").write_text("\n".join(lines) + "\n")
        tables.append(f'[[parties]]\nname = "p{j}"\ndata = "p{j}.csv"\nid_column = "id"\ncolumns = ["a", "b"]\n'
                      'method = "drbt"\nk = 1\n')
    path = folder / "scenario.toml"
    path.write_text(f'name = "hand{parties}"\nseed = 7\ndeadline = 3600\n' + "\n".join(tables)
                    + '\n[clustering]\nalgorithm = "kmeans"\nn_clusters = 4\n')
    return path


def by_hand_session(parties: int, rows: int) -> tuple[float, int]:
    """One by-hand session: seconds from `ppc credentials` to the coordinator's exit, and how many records the
    report says were joined. SystemExit naming the process if any exits non-zero."""
    ppc = [sys.executable, "-m", "ppcsim"]
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with tempfile.TemporaryDirectory(prefix="ppc-bench-hand-") as tmp:
        folder = Path(tmp)
        scenario = by_hand_scenario(folder, parties, rows)
        port_file, creds = folder / "port", folder / "creds"
        procs: dict[str, subprocess.Popen] = {}
        t = time.perf_counter()
        made = subprocess.run([*ppc, "credentials", str(scenario), "--out", str(creds)], cwd=folder, **quiet)
        if made.returncode:
            raise SystemExit(f"ppc credentials failed:\n{made.stderr}")
        try:
            procs["coordinator"] = subprocess.Popen(
                [*ppc, "coordinator", "--listen", "127.0.0.1:0", "--port-file", str(port_file), "--scenario",
                 str(scenario), "--credentials", str(creds), "--out", str(folder / "out")], cwd=folder, **quiet)
            while not (port_file.exists() and port_file.read_text().strip().isdigit()):
                if procs["coordinator"].poll() is not None or time.perf_counter() - t > 300:
                    raise SystemExit(f"ppc coordinator did not start:\n{procs['coordinator'].communicate()[1]}")
                time.sleep(0.05)
            address = f"127.0.0.1:{port_file.read_text().strip()}"
            for j in range(parties):  # as each user starts their own, with their own credentials folder
                procs[f"p{j}"] = subprocess.Popen(
                    [*ppc, "party", "--coordinator", address, "--scenario", str(scenario), "--party", f"p{j}",
                     "--credentials", str(creds / "parties" / f"p{j}"), "--labels-out", str(folder / f"p{j}.labels"),
                     "--progress", "0"], cwd=folder, **quiet)
            for name, p in [*list(procs.items())[1:], *list(procs.items())[:1]]:  # the parties, then the coordinator
                _, err = p.communicate(timeout=3600)
                if p.returncode:
                    raise SystemExit(f"{name} exited {p.returncode}:\n{err}")
            seconds = time.perf_counter() - t
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
        missing = [j for j in range(parties) if not (folder / f"p{j}.labels").exists()]
        if missing:
            raise SystemExit(f"parties {missing} wrote no labels")
        report = json.loads((folder / "out" / "report.json").read_text())
        return seconds, int(report["join"]["rows_joined"])


def by_hand(parties: int, rows: int, out: Figures) -> str:
    said, joined = [], 0
    for n in sorted({4, parties}):
        load = os.getloadavg()[0]  # before the session: the machine's other work, not this session's processes
        seconds, joined = by_hand_session(n, rows)
        print(f"{n} parties x 2 columns, {rows} records, started by hand: {seconds:.1f} s, {joined} records joined "
              f"(load average {load:.1f} at the start)")
        out.add(f"{n} parties: by hand s", seconds)
        said.append(f"{n} parties {seconds:.1f} s (load average {load:.1f} at the start)")
    out.check(f"{parties} parties by hand: every record joined", float(joined == rows), "==", 1)
    return f"by hand on {os.cpu_count()} CPUs, {rows:,} records: " + ", ".join(said)


def upload(name: str, party: str, data: np.ndarray):
    ids = [f"r{i}" for i in range(len(data))]
    yield session_pb2.UploadMessage(header=session_pb2.UploadHeader(
        session=name, party=party, method="none", n_ids=len(ids), n_columns=data.shape[1],
        arrays=[array_pb2.ArraySpec(name="data", dtype="<f8", shape=list(data.shape), layout=Layout.ROWS)]))
    yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=ids))
    yield session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=0, offset=0, data=data.tobytes()))


def honest(stub, registry: Registry, name: str, rows: int) -> tuple[float, float]:
    """Seconds the two-party session took, and the slowest GetStatus meanwhile."""
    registry.create(SessionSpec(name=name, parties=("a", "b"), ids="plain", deadline=120))
    data = np.random.default_rng(0).normal(size=(rows, 2)).astype("<f8")
    slowest, finished = [0.0], threading.Event()

    def watch():
        while not finished.is_set():
            t = time.monotonic()
            stub.GetStatus(session_pb2.StatusRequest(session=name), timeout=30)
            slowest[0] = max(slowest[0], time.monotonic() - t)
            time.sleep(0.05)

    def party(p):
        stub.Join(session_pb2.JoinRequest(session=name, party=p), timeout=30)
        stub.Upload(upload(name, p, data), timeout=30)
        list(stub.GetResult(session_pb2.ResultRequest(session=name, party=p), timeout=30))

    watcher = threading.Thread(target=watch)
    watcher.start()
    t = time.monotonic()
    threads = [threading.Thread(target=party, args=(p,)) for p in "ab"]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.monotonic() - t
    finished.set()
    watcher.join()
    assert registry.get(name).state == DONE, (registry.get(name).state, registry.get(name).error)
    return took, slowest[0]


def besieged(idle: int, parked: int, rows: int, out: Figures) -> str:
    registry = Registry()
    limits = Limits(party_calls=parked + 1, session_calls=parked + 1, server_calls=parked + 1024,
                    anonymous_streams=idle + 8, first_message_seconds=60)
    server, port = start_server("127.0.0.1:0", registry, limits=limits)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = session_pb2_grpc.CoordinatorStub(channel)
    honest(stub, registry, "warm-up", rows)  # imports scikit-learn
    alone, alone_status = honest(stub, registry, "alone", rows)
    registry.create(SessionSpec(name="greedy", parties=("a", "b"), ids="plain", deadline=300))
    stub.Join(session_pb2.JoinRequest(session="greedy", party="a"), timeout=30)
    release = threading.Event()

    def silent():
        release.wait()
        return
        yield

    calls = [stub.GetPeers.future(session_pb2.PeersRequest(session="greedy", party="a"), timeout=120)
             for _ in range(parked)]
    calls += [(stub.Upload if i % 2 else stub.PostDistances).future(silent(), timeout=120) for i in range(idle)]
    time.sleep(2.0)
    early = sum(c.done() for c in calls)
    took, status = honest(stub, registry, "beside", rows)
    release.set()
    for c in calls:
        c.cancel()
    print(f"honest 2-party session ({rows} records): alone {alone:.2f} s (slowest GetStatus {alone_status:.3f} s); "
          f"beside {idle} silent streams and {parked} parked GetPeers ({early} ended early): {took:.2f} s "
          f"(slowest GetStatus {status:.3f} s); difference {took - alone:+.2f} s")
    channel.close()
    server.stop(None).wait(10)
    out.add("alone s", alone)
    out.add("beside s", took)
    out.add("slowest GetStatus s", max(alone_status, status))
    out.check("beside - alone, s", max(took - alone, 0.0), "<=", 2)
    out.check("slowest GetStatus, s", max(alone_status, status), "<", 1)
    return (f"honest session alone {alone:.2f} s, beside {idle} silent streams and {parked} parked GetPeers "
            f"{took:.2f} s ({took - alone:+.2f} s); slowest GetStatus {max(alone_status, status):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parties", type=int, default=0)
    parser.add_argument("--by-hand", type=int, default=0, metavar="N",
                        help="N parties started by hand (ppc credentials, ppc coordinator, N ppc party), against 4")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--idle", type=int, default=0)
    parser.add_argument("--parked", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    out, said = Figures("coordinator_load.py"), []
    if args.parties:
        said.append(many(args.parties, args.rows, out))
    if args.by_hand:
        said.append(by_hand(args.by_hand, args.rows, out))
    if args.idle or args.parked:
        said.append(besieged(args.idle, args.parked, args.rows, out))
    out.write(args.json, "; ".join(said))


if __name__ == "__main__":
    main()
