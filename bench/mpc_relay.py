"""Target: the relayed MPC k-means costs at most 1.3x the time and 1.1x the bytes of the same MPyC program with
direct sockets.

ROWS records of synthetic blobs over PARTIES parties of COLUMNS columns each, k-means with CLUSTERS clusters,
ROUNDS Lloyd rounds, from the same initial records. In this one run:

  relayed   `ppc run` of a `protocol = "mpc"` scenario: each party process runs its MPyC program with its links
            tunnelled through the coordinator (gRPC over TLS, AES-256-GCM per pair); seconds = the slowest
            party's MPC phase (its program's start to its result), bytes = the sealed frames the coordinator
            counted per party
  direct    the same program (parties.mpc_kmeans) on the same joined normalised columns and initial records,
            one process per party connected to each other over loopback TCP (MPyC's own -P list); seconds =
            first start to last exit, bytes = what MPyC reports it sent per party

The relayed run's plaintext bytes (sealed bytes less 16 bytes of tag per frame) are every byte MPyC wrote on
its sockets; they come within a few hundred bytes of the direct run's count (two executions: the size of
MPyC's serialised shares varies a little from run to run). Labels of both must equal scikit-learn's.

    python bench/mpc_relay.py [--rows 300] [--parties 3] [--columns 2] [--rounds 3] [--clusters 3]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ppcsim.cli.entry import process_settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario, ppc_run  # noqa: E402

from parties.disguise import disguise  # noqa: E402
from parties.mpc import free_port  # noqa: E402
from ppcsim.run.observers.secure_aggregation import reference  # noqa: E402
from ppcsim.scenario.load import load_scenario  # noqa: E402

process_settings()  # ppc's process settings: this process's allocator, and what the processes it starts inherit

SENT = re.compile(r"bytes sent: (\d+)")


def direct(path: Path, init: list[int], rounds: int, clusters: int, tmp: Path) -> tuple[float, list[int], np.ndarray]:
    """The MPyC program over direct loopback sockets: (seconds, bytes sent per party, labels)."""
    scenario = load_scenario(path)
    own = [disguise(cfg) for cfg in scenario.parties]
    columns = [len(d.data.columns) for d in own]
    for i, d in enumerate(own):
        np.savez(tmp / f"in{i}.npz", X=d.X, columns=columns, init=init, k=clusters, rounds=rounds, bits=32, frac=16,
                 m=len(d.X), reveal_centres=False)
    ports = [free_port() for _ in own]
    t = time.perf_counter()
    procs = []
    for i in range(len(own)):
        addresses = [a for j, p in enumerate(ports) for a in ("-P", f"{'' if i == j else '127.0.0.1'}:{p}")]
        procs.append(subprocess.Popen([sys.executable, "-m", "parties.mpc_kmeans", "--data", str(tmp / f"in{i}.npz"),
                                       "--result", str(tmp / f"out{i}.npz"), *addresses, "-I", str(i)],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))  # MPyC logs to stdout
    logs = [p.communicate()[0] for p in procs]
    seconds = time.perf_counter() - t
    if any(p.returncode for p in procs):
        raise SystemExit("the direct run failed:\n" + "\n".join(logs))
    sent = [int(SENT.findall(log)[-1]) for log in logs]
    X = np.hstack([d.X for d in own])
    labels = np.load(tmp / "out0.npz")["labels"]
    same = reference(X, np.asarray(init), clusters, rounds).labels_
    if not np.array_equal(labels, same):
        print("warning: the direct run's labels differ from scikit-learn's", file=sys.stderr)
    return seconds, sent, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--parties", type=int, default=3)
    parser.add_argument("--columns", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clusters", type=int, default=3)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    mpc = f'algorithm = "kmeans"\nprotocol = "mpc"\nn_clusters = {args.clusters}\nmax_iter = {args.rounds}\n'
    text = blobs_scenario("bench-mpc", args.rows, args.parties, args.columns, "", mpc, clusters=args.clusters)
    wall, report = ppc_run(text)
    m = report["mpc"]
    relayed_seconds = max(p["timing"]["mpc"] for p in report["parties"])
    sealed = [m["by_party"][p["name"]]["up"] for p in report["parties"]]
    plain = [m["by_party"][p["name"]]["plaintext_up"] for p in report["parties"]]
    if m["n_joined"] != args.rows:
        raise SystemExit("the join dropped records; this benchmark needs every record joined")
    with tempfile.TemporaryDirectory(prefix="ppc-bench-mpc-") as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(text)
        direct_seconds, sent, _ = direct(path, m["init"], args.rounds, args.clusters, Path(tmp))
    print(f"{args.rows} records, {args.parties} parties x {args.columns} columns, k = {args.clusters}, "
          f"{args.rounds} rounds (shared machine: ratios, not absolute times)")
    print(f"relayed  MPC phase {relayed_seconds:.2f} s (ppc run end to end {wall:.1f} s); labels "
          f"{'equal' if report['utility']['labels_equal_same_init'] else 'NOT equal'} to scikit-learn's")
    print(f"direct   {direct_seconds:.2f} s")
    print(f"time     {relayed_seconds / direct_seconds:.2f}x (target <= 1.3x)")
    for name, s, p, d in zip((p["name"] for p in report["parties"]), sealed, plain, sent):
        print(f"bytes    {name}: sealed {s:,}, plaintext {p:,}, direct (MPyC's count) {d:,}: {s / d:.3f}x "
              f"(target <= 1.1x); plaintext - MPyC's count = {p - d:,} B")
    figures = Figures("mpc_relay.py")
    figures.add("relayed_seconds", relayed_seconds)
    figures.add("direct_seconds", direct_seconds)
    time_ratio = figures.add("time_ratio", relayed_seconds / direct_seconds)
    bytes_ratio = figures.add("bytes_ratio", max(s / d for s, d in zip(sealed, sent)))
    figures.check("labels equal scikit-learn's from the same centres", float(report["utility"]["labels_equal_same_init"]),
                  "==", 1)
    figures.check("relayed time / direct time", time_ratio, "<=", 1.3)
    figures.check("relayed sealed bytes / direct bytes (worst party)", bytes_ratio, "<=", 1.1)
    figures.write(args.json, f"{args.rows} records, {args.parties} parties, {args.rounds} rounds: relayed "
                             f"{time_ratio:.2f}x the direct run's time, {bytes_ratio:.3f}x its bytes")


if __name__ == "__main__":
    main()
