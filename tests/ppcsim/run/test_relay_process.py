"""The relays of a ``ppc run`` in a process of their own: the same counts as the in-process Relay, none of their
threads in the launcher (the coordinator's process), and never an orphan process, even when the run fails."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time

import pytest
from test_counting_relay import echo_server

from conftest import IRIS_DRBT_OSBR, children, ppc_cmd, read_report, scenario_toml, write_scenario
from ppcsim.errors import RunError
from ppcsim.run.relay import Link, Relay, RelayProcess

pytestmark = pytest.mark.processes


def gone(pid: int) -> bool:
    """Whether no process (not even a zombie) has this pid."""
    return not os.path.exists(f"/proc/{pid}")


def relay_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("relay")]


@pytest.mark.parametrize("link", [Link(), Link(bandwidth_mbit=400, latency_ms=2)], ids=["spliced", "shaped"])
def test_counts_every_byte_once_each_way_in_a_child_process(link):
    size = 3_000_017
    group = RelayProcess(f"127.0.0.1:{echo_server(size)}", {"a": link}).start()
    relay = group.relays["a"]
    assert group.pid != os.getpid() and not gone(group.pid) and relay.link == link
    with socket.create_connection(("127.0.0.1", relay.port), timeout=30) as s:
        s.sendall(b"x" * size)
        assert s.recv(2) == b"ok"
        assert relay_threads() == []  # the pumps run in the child, not here
    time.sleep(0.1)
    group.stop()
    assert (relay.counts.up.bytes, relay.counts.down.bytes, relay.counts.connections) == (size, 2, 1)
    assert group.error is None and group.proc.returncode == 0 and gone(group.pid)


def test_each_party_gets_its_own_relay_and_counts():
    sizes = {"a": 100_003, "b": 7}
    group = RelayProcess(f"127.0.0.1:{echo_server(sizes['a'])}", {"a": Link(), "b": Link()}).start()
    assert group.relays["a"].port != group.relays["b"].port
    with socket.create_connection(("127.0.0.1", group.relays["a"].port), timeout=30) as s:
        s.sendall(b"x" * sizes["a"])
        assert s.recv(2) == b"ok"
    time.sleep(0.1)
    group.stop()
    group.stop()  # once is enough; again is harmless
    assert (group.relays["a"].counts.up.bytes, group.relays["a"].counts.connections) == (sizes["a"], 1)
    assert (group.relays["b"].counts.up.bytes, group.relays["b"].counts.connections) == (0, 0)


def test_the_child_exits_by_itself_when_the_launcher_is_gone():
    group = RelayProcess("127.0.0.1:1", {"a": Link()}).start()
    group.proc.stdin.close()  # what the launcher's death does to the child's standard input
    assert group.proc.wait(timeout=30) == 0
    group.stop()


def test_a_child_that_cannot_listen_fails_the_start_naming_the_relay_process():
    group = RelayProcess("127.0.0.1:1", {"a": Link()}, host="203.0.113.1")  # TEST-NET-3: no address of this host
    with pytest.raises(RunError, match=r"^the relay process \(pid \d+\) exited with code 1 before its relays "
                                       r"listened: relay process: cannot listen on 203\.0\.113\.1"):
        group.start()
    assert gone(group.pid)


def test_a_dead_child_is_reported_and_its_counts_not_invented():
    group = RelayProcess("127.0.0.1:1", {"a": Link()}).start()
    assert group.check() is None
    os.kill(group.pid, signal.SIGKILL)
    group.proc.wait(timeout=30)
    assert group.check() == f"the relay process (pid {group.pid}) was killed by signal 9 while the parties were " \
                            "connected through it"
    group.stop()
    assert group.error == f"the relay process (pid {group.pid}) was killed by signal 9 before the run ended"
    assert group.relays["a"].counts.connections == 0 and gone(group.pid)


IRIS_RUN = scenario_toml("relayed", IRIS_DRBT_OSBR, data="sklearn:iris",
                         clustering={"algorithm": "agglomerative", "n_clusters": 3})


def test_a_run_relays_in_a_process_other_than_the_coordinators(tmp_path, monkeypatch):
    """In-process run_scenario: no Relay starts in this (the coordinator's) process, the relay process is another
    pid, its counts reach the report, and it is gone when the run returns."""
    from ppcsim.run import launcher
    from ppcsim.scenario.load import load_scenario

    def refuse(self):
        raise AssertionError("a relay started in the coordinator's process")

    monkeypatch.setattr(Relay, "start", refuse)
    started: list[RelayProcess] = []

    class Recorded(RelayProcess):
        def start(self):
            started.append(self)
            return super().start()

    monkeypatch.setattr(launcher, "RelayProcess", Recorded)
    scenario = load_scenario(write_scenario(tmp_path, IRIS_RUN))
    with open(os.devnull, "w") as log:
        report = launcher.run_scenario(scenario, tmp_path / "out", log=log, settings=None)
    (group,) = started
    assert group.pid != os.getpid() and group.proc.returncode == 0 and gone(group.pid)
    assert relay_threads() == []
    for party in report["parties"]:
        relay = group.relays[party["name"]]
        assert party["bytes"]["wire"] == relay.counts.up.bytes > party["bytes"]["serialized"]
        assert party["bytes"]["wire_down"] == relay.counts.down.bytes > 0
        assert party["network"]["connections"] == relay.counts.connections >= 1


def test_a_run_whose_relay_process_dies_fails_naming_it_and_leaves_no_process(tmp_path):
    path = write_scenario(tmp_path, IRIS_RUN)
    proc = subprocess.Popen(ppc_cmd("run", path, "--out", tmp_path / "out", "--no-attacks"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end, victim, parties = time.monotonic() + 60, None, []
        while not parties and proc.poll() is None and time.monotonic() < end:  # parties start once relays listen
            started = children(proc.pid)
            victim = next((pid for pid, argv in started if "ppcsim.run.relay" in argv), None)
            parties = [pid for pid, argv in started if "party" in argv]
            time.sleep(0.01)
        assert victim is not None and victim != proc.pid and parties, "the relay process or a party never appeared"
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1 and "Traceback" not in stderr
    assert f"the relay process (pid {victim}) was killed by signal 9" in stderr
    assert read_report(tmp_path / "out")["error"].startswith(f"the relay process (pid {victim}) was killed")
    assert gone(victim) and all(gone(pid) for pid in parties)


def exited(pid: int) -> bool:
    """Whether process ``pid`` has ended: gone, or a zombie waiting for whichever process adopted it."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_the_relay_process_ends_when_the_launcher_is_killed(tmp_path):
    path = write_scenario(tmp_path, IRIS_RUN)
    proc = subprocess.Popen(ppc_cmd("run", path, "--out", tmp_path / "out", "--no-attacks"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    relay, parties = None, []
    try:
        end = time.monotonic() + 60
        while not parties and proc.poll() is None and time.monotonic() < end:  # parties start once relays listen
            started = children(proc.pid)
            relay = next((pid for pid, argv in started if "ppcsim.run.relay" in argv), None)
            parties = [pid for pid, argv in started if "party" in argv]
            time.sleep(0.01)
        assert relay is not None and parties, "the relay process or a party never appeared"
        proc.kill()  # no finally of the launcher runs: the relay process sees its standard input end
        proc.wait(timeout=30)
        end = time.monotonic() + 30
        while not exited(relay) and time.monotonic() < end:
            time.sleep(0.05)
        assert exited(relay)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in parties:  # orphans now: a party retries its lost coordinator until its timeout
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
