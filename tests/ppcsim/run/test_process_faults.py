"""Faults with real processes: a party killed mid-upload and started again, a party that never arrives, a
coordinator restart, and outputs that are never half-written.

A broken upload is discarded and the session waits for the party to come back
(with the same seed, so the same key); a session that cannot finish ends
within its deadline with an error that names the party, the other parties are
told, no process hangs (every wait has a timeout, everything is killed in
``finally``) and what lands in the run directory is whole.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, WINE, WINE_LABELLED, kill_a_party, kmeans, party_table, ppc_cmd, read_report, write_scenario
from parties.client import ClientSecurity
from ppcsim.cli.parser import main as ppc_main
from ppcsim.report.outputs import write_atomic
from ppcsim.run.inprocess import simulate
from ppcsim.run.outdir import LOCK
from ppcsim.run.relay import Relay
from ppcsim.scenario.load import load_scenario, party_seed
from ppcsim.scenario.network import Link
from protos.ids import as_text
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc

TIMEOUT = 120.0
#: One BLAS/OpenMP thread per party process, as ``ppc run`` gives its parties.
PARTY_ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: Two wine parties: a's six columns by DRBT to k = 3, b's four plain.
WINE_PARTIES = (party_table("a", WINE[:6], "drbt", k=3),
                party_table("b", ["flavanoids", "hue", "proline", "color_intensity"]))


def wine_scenario(tmp: Path, name: str, deadline: float = 60, seed: int = 5) -> Path:
    path = write_scenario(tmp, None, f"{name}.toml", name=name, seed=seed, deadline=deadline, data=WINE_LABELLED,
                          parties=WINE_PARTIES, clustering=kmeans(3))
    return path


class Roles:
    """The processes of one test, each logging to its own file; all killed at the end."""

    def __init__(self, tmp: Path):
        self.tmp, self.procs = tmp, {}
        (tmp / "logs").mkdir(exist_ok=True)

    def start(self, key: str, *args, env=None) -> subprocess.Popen:
        with open(self.log_path(key), "wb") as fh:
            self.procs[key] = subprocess.Popen(ppc_cmd(*args), stdin=subprocess.DEVNULL, stdout=fh,
                                               stderr=subprocess.STDOUT, cwd=self.tmp, env=env)
        return self.procs[key]

    def coordinator(self, key: str, listen: str, *args) -> int:
        port_file = self.tmp / f"{key}.port"
        proc = self.start(key, "coordinator", "--listen", listen, "--port-file", port_file, "--linger", "0.5", *args)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            assert proc.poll() is None, self.log(key)
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.isdigit():
                return int(text)
            time.sleep(0.05)
        raise AssertionError(f"{key} wrote no port file within 60 s")

    def party(self, key: str, address: str, scenario: Path, party: str, creds: Path, *args) -> subprocess.Popen:
        """``ppc party``, with the seed ``ppc run`` would give it (so that its run equals the simulation's)."""
        seed = party_seed(load_scenario(scenario).seed, party)
        return self.start(key, "party", "--coordinator", address, "--scenario", scenario, "--party", party,
                          "--credentials", creds / "parties" / party, "--labels-out", self.tmp / f"{key}.csv",
                          "--seed", seed, *args, env=PARTY_ENV)

    def wait(self, key: str, seconds: float) -> int:
        try:
            return self.procs[key].wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{key} did not exit within {seconds:g} s (it hangs): {self.log(key)}") from None

    def log_path(self, key: str) -> Path:
        return self.tmp / "logs" / f"{key}.log"

    def log(self, key: str) -> str:
        return self.log_path(key).read_text(errors="replace")

    def lines(self, key: str) -> list[str]:
        """What the process printed, without gRPC's own log lines (e.g. "I1125 22:38:53.9 ...")."""
        return [line for line in self.log(key).splitlines()
                if line.strip() and not (line[:1] in "DIWEF" and line[1:5].isdigit() and line[5:6] == " ")]

    def kill_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            if proc.returncode is None:
                proc.wait(timeout=30)


@pytest.fixture
def roles(tmp_path):
    r = Roles(tmp_path)
    try:
        yield r
    finally:
        r.kill_all()


class Status:
    """GetStatus of a session over a real TLS channel, with one party's token."""

    def __init__(self, address: str, session: str, party_creds: Path):
        security = ClientSecurity.load(party_creds, party_creds.name)
        self.channel = security.channel(address)
        self.stub = session_pb2_grpc.CoordinatorStub(self.channel)
        self.request = session_pb2.StatusRequest(session=session)
        self.metadata = (("authorization", f"Bearer {security.token}"),)

    def parties(self) -> dict[str, session_pb2.PartyStatus]:
        reply = self.stub.GetStatus(self.request, timeout=10, wait_for_ready=True, metadata=self.metadata)
        return {p.party: p for p in reply.parties}

    def wait_for(self, what: str, test, seconds: float, alive=()) -> session_pb2.PartyStatus:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for proc in alive:
                assert proc.poll() is None, f"a process ended while waiting for {what}"
            status = self.parties()
            if test(status):
                return status
            time.sleep(0.02)
        raise AssertionError(f"no {what} within {seconds:g} s")

    def close(self) -> None:
        self.channel.close()


def credentials(tmp: Path, scenario: Path, folder: str) -> Path:
    """``ppc credentials SCENARIO --out tmp/folder``, in this process."""
    assert ppc_main(["credentials", str(scenario), "--out", str(tmp / folder)]) == 0
    return tmp / folder


def labels_alone(scenario: Path) -> str:
    session, _ = simulate(load_scenario(scenario))
    ids, labels = as_text(session.outcome.join.ids).tolist(), session.outcome.labels.tolist()
    return "id,cluster\n" + "".join(f"{i},{c}\n" for i, c in zip(ids, labels))


def leftovers(folder: Path) -> list[Path]:
    """Temporary files (ppcsim.report.outputs.write_atomic's start with '.') anywhere under ``folder``."""
    return [p for p in folder.rglob(".*")]


# -- a party killed mid-upload ----------------------------------------------------------------------------


def test_party_killed_mid_upload_is_discarded_and_the_party_started_again_completes(tmp_path, roles):
    """Party a's 300,000 x 8 block (19 MB) goes through a 24 Mbit/s link (a relay in this process), so its
    upload takes seconds and the kill lands in it. The coordinator discards that upload and keeps waiting;
    party a started again with the same seed joins with the same key, uploads from scratch, and the session
    completes. The report counts the refused attempt and its bytes."""
    scenario = tmp_path / "killed.toml"
    columns = ", ".join(f'"x{j}"' for j in range(1, 9))
    scenario.write_text(
        'name = "killed"\nseed = 9\ndeadline = 60\n'
        '[data]\nsource = "synthetic:blobs"\nrows = 300000\ncolumns = 9\nclusters = 3\n'
        f'[[parties]]\nname = "a"\ncolumns = [{columns}]\nmethod = "none"\n'
        '[[parties]]\nname = "b"\ncolumns = ["x0"]\nmethod = "none"\n'
        '[clustering]\nalgorithm = "kmeans"\nn_clusters = 3\nn_init = 1\n'
    )
    creds, out = credentials(tmp_path, scenario, "creds"), tmp_path / "out"
    port = roles.coordinator("coordinator", "127.0.0.1:0", "--scenario", scenario, "--credentials", creds,
                             "--out", out)
    address = f"127.0.0.1:{port}"
    status = Status(address, "killed", creds / "parties" / "b")
    relay = Relay(address, Link(bandwidth_mbit=24)).start()
    try:
        b = roles.party("b", address, scenario, "b", creds)
        a = roles.party("a", relay.address, scenario, "a", creds)
        status.wait_for("upload of b", lambda s: s["b"].uploaded, 60, alive=[b])
        moving = status.wait_for("upload of a in progress",
                                 lambda s: 1 << 20 <= s["a"].payload_bytes < s["a"].payload_expected, 60, alive=[a])
        a.send_signal(signal.SIGKILL)
        assert 0 < moving["a"].payload_bytes < moving["a"].payload_expected
        assert roles.wait("a", 10) == -signal.SIGKILL
        # discarded: the session waits on, and party b with it
        status.wait_for("the discarded upload", lambda s: s["a"].payload_expected == 0, 30, alive=[b])
        assert b.poll() is None and roles.procs["coordinator"].poll() is None
        again = roles.party("a-again", address, scenario, "a", creds)
        assert roles.wait("a-again", TIMEOUT) == 0, roles.log("a-again")
        assert roles.wait("b", TIMEOUT) == 0, roles.log("b")
        assert again.returncode == 0 and roles.wait("coordinator", 60) == 0, roles.log("coordinator")
    finally:
        status.close()
        relay.stop()

    assert "Traceback" not in roles.log("b") + roles.log("coordinator") + roles.log("a-again")
    report = read_report(out)
    assert report["state"] == "done" and report["error"] is None
    assert [p["rows"] for p in report["parties"]] == [300000, 300000]
    (refused,) = report["communication"]["refused"]
    assert refused["party"] == "a" and refused["error"].startswith("party 'a': upload ")
    assert moving["a"].payload_bytes <= refused["payload"] < 300000 * 8 * 8
    a_bytes = report["parties"][0]["bytes"]
    assert a_bytes["payload"] == a_bytes["predicted"] == 300000 * 8 * 8  # the accepted upload alone
    assert report["parties"][0]["refused"]["attempts"] == 1
    assert (tmp_path / "a-again.csv").exists() and (tmp_path / "b.csv").exists()
    assert leftovers(out) == []


# -- a party that never arrives, beside a session that completes --------------------------------------------


def test_party_that_never_arrives_fails_only_its_session(tmp_path, roles):
    """One coordinator, two sessions (one CA, a credentials folder per session): 'late' waits for a
    party b that never comes and fails at its 20 s deadline naming b; 'fine' completes all the same. (The
    deadline leaves a loaded machine time to start party a, so that only b is missing.)"""
    fine, late = wine_scenario(tmp_path, "fine", seed=1), wine_scenario(tmp_path, "late", deadline=20, seed=2)
    assert ppc_main(["credentials", str(fine), str(late), "--out", str(tmp_path / "creds")]) == 0
    creds = {n: tmp_path / "creds" / n for n in ("fine", "late")}
    out = tmp_path / "out"
    port = roles.coordinator("coordinator", "127.0.0.1:0", "--scenario", fine, "--scenario", late,
                             "--credentials", tmp_path / "creds", "--out", out)
    address = f"127.0.0.1:{port}"
    t0 = time.monotonic()
    for key, scenario, party in (("fine-a", fine, "a"), ("fine-b", fine, "b"), ("late-a", late, "a")):
        roles.party(key, address, scenario, party, creds[scenario.stem])
    assert roles.wait("fine-a", TIMEOUT) == 0, roles.log("fine-a")
    assert roles.wait("fine-b", TIMEOUT) == 0, roles.log("fine-b")
    assert roles.wait("late-a", TIMEOUT) == 1, roles.log("late-a")
    late_seconds = time.monotonic() - t0
    assert roles.wait("coordinator", 30) == 1, roles.log("coordinator")

    failed = "session 'late' failed: deadline of 20 s passed (never joined: b; upload not finished: a)"
    assert roles.lines("late-a")[-1] == f"ppc party a: error: {failed}"
    assert late_seconds < 20 + 20  # its deadline, and the start-up of the processes
    coordinator = roles.lines("coordinator")
    assert "Traceback" not in roles.log("coordinator")
    assert [line for line in coordinator if "error" in line] == [f"ppc coordinator: error: {failed}"]
    assert "ppc coordinator: session 'fine' done" in coordinator
    assert read_report(out / "late")["error"] == "deadline of 20 s passed (never joined: b; upload not finished: a)"
    assert read_report(out / "fine")["state"] == "done"
    assert (out / "fine" / "labels.csv").read_text() == labels_alone(fine)
    assert leftovers(out) == []


# -- a coordinator restart ----------------------------------------------------------------------------------


def test_coordinator_killed_while_parties_wait_then_restarted(tmp_path, roles):
    scenario = wine_scenario(tmp_path, "restart")
    creds, out = credentials(tmp_path, scenario, "creds"), tmp_path / "out"
    port = roles.coordinator("first", "127.0.0.1:0", "--scenario", scenario, "--credentials", creds, "--out", out)
    address = f"127.0.0.1:{port}"
    status = Status(address, "restart", creds / "parties" / "a")
    try:
        waiting = roles.party("waiting-a", address, scenario, "a", creds, "--timeout", 60)
        status.wait_for("a to join", lambda s: s["a"].joined, 60, alive=[waiting])  # it waits for b's key
    finally:
        status.close()
    roles.procs["first"].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    assert roles.wait("first", 10) == -signal.SIGKILL
    # the waiting party learns that the coordinator is gone after its three retries (1 + 2 + 4 s), well before
    # its own timeout of 60 s
    assert roles.wait("waiting-a", 60 + 10) == 1, roles.log("waiting-a")
    assert time.monotonic() - killed < 45
    assert sum("trying again in" in line for line in roles.lines("waiting-a")) == 3
    assert "Traceback" not in roles.log("waiting-a")
    last = roles.lines("waiting-a")[-1]
    assert last.startswith("ppc party a: error: coordinator unreachable"), last
    # the killed coordinator wrote nothing but the lock it took its --out folder with (as ppc run does), which
    # the operating system released when it died
    assert os.listdir(out) == [LOCK]

    # a party started while no coordinator listens waits for one; then a new coordinator on the same port
    b = roles.party("b", address, scenario, "b", creds)
    assert roles.coordinator("second", f"127.0.0.1:{port}", "--scenario", scenario, "--credentials", creds,
                             "--out", out) == port
    roles.party("a", address, scenario, "a", creds)
    assert roles.wait("a", TIMEOUT) == 0, roles.log("a")
    assert b.wait(timeout=TIMEOUT) == 0, roles.log("b")
    assert roles.wait("second", 30) == 0, roles.log("second")
    report = read_report(out)
    assert report["state"] == "done" and report["error"] is None
    assert (out / "labels.csv").read_text() == labels_alone(scenario)
    assert leftovers(out) == []


def test_coordinator_stopped_by_sigterm_tells_the_waiting_parties(tmp_path, roles):
    scenario = wine_scenario(tmp_path, "stopped")
    creds, out = credentials(tmp_path, scenario, "creds"), tmp_path / "out"
    port = roles.coordinator("coordinator", "127.0.0.1:0", "--scenario", scenario, "--credentials", creds,
                             "--out", out)
    address = f"127.0.0.1:{port}"
    status = Status(address, "stopped", creds / "parties" / "a")
    try:
        a = roles.party("a", address, scenario, "a", creds)
        status.wait_for("a to join", lambda s: s["a"].joined, 60, alive=[a])  # it waits for b's key
    finally:
        status.close()
    roles.procs["coordinator"].send_signal(signal.SIGTERM)
    assert roles.wait("coordinator", 30) == 1, roles.log("coordinator")
    assert roles.wait("a", 30) == 1, roles.log("a")
    failed = "session 'stopped' failed: the coordinator was stopped (SIGTERM) before the session ended"
    assert roles.lines("a")[-1] == f"ppc party a: error: {failed}"
    assert roles.lines("coordinator")[-1] == f"ppc coordinator: error: {failed}"
    report = read_report(out)
    assert report["state"] == "failed" and [p["rows"] for p in report["parties"]] == [None, None]
    assert leftovers(out) == []


# -- outputs are whole or absent ----------------------------------------------------------------------------


def test_failed_run_leaves_a_whole_report_and_no_temporary_files(tmp_path):
    scenario, out = wine_scenario(tmp_path, "broken"), tmp_path / "out"
    proc = subprocess.Popen(ppc_cmd("run", scenario, "--out", out, "--quiet"), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    stderr = kill_a_party(proc, "b", TIMEOUT)
    assert proc.returncode == 1 and "Traceback" not in stderr
    assert "party 'b' was killed by signal 9" in stderr
    report = json.loads((out / "report.json").read_text())  # whole: it parses
    assert report["state"] == "failed" and report["error"].startswith("party 'b' was killed by signal 9")
    assert leftovers(out) == []
    assert not (out / "labels.csv").exists()
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["a.log", "b.log"]


def test_write_atomic_keeps_the_old_file_when_the_write_fails(tmp_path):
    target = tmp_path / "report.json"
    target.write_bytes(b'{"old": true}')

    def half_then_full_disk(fh):
        fh.write(b'{"new": ')
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, half_then_full_disk)
    assert target.read_bytes() == b'{"old": true}'
    assert sorted(tmp_path.iterdir()) == [target]

    fresh = tmp_path / "labels.csv"
    with pytest.raises(KeyboardInterrupt):  # interrupted half-way: nothing appears
        write_atomic(fresh, lambda fh: (fh.write(b"id,cluster\n1,"), (_ for _ in ()).throw(KeyboardInterrupt())))
    assert not fresh.exists() and sorted(tmp_path.iterdir()) == [target]


def test_write_atomic_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "labels.csv"
    target.write_bytes(b"id,cluster\n")

    def no_rename(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(PermissionError):
        write_atomic(target, b"id,cluster\n1,0\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"id,cluster\n"
    assert sorted(tmp_path.iterdir()) == [target]


def test_write_atomic_killed_mid_write_leaves_the_old_file_whole(tmp_path):
    """SIGKILL runs no clean-up: the target keeps its old content; only a '.'-named temporary
    file is left beside it, which no reader of the run directory takes for an output."""
    target = tmp_path / "report.json"
    target.write_bytes(b'{"old": true}')
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\nfrom ppcsim.report.outputs import write_atomic\n"
         "def slow(fh):\n    fh.write(b'{\"new\": '); fh.flush(); print('writing', flush=True); time.sleep(60)\n"
         f"write_atomic(Path({str(target)!r}), slow)\n"],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        assert writer.stdout.readline().strip() == "writing"
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert target.read_bytes() == b'{"old": true}'
    left = [p for p in tmp_path.iterdir() if p != target]
    assert len(left) == 1 and left[0].name.startswith(".report.json.") and left[0].read_bytes() == b'{"new": '
