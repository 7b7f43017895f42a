"""A party killed (SIGKILL) in the middle of its Upload stream and started again with the same ``--state`` folder
rejoins, uploads again from scratch and the session finishes with the labels of an uninterrupted run; the
coordinator discards the partial upload and counts it as refused (docs/protocol.md, "Retrying and joining again").

The parties are real ``ppc party`` processes on loopback, with seeds from entropy kept in their state files (no
``--seed``). The first ``ppc party a`` runs with a ``sitecustomize`` on its path that stalls its upload after the
first array chunk has been handed to gRPC; the test waits until the coordinator's GetStatus shows part of a's
array bytes received, and only then kills it. Started again before the coordinator has seen the first upload
break, a party waits at Join and tries again (parties.retry) rather than give up.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from parties.client import ClientSecurity, CoordinatorClient

TIMEOUT = 180.0
ROWS = 70_000  # a's disguised array (ROWS x 2 float64, 1.12 MB) travels in two chunks of at most 1 MiB
SCENARIO = ('name = "midupload"\nseed = 5\ndeadline = 150\n'  # [security] ids: pseudonymous, the default
            '[[parties]]\nname = "a"\ndata = "a.csv"\nid_column = "id"\ncolumns = ["x1", "x2", "x3"]\n'
            'method = "drbt"\nk = 2\n'
            '[[parties]]\nname = "b"\ndata = "b.csv"\nid_column = "key"\ncolumns = ["y1", "y2"]\nmethod = "none"\n'
            '[clustering]\nalgorithm = "kmeans"\nn_clusters = 3\n')
#: Put on the path of the first party a only: its upload stops after its first array chunk, as if the party
#: died there (it is killed while it waits).
STALL = '''
import sys, time
import parties.client as client
from protos.ppcsim.v1 import session_pb2

_upload = client.CoordinatorClient.upload


def upload(self, messages, timeout):
    def stalled():
        for message in messages:  # as a party sends them: serialised
            yield message
            if session_pb2.UploadMessage.FromString(message).WhichOneof("part") == "chunk":
                print("stalled after the first array chunk", file=sys.stderr, flush=True)
                time.sleep(3600)
    return _upload(self, stalled(), timeout)


client.CoordinatorClient.upload = upload
'''


def ppc(*args) -> list[str]:
    return [sys.executable, "-m", "ppcsim", *map(str, args)]


def write_data(folder: Path) -> None:
    rng = np.random.default_rng(3)
    centres = rng.normal(scale=4.0, size=(3, 5))
    X = centres[rng.integers(0, 3, size=ROWS)] + rng.normal(size=(ROWS, 5))
    ids = np.array([f"r{i}" for i in range(ROWS)])
    order = rng.permutation(ROWS)  # b holds the same records in another order, and not the last 500
    rows_a = [f"{i},{x[0]:.5f},{x[1]:.5f},{x[2]:.5f}" for i, x in zip(ids, X[:, :3])]
    rows_b = [f"{ids[j]},{X[j, 3]:.5f},{X[j, 4]:.5f}" for j in order if j < ROWS - 500]
    (folder / "a.csv").write_text("id,x1,x2,x3\n" + "\n".join(rows_a) + "\n")
    (folder / "b.csv").write_text("key,y1,y2\n" + "\n".join(rows_b) + "\n")


def session(folder: Path, states: Path, mode: str) -> dict:
    """One by-hand session in ``folder``: the coordinator (--out) and parties a and b with state folders under
    ``states``. ``mode`` "whole": uninterrupted; "kill": a is first started stalled, killed mid-upload, then
    started again; "race": a second a is started while the first is stalled mid-upload (its Join must wait
    while the coordinator still reads that upload), then the first is killed. Returns the report, the
    coordinator's log, each party's labels file and every party process's stderr."""
    creds, port_file, out = folder / "creds", folder / "port", folder / "out"
    made = subprocess.run(ppc("credentials", folder / "s.toml", "--out", creds), cwd=folder, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert made.returncode == 0, made.stderr
    procs: list[subprocess.Popen] = []
    log = folder / "coordinator.log"

    def party(name: str, env: dict | None = None) -> tuple[subprocess.Popen, Path]:
        err = folder / f"{name}-{len(procs)}.err"
        with open(err, "w") as fh:
            p = subprocess.Popen(ppc("party", "--coordinator", address, "--scenario", folder / "s.toml", "--party",
                                     name, "--credentials", creds / "parties" / name, "--state", states / name,
                                     "--labels-out", folder / f"{name}.labels", "--progress", "0"),
                                 cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh, env=env)
        procs.append(p)
        return p, err

    def finish(*started: tuple[subprocess.Popen, Path]) -> None:
        for p, err in started:
            assert p.wait(timeout=TIMEOUT) == 0, (err.read_text(), log.read_text())

    try:
        with open(log, "w") as fh:
            coordinator = subprocess.Popen(ppc("coordinator", "--listen", "127.0.0.1:0", "--port-file", port_file,
                                               "--scenario", folder / "s.toml", "--credentials", creds, "--out", out),
                                           cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh)
        procs.append(coordinator)
        end = time.monotonic() + TIMEOUT
        while not (port_file.exists() and port_file.read_text().strip().isdigit()):
            assert coordinator.poll() is None and time.monotonic() < end, log.read_text()
            time.sleep(0.05)
        address = f"127.0.0.1:{int(port_file.read_text())}"
        if mode == "whole":
            finish(party("a"), party("b"))
        else:
            hook = folder / "hook"
            hook.mkdir()
            (hook / "sitecustomize.py").write_text(STALL)
            path = os.pathsep.join([str(hook), *filter(None, [os.environ.get("PYTHONPATH")])])
            (first, first_err), b = party("a", {**os.environ, "PYTHONPATH": path}), party("b")
            watcher = CoordinatorClient(address, "midupload", "b", ClientSecurity.load(creds / "parties" / "b", "b"))
            try:
                status = None
                while status is None or not 0 < status.payload_bytes < status.payload_expected:
                    assert first.poll() is None and time.monotonic() < end, first_err.read_text()
                    time.sleep(0.1)
                    status = next(p for p in watcher.status(timeout=10).parties if p.party == "a")
                assert not status.uploaded
            finally:
                watcher.close()
            assert "stalled after the first array chunk" in first_err.read_text()
            if mode == "kill":
                first.send_signal(signal.SIGKILL)  # in the middle of its Upload stream: part of its array is in
                first.wait()
                again = party("a")  # the same state folder, no hook: it joins with the same key and uploads again
            else:
                again = party("a")
                while "the coordinator still reads this party's earlier upload" not in again[1].read_text():
                    assert again[0].poll() is None and time.monotonic() < end, again[1].read_text()
                    time.sleep(0.1)
                first.send_signal(signal.SIGKILL)  # only now does the coordinator see the first upload break
                first.wait()
            finish(again, b)
        assert coordinator.wait(timeout=TIMEOUT) == 0, log.read_text()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return {"report": json.loads((out / "report.json").read_text()), "log": log.read_text(),
            "labels": {p: (folder / f"{p}.labels").read_text() for p in "ab"}}


def test_a_party_killed_mid_upload_comes_back_from_its_state_file_with_the_same_labels(tmp_path):
    """"kill": killed, then started again; "race": started again while the coordinator still reads the upload of
    the first (as when a host dies without its connection closing), which is then killed. Both sessions start
    from the same state files (the seeds the first "kill" party drew from entropy), and so does the uninterrupted
    run both are compared with."""
    (tmp_path / "kill").mkdir()
    write_data(tmp_path / "kill")
    (tmp_path / "kill" / "s.toml").write_text(SCENARIO)
    states = tmp_path / "states-kill"
    runs = {"kill": session(tmp_path / "kill", states, "kill")}
    # the other runs: a fresh coordinator, the same data and copies of the same state files (the seeds drawn from
    # entropy by the first run), so every party disguises and keys exactly as before
    for mode in ("race", "whole"):
        shutil.copytree(tmp_path / "kill", tmp_path / mode, ignore=shutil.ignore_patterns(
            "creds", "out", "port", "hook", "*.labels", "*.log", "*.err"))
        shutil.copytree(states, tmp_path / f"states-{mode}")
        runs[mode] = session(tmp_path / mode, tmp_path / f"states-{mode}", mode)
    whole = runs["whole"]

    for p in "ab":  # the state file holds a seed from entropy, which every run used
        seed = json.loads((states / p / f"midupload.{p}.state").read_text())["seed"]
        assert seed.bit_length() > 64 and oct(os.stat(states / p / f"midupload.{p}.state").st_mode)[-3:] == "600"
    assert whole["report"]["communication"]["refused"] == []
    for mode in ("kill", "race"):
        killed = runs[mode]
        assert killed["labels"] == whole["labels"], mode
        labels = killed["labels"]["a"].splitlines()
        assert labels[0] == "id,cluster" and len(labels) == 1 + ROWS - 500
        assert {line.rsplit(",", 1)[1] for line in labels[1:]} == {"0", "1", "2"}
        # the coordinator discarded the partial upload (counted as refused, with its bytes) and took the second
        refused = killed["report"]["communication"]["refused"]
        assert [r["party"] for r in refused] == ["a"], (mode, refused)
        assert 0 < refused[0]["payload"] < ROWS * 2 * 8 and refused[0]["messages"] >= 3
        by_name = {run: {p["name"]: p for p in r["report"]["parties"]} for run, r in (("killed", killed), ("whole", whole))}
        assert by_name["killed"]["a"]["refused"]["attempts"] == 1 and by_name["killed"]["b"]["refused"]["attempts"] == 0
        for p in "ab":  # the accepted uploads are the same arrays in both runs
            for key in ("predicted", "payload"):
                assert by_name["killed"][p]["bytes"][key] == by_name["whole"][p]["bytes"][key], (mode, p, key)

        def up(run: dict, upload: bool) -> int:  # a's messages to the coordinator, its Upload streams or the others
            return sum(e["serialized"] for e in run["report"]["communication"]["ledger"]
                       if e["party"] == "a" and e["direction"] == "up" and (e["rpc"] == "Upload") == upload)

        # the refused upload's bytes are what a's Upload streams took beyond the uninterrupted run's one; the rest
        # of the difference is the second process's Join, GetPeers and PostSealedKeys, counted as part of the exchange
        assert up(killed, True) - refused[0]["serialized"] == up(whole, True), mode
        assert (by_name["killed"]["a"]["bytes"]["serialized"] - by_name["whole"]["a"]["bytes"]["serialized"]
                == up(killed, False) - up(whole, False) > 0), mode
        assert by_name["killed"]["b"]["bytes"] == by_name["whole"]["b"]["bytes"], mode
        assert killed["report"]["state"] == whole["report"]["state"] == "done"
