"""protocol = "mpc": k-means on MPyC secret shares, every party-to-party byte relayed through the coordinator."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from conftest import by_hand, read_report, run_ppc, write_scenario
from parties.errors import PartyError
from parties.keys import KeyPair
from parties.mpc import LABEL, PairCipher, associated, nonce
from ppcsim.scenario import ScenarioError, load_scenario

pytest.importorskip("mpyc")

BLOBS = """\
name = "blobs-mpc"
seed = 5
deadline = 240
[data]
source = "synthetic:blobs"
rows = 45
columns = 6
clusters = 3
label_column = "target"
[[parties]]
name = "a"
columns = ["x0", "x1"]
[[parties]]
name = "b"
columns = ["x2", "x3"]
[[parties]]
name = "c"
columns = ["x4", "x5"]
[clustering]
algorithm = "kmeans"
protocol = "mpc"
n_clusters = 3
max_iter = 3
"""

TWO = BLOBS.replace('[[parties]]\nname = "c"\ncolumns = ["x4", "x5"]\n', "").replace(
    'columns = ["x2", "x3"]', 'columns = ["x2", "x3", "x4", "x5"]')


# -- the tunnel's encryption ------------------------------------------------------------------------

def _pair(session="s"):
    a, b = KeyPair.generate(1), KeyPair.generate(2)
    return (PairCipher(a, b.public, session, "a", "b", True), PairCipher(b, a.public, session, "b", "a", False), a, b)


def test_frames_are_aes_gcm_under_the_documented_key_nonce_and_associated_data():
    ab, ba, a, b = _pair()
    message = ab.seal(b"shares")
    key = a.pair_secret(b.public, LABEL, "s", "a", "b")
    # the documented construction, computed independently: direction 0 (a -> b), frame 0
    assert message.frame.data == AESGCM(key).encrypt(bytes(4) + bytes(8), b"shares",
                                                     b"ppcsim.v1 mpc tunnel\x00s\x00a\x00b")
    assert nonce(1, 2) == b"\x00\x00\x00\x01" + (2).to_bytes(8, "big")
    assert associated("s", "b", "a") == b"ppcsim.v1 mpc tunnel\x00s\x00b\x00a"
    assert ba.open(message.frame) == b"shares"
    back = ba.seal(b"reply")  # the other direction: nonce prefix 1, its own counter
    assert back.frame.seq == 0 and back.frame.data == AESGCM(key).encrypt(
        b"\x00\x00\x00\x01" + bytes(8), b"reply", b"ppcsim.v1 mpc tunnel\x00s\x00b\x00a")
    assert ab.open(back.frame) == b"reply"


def test_a_frame_dropped_repeated_or_altered_is_refused():
    ab, ba, _, _ = _pair()
    first, second = ab.seal(b"one"), ab.seal(b"two")
    with pytest.raises(PartyError, match="frame 1 from 'a' where frame 0 was due"):
        ba.open(second.frame)
    assert ba.open(first.frame) == b"one"
    with pytest.raises(PartyError, match="frame 0 from 'a' where frame 1 was due"):
        ba.open(first.frame)  # replayed
    second.frame.data = bytes([second.frame.data[0] ^ 1]) + second.frame.data[1:]
    with pytest.raises(PartyError, match="does not open"):
        ba.open(second.frame)
    other = _pair("another session")[0].seal(b"two")  # same keys' owners, another session: another key
    other.frame.seq = 1
    with pytest.raises(PartyError, match="does not open"):
        ba.open(other.frame)


# -- the scenario's checks --------------------------------------------------------------------------

def test_the_loader_refuses_what_an_mpc_session_cannot_run(tmp_path):
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, TWO))
    assert "threshold t = 0" in str(err.value) and "helper = true" in str(err.value)
    bad = BLOBS.replace("max_iter = 3", "max_iter = 300\ninit = \"k-means++\"\ntol = 0.1\nmpc_frac = 20")
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, bad))
    text = str(err.value)
    assert "'max_iter' must be at most 100" in text and "'init' must be \"random\"" in text
    assert "remove 'tol'" in text and "'mpc_frac' (20) must be at most half of 'mpc_bits' (32)" in text
    with pytest.raises(ScenarioError, match="'helper = true' adds a third share-holder to two parties"):
        load_scenario(write_scenario(tmp_path, BLOBS + "helper = true\n"))
    with pytest.raises(ScenarioError, match="apply to protocol = \"mpc\" only"):
        load_scenario(write_scenario(tmp_path, BLOBS.replace('protocol = "mpc"', 'protocol = "secure_aggregation"')
                                     .replace("max_iter = 3", "max_iter = 3\nreveal_centres = true")))
    with pytest.raises(ScenarioError, match="remove 'method'"):
        load_scenario(write_scenario(tmp_path, BLOBS.replace('name = "b"\n', 'name = "b"\nmethod = "drbt"\n')))


# -- real processes ---------------------------------------------------------------------------------

def test_ppc_run_three_parties_gives_plain_lloyds_labels_and_counts_every_relayed_byte(tmp_path):
    path = write_scenario(tmp_path, BLOBS + "reveal_centres = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", "--html", timeout=300)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["state"] == "done"
    u = report["utility"]
    assert u["labels_equal_same_init"] and u["reference"].endswith("max_iter = 3)")
    assert u["centres_max_abs_error"] < 2.0**-8  # SecFxp(32, 16): a few units of 2^-16 after three divisions
    mpc = report["mpc"]
    assert mpc["parties"] == ["a", "b", "c"] and mpc["threshold"] == 1 and mpc["helper"] is None
    # every byte of the MPC is in the ledger: its Relay entries add up to the per-party and per-link counts
    relay = [e for e in report["communication"]["ledger"] if e["rpc"] == "Relay"]
    for name, party in mpc["by_party"].items():
        assert party["up"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "up"
                                  and e["payload"] > 0) - _result_bytes(report, name)
        assert party["down"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "down")
        assert party["up"] == sum(link["bytes"] for link in mpc["links"] if link["sender"] == name)
        assert party["up"] - party["plaintext_up"] == 16 * party["frames_up"]
        assert party["up"] > 100_000  # MPyC's traffic: far beyond the labels
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        (s, r) for s in "abc" for r in "abc" if s != r}
    delivered = sum(p["down"] for p in mpc["by_party"].values())
    sent = sum(p["up"] for p in mpc["by_party"].values())
    assert delivered == sent - 16 * report["mpc"]["dropped_frames"]  # only closing frames (tags alone) dropped
    # the rounds each party marked: the input sharing (-1), then rounds 0..3
    assert [r["round"] for r in mpc["per_round"]] == [-1, 0, 1, 2, 3]
    assert sum(sum(r["up"].values()) for r in mpc["per_round"]) == sent
    # MPyC messages in sequence per round, counted by the parties' tunnels (measured 66, 76, 76 and 27 once): tens
    # per round with an update (secure comparisons, then a division), fewer in the last round (no update)
    seq = {r["round"]: r["sequential"] for r in mpc["per_round"]}
    assert all(seq[r] > 20 for r in (0, 1, 2)) and 0 < seq[3] < min(seq[1], seq[2]), seq
    # what each role learned; the coordinator's part of the report holds no share
    assert set(report["privacy"]["roles"]) == {"coordinator", "each party"}
    assert "honest majority" in report["privacy"]["assumption"]
    assert any("cannot compute" in line for line in report["security"]["coordinator_learns"])
    assert "<h2>Secure multiparty computation</h2>" in (tmp_path / "out" / "report.html").read_text()
    assert "mpc: 3 share-holders" in done.stderr


def _result_bytes(report, name):
    """The RelayResult's payload: the labels (int32) and the centres (k x d float64) it opened."""
    m = report["join"]["rows_joined"]
    k, d = report["clustering"]["n_clusters"], 6
    return 4 * m + (8 * k * d if report["clustering"]["reveal_centres"] else 0)


def test_labels_of_the_mpc_equal_plain_lloyds_in_numpy(tmp_path):
    """The MPC's labels against a numpy Lloyd's from the same records (no scikit-learn), on the run's data."""
    path = write_scenario(tmp_path, BLOBS.replace("seed = 5", "seed = 11"))
    done = run_ppc("run", path, "--out", tmp_path / "out", timeout=300)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    scenario = load_scenario(path)
    from parties.run import disguise
    from ppcsim.evaluate.secure import joined_data

    own = {cfg.name: disguise(cfg) for cfg in scenario.parties}

    class Outcome:  # the join as the report gives it: every record, the generator's order
        class join:  # noqa: N801
            index = {p.name: np.arange(45) for p in scenario.parties}

    X = joined_data(scenario, Outcome, own)
    C = X[report["mpc"]["init"]]
    for _ in range(3):
        labels = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
        C = np.array([X[labels == j].mean(axis=0) if np.any(labels == j) else C[j] for j in range(3)])
    labels = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
    got = np.loadtxt(tmp_path / "out" / "labels.csv", delimiter=",", skiprows=1, dtype=str)
    ids = [str(i) for i in own["a"].data.ids]
    by_id = dict(zip(got[:, 0], got[:, 1].astype(int)))
    assert [by_id[i] for i in ids] == labels.tolist()


def test_two_parties_with_the_coordinators_helper_as_third_share_holder(tmp_path):
    path = write_scenario(tmp_path, TWO + "helper = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", timeout=300)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["utility"]["labels_equal_same_init"]
    mpc = report["mpc"]
    assert mpc["parties"] == ["a", "b", "helper"] and mpc["threshold"] == 1 and mpc["helper"] == "helper"
    # the helper's links are relayed, sealed and counted like the parties'
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        ("a", "b"), ("b", "a"), ("a", "helper"), ("helper", "a"), ("b", "helper"), ("helper", "b")}
    assert mpc["by_party"]["helper"]["up"] > 0
    assert "helper" in report["privacy"]["roles"] and "must not collude" in report["privacy"]["assumption"]
    assert [p["name"] for p in report["parties"]] == ["a", "b"]  # the helper holds no data: not a party


def test_roles_by_hand_over_mutual_tls_two_parties_and_the_coordinators_helper(tmp_path):
    path = write_scenario(tmp_path, TWO + "helper = true\n[security]\nmutual = true\n")
    errors = by_hand(path, tmp_path, ["a", "b"], timeout=240)
    assert all("Lloyd rounds as an MPC over 3 parties" in err for err in errors.values())
    out = tmp_path / "out"
    report = read_report(out)
    assert report["state"] == "done" and report["mpc"]["helper"] == "helper"
    assert report["mpc"]["by_party"]["helper"]["up"] > 0
    assert all(p["transport"] == "mutual TLS" for p in report["security"]["parties"].values())
    a = (tmp_path / "a.csv").read_text().splitlines()
    assert a[0] == "id,cluster" and len(a) == 46 and a == (tmp_path / "b.csv").read_text().splitlines()
    # the coordinator's files hold no share: an MPC session leaves it the report and the labels, nothing sent
    assert sorted(f.name for f in out.iterdir()) == ["labels.csv", "report.json"]
    assert not any(key in report for key in ("observer", "utility", "privacy"))


def test_bundled_wine_scenario_runs_through_ppc_run(tmp_path):
    done = run_ppc("run", Path(__file__).resolve().parent.parent / "scenarios" / "wine-mpc.toml", "--out",
                   tmp_path / "out", "--no-attacks", timeout=400)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["utility"]["labels_equal_same_init"] and report["join"]["rows_joined"] == 178
    assert report["mpc"]["rounds"] == 5 and [r["round"] for r in report["mpc"]["per_round"]] == list(range(-1, 6))


def test_the_mpc_program_never_outlives_the_party_that_started_it(tmp_path):
    """Its peer never comes, so it would wait for ever; closing its standard input (the party process gone)
    ends it."""
    from parties.mpc import free_port

    data = tmp_path / "in.npz"
    np.savez(data, X=np.zeros((3, 1)), columns=[1, 1, 1], init=[0, 1], k=2, rounds=1, bits=32, frac=16, m=3,
             reveal_centres=False)
    program = subprocess.Popen(
        [sys.executable, "-m", "parties.mpc_kmeans", "--data", str(data), "--result", str(tmp_path / "out.npz"),
         "-P", ":1", "-P", f"127.0.0.1:{free_port()}", "-P", f"127.0.0.1:{free_port()}", "-I", "0", "--no-log",
         "--watch-stdin"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2.0)
        assert program.poll() is None  # still waiting for its peers
        program.stdin.close()
        assert program.wait(timeout=20) == 3
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()


def test_an_in_process_simulation_of_an_mpc_is_refused_with_what_to_do(tmp_path):
    import ppcsim

    with pytest.raises(ValueError, match="processes=True"):
        ppcsim.simulate(write_scenario(tmp_path, BLOBS))


# -- the relay on the asynchronous server, without MPyC -----------------------------------------------

def _relay_coordinator(parties=("a", "b", "c"), **limits):
    """A coordinator whose MPC session has its ids joined (a stand-in for the rounds: the relay needs its hub)."""
    import types

    from coordinator.clustering import ClusteringSpec
    from coordinator.limits import Limits
    from coordinator.mpc import Hub
    from coordinator.server import start_server
    from coordinator.servicer import Registry
    from coordinator.session import CLUSTERING, SessionSpec

    registry = Registry()
    session = registry.create(SessionSpec(name="r", parties=parties, ids="plain", deadline=60,
                                          memory=limits.pop("memory", 0),
                                          clustering=ClusteringSpec(protocol="mpc", n_clusters=2, max_iter=1)))
    session.arbiter = types.SimpleNamespace(hub=Hub(session, list(parties)), m=4, k=2, spec=session.spec.clustering,
                                            outcome=lambda labels, description: ("outcome", labels.tolist()))
    session.state = CLUSTERING
    server, port = start_server("127.0.0.1:0", registry, limits=Limits(**limits))
    return session, server, port


class _Party:
    """One party's Relay call: ``send`` puts a message on its stream, ``close`` ends it; ``got`` what it read."""

    def __init__(self, stub, name: str, session: str = "r"):
        import queue
        import threading

        import grpc

        self.name, self.out, self.got, self.error = name, queue.Queue(), [], None
        self.out.put(_relay_message(open=(session, name)))

        def requests():
            while (message := self.out.get()) is not None:
                yield message

        self.call = stub.Relay(requests(), timeout=30)

        def read():
            try:
                for message in self.call:
                    self.got.append(message)
            except grpc.RpcError as exc:
                self.error = exc
        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()

    def send(self, **part):
        self.out.put(_relay_message(**part))

    def close(self):
        self.out.put(None)

    def wait(self, timeout=20):
        self.reader.join(timeout)
        assert not self.reader.is_alive(), f"{self.name}'s Relay did not end"


def _relay_message(open=None, frame=None, result=None):  # noqa: A002 - the oneof's name
    from protos.ppcsim.v1 import session_pb2

    if open is not None:
        return session_pb2.RelayMessage(open=session_pb2.RelayOpen(session=open[0], party=open[1]))
    if frame is not None:
        return session_pb2.RelayMessage(frame=session_pb2.RelayFrame(peer=frame[0], seq=frame[1], data=frame[2]))
    return session_pb2.RelayMessage(result=session_pb2.RelayResult(labels=np.asarray(result, "<i4").tobytes()))


def _stub(port):
    import grpc

    from protos.ppcsim.v1 import session_pb2_grpc

    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    return channel, session_pb2_grpc.CoordinatorStub(channel)


def test_the_relay_forwards_frames_as_coroutines_holding_no_stream_thread():
    """Frames for a party not yet connected wait for it; each arrives named by its authenticated sender; the
    parties' agreeing labels become the result; no stream thread was taken, waiting or forwarding."""
    from coordinator.session import DONE

    session, server, port = _relay_coordinator()
    channel, stub = _stub(port)
    try:
        a, b = _Party(stub, "a"), _Party(stub, "b")
        a.send(frame=("c", 0, b"\x01" * 40))  # c has not opened its stream: held for it
        a.send(frame=("b", 0, b"\x02" * 20))
        time.sleep(1.0)
        c = _Party(stub, "c")
        c.send(frame=("a", 0, b"\x03" * 16))
        deadline = time.monotonic() + 20
        while not (a.got and b.got and c.got) and time.monotonic() < deadline:
            time.sleep(0.05)  # a party that ends its stream is sent nothing more: let every frame arrive first
        for p in (a, b, c):
            p.send(result=[0, 1, 1, 0])
            p.close()
        for p in (a, b, c):
            p.wait()
        assert [(m.frame.peer, m.frame.data) for m in c.got] == [("a", b"\x01" * 40)]
        assert [(m.frame.peer, m.frame.data) for m in b.got] == [("a", b"\x02" * 20)]
        assert [(m.frame.peer, m.frame.data) for m in a.got] == [("c", b"\x03" * 16)]
        assert all(p.error is None for p in (a, b, c)), [p.error for p in (a, b, c)]
        assert session.state == DONE and session.outcome == ("outcome", [0, 1, 1, 0])
        hub = session.arbiter.hub
        assert hub.links[("a", "c")].bytes == 40 and hub.held == 0
        assert not server.servicer.pool._threads  # the relay never took one of the stream threads
        relayed = [e for e in session.ledger.entries() if e.rpc == "Relay"]
        assert sum(e.payload for e in relayed if e.direction == "down") == 76
    finally:
        channel.close()
        server.stop(None).wait(10)


def test_a_relay_quiet_only_before_every_stream_is_open_is_not_idle_but_after_it_is_cut_naming_the_party():
    import grpc

    session, server, port = _relay_coordinator(idle_seconds=1.5)
    channel, stub = _stub(port)
    try:
        a, b = _Party(stub, "a"), _Party(stub, "b")
        time.sleep(2.5)  # past the idle limit, but c has not opened: a and b wait for their peer
        assert a.error is None and b.error is None and session.error == ""
        c = _Party(stub, "c")
        for seq in range(12):  # a and b talk; c neither sends nor is sent anything
            a.send(frame=("b", seq, b"\x00" * 16))
            b.send(frame=("a", seq, b"\x00" * 16))
            time.sleep(0.25)
            if c.error is not None:
                break
        c.wait()
        assert c.error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert c.error.details() == "party 'c': no Relay message to or from it for 1.5 s after message 1 " \
                                    "(the idle limit)"
        a.wait()
        b.wait()
        assert a.error.code() == grpc.StatusCode.FAILED_PRECONDITION and "party 'c': no Relay message" in \
            a.error.details()
        assert session.error.startswith("party 'c': no Relay message")
    finally:
        for p in ("a", "b", "c"):
            party = locals().get(p)
            if party is not None:
                party.close()
        channel.close()
        server.stop(None).wait(10)


def test_relay_refusals_name_the_party_and_frames_held_for_a_party_count_against_the_budget():
    import grpc

    session, server, port = _relay_coordinator(memory=1 << 20)
    channel, stub = _stub(port)
    try:
        with pytest.raises(grpc.RpcError) as err:  # the stream must open
            list(stub.Relay(iter([_relay_message(frame=("b", 0, bytes(16)))]), timeout=10))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "RelayOpen" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:  # only the coordinator runs a helper
            list(stub.Relay(iter([_relay_message(open=("r", "helper"))]), timeout=10))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and "'helper'" in err.value.details()
        a = _Party(stub, "a")
        time.sleep(0.5)
        second = _Party(stub, "a")
        second.wait()
        assert second.error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert second.error.details() == "party 'a': a second Relay stream; one per party per session"
        for seq in range(20):  # c never opens: 2 MB held for it would pass the session's 1 MiB
            a.send(frame=("c", seq, bytes(100_000)))
        a.wait()
        assert a.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert a.error.details().startswith("party 'a': frames relayed to 'c' and not yet delivered: ")
        assert "session 'r''s memory budget of 1 MiB" in a.error.details()
        assert session.error.startswith("party 'a': frames relayed to 'c'")
        assert session.arbiter.hub.held == 0 and session.budget.used < 1 << 20  # given back with the session
    finally:
        channel.close()
        server.stop(None).wait(10)
