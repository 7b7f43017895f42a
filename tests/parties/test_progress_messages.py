"""``ppc party`` says what it waits for every few seconds, and nothing with ``--quiet``.

Real processes over loopback: a party with no coordinator to reach, and a
party in a three-party session whose third party never comes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import GRPC_LOG, NO_TLS, WINE, free_port, party_table, run_ppc, scenario_toml, write_scenario

SCENARIO = scenario_toml("waiting", [party_table("a", WINE[:2]), party_table("b", ["hue"]), party_table("c", ["ash"])],
                         security=NO_TLS)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not GRPC_LOG.match(line)]


def test_a_party_with_no_coordinator_says_so_every_few_seconds_and_nothing_when_quiet(tmp_path):
    path = write_scenario(tmp_path, SCENARIO)
    port = free_port()
    args = ("party", "--coordinator", f"127.0.0.1:{port}", "--scenario", path, "--party", "a", "--timeout", "4")
    proc = run_ppc(*args, "--progress", "1", timeout=60)
    said = [line for line in lines(proc.stderr) if "unreachable" in line]
    assert proc.returncode != 0
    assert len(said) >= 2, proc.stderr
    assert said[0].startswith(f"party a: coordinator unreachable at 127.0.0.1:{port}, retrying (1 s so far, ")
    assert "--timeout of 4 s ran out while joining" in proc.stderr

    # quiet: nothing but the error, whenever its timeout runs out (2 s: no line to wait for)
    quiet = run_ppc(*args[:-1], "2", "--progress", "1", "--quiet", timeout=60)
    assert quiet.returncode != 0
    assert [line for line in lines(quiet.stderr) if not line.startswith("ppc party: error: ")] == []


def test_a_joined_party_says_how_many_parties_are_present_and_who_is_missing(tmp_path):
    path = write_scenario(tmp_path, SCENARIO)
    port_file = tmp_path / "port"
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "ppcsim", "coordinator", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
         "--scenario", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        while not (port_file.exists() and port_file.read_text().strip()) and time.monotonic() - t0 < 30:
            time.sleep(0.1)
        address = f"127.0.0.1:{port_file.read_text().strip()}"

        def party(name: str, *extra: str) -> subprocess.Popen:
            return subprocess.Popen(
                [sys.executable, "-m", "ppcsim", "party", "--coordinator", address, "--scenario", str(path),
                 "--party", name, "--timeout", "8", *extra],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)

        a, b = party("a", "--progress", "1"), party("b", "--progress", "0")
        _, a_err = a.communicate(timeout=60)
        b.communicate(timeout=60)
    finally:
        coordinator.kill()
        coordinator.wait(timeout=30)
    said = [line for line in lines(a_err) if "present" in line]
    assert said, a_err
    assert said[-1].startswith("party a: joined session 'waiting'; 2 of 3 parties present (waiting for c) (")
    assert "ran out while agreeing the pseudonym key" in a_err


def test_ppc_run_turns_its_parties_lines_off():
    from ppcsim.run.launcher import party_argv

    argv = party_argv("s.toml", "a", "s", 60.0, "127.0.0.1:1", Path("x.json"), Path("x.csv"), None)
    assert argv[argv.index("--progress") + 1] == "0"


def test_each_wait_is_described_from_the_channel_and_the_coordinator_s_status():
    import grpc

    from parties.client import CoordinatorClient
    from parties.progress import Progress
    from protos.ppcsim.v1 import session_pb2

    status = session_pb2.StatusReply(state=session_pb2.WAITING, parties=[
        session_pb2.PartyStatus(party="a", joined=True, uploaded=True),
        session_pb2.PartyStatus(party="b", joined=True, uploaded=False),
        session_pb2.PartyStatus(party="c", joined=False, uploaded=False)])

    class Stub:
        def GetStatus(self, request, timeout, metadata):  # noqa: N802 - the gRPC method's name
            assert request.session == "s"
            return status

    class Client:  # the real client's GetStatus call and decoding, over the stub above
        stub, metadata, session = Stub(), None, "s"
        status = CoordinatorClient.status

    watch = Progress("a", "10.0.0.1:50051", Client(), "s", log=None, every=5.0, left=lambda: 90.4)
    watch.connectivity = grpc.ChannelConnectivity.TRANSIENT_FAILURE
    assert watch.describe("join", 12.2) == "coordinator unreachable at 10.0.0.1:50051, retrying (12 s so far, 90 s left)"
    assert watch.describe("peers", 5) == ("joined session 's'; 2 of 3 parties present (waiting for c) "
                                          "(5 s so far, 90 s left)")
    assert watch.describe("result", 5) == ("uploaded; 1 of 3 parties' uploads in (waiting for b, c) "
                                           "(5 s so far, 90 s left)")
    status.state = session_pb2.CLUSTERING
    assert watch.describe("result", 5).startswith("all 3 uploads in; the coordinator is clustering")
    text = "secure aggregation: waiting for the labels of round 4"
    assert watch.describe(text, 6) == f"{text} (6 s so far, 90 s left)"
