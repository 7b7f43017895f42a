"""A coordinator that lies, against real ``ppc party`` processes: every lie is refused before it pays.

The coordinator here is the real one with one handler replaced by a liar
(the alignment, the labels or the key relay), serving real party processes
over loopback. Each lie about the alignment must be refused by every party
before any party posts round 0 (the coordinator's ledger then holds no
PostDistances), with a one-line message and no traceback. What an active
coordinator can still do is shown by the attack that does it
(docs/secure-aggregation.md, "Against an active coordinator").
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import NO_TLS, blobs, kmeans, lying_alignment, party_processes, scenario_toml, split_x, write_scenario
from coordinator import handlers
from coordinator.errors import FailedPrecondition, InvalidArgument
from coordinator.protocols import secagg
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.wire.serde import int32_chunks
from parties.errors import PartyError
from parties.keys import KeyPair
from parties.secagg import FIELDS, Link, check_alignment, confirm_alignment, confirmed_fields
from ppcsim.scenario.load import load_scenario
from protos.ppcsim.v1 import session_pb2

SCENARIO = scenario_toml("lied-to", split_x(2, 2), seed=3, deadline=60, data=blobs(80, 4, 3),
                         clustering=kmeans(3, "secure_aggregation", reveal="distances"), security=NO_TLS)
#: Seconds a party process may take, start-up included (far more than a refusal needs).
PARTY_SECONDS = 90


def run_parties(tmp_path, monkeypatch, handler: str | None, replacement, *extra: str,
                mutual: bool = False, until=None) -> tuple[dict, object]:
    """Serve the scenario with ``coordinator.handlers.<handler>`` replaced (None: the honest coordinator); run both
    parties as ``ppc party`` (``extra``: more options for each, ``{name}`` standing for the party's name).
    ``mutual``: over mutual TLS with tokens, credentials from ``ppc credentials`` in ``tmp_path/creds``.
    ``until``: the parties whose exit ends the run (see ``conftest.party_processes``).

    Returns each party's (exit code, standard error) and the session.
    """
    from coordinator.security import ServerSecurity, load_server_security, load_token_digests
    from ppcsim.run.credentials import make_credentials

    path = write_scenario(tmp_path, SCENARIO.replace("tls = false\ntokens = false", "mutual = true") if mutual
                          else SCENARIO)
    if handler is not None:
        monkeypatch.setattr(handlers, handler, replacement)
    registry = Registry()
    security, tokens = ServerSecurity(), None
    if mutual:
        creds = make_credentials(tmp_path / "creds", "lied-to", ["a", "b"])
        security, tokens = load_server_security(creds, tls=True, mutual=True), load_token_digests(creds, "lied-to")
        extra += ("--credentials", str(creds / "parties" / "{name}"))
    session = registry.create(load_scenario(path).session_spec(tokens))
    server, port = start_server("127.0.0.1:0", registry, security=security)
    try:
        out = party_processes(port, path, ("a", "b"), 5, extra, timeout=PARTY_SECONDS, until=until)
    finally:
        server.stop(0)
        session.fail("test over")
    return out, session


def posts(session) -> list[str]:
    """The parties that posted anything (PostDistances) to the coordinator."""
    return sorted({e.party for e in session.ledger.entries() if e.rpc == "PostDistances"})


def assert_refused_before_round_0(out: dict, session, victim_says: str) -> None:
    for name, (code, err) in out.items():
        assert code != 0, f"party {name} went on:\n{err}"
        assert "Traceback" not in err, err
    assert victim_says in out["b"][1], out["b"][1]
    assert posts(session) == []  # nobody posted a partial distance: nothing to unmask


def repeat_one_row(header, positions):
    return np.full_like(positions, positions[0])


def duplicate(header, positions):
    positions[1] = positions[0]
    return positions


def past_the_end(header, positions):
    positions[-1] = header.n_rows  # one past this party's last row: an IndexError once
    return positions


def negative(header, positions):
    positions[0] = -1
    return positions


def one_record_shorter(header, positions):
    """A consistent alignment one record shorter: drop a joined record that is not a centre, renumber the centres."""
    drop = next(j for j in range(len(positions)) if j not in header.init)
    header.n_joined -= 1
    init = [i - (i > drop) for i in header.init]
    del header.init[:]
    header.init.extend(init)
    return np.delete(positions, drop)


def other_scale(header, positions):
    header.scale_bits = 16  # within the documented range, but not the scale the party's own file agreed to
    return positions


def no_scale(header, positions):
    header.scale_bits = 0  # the other party's distances would be read exactly from the sum
    return positions


def swapped_records(header, positions):
    positions[[0, 1]] = positions[[1, 0]]  # unique, in range, as many: only the other party can tell
    return positions


@pytest.mark.parametrize("lie, victim_says", [
    (repeat_one_row, "is joined 80 times"),
    (duplicate, "is joined 2 times"),
    (past_the_end, "position 80 is not one of this party's rows"),
    (negative, "position -1 is not one of this party's rows"),
    (no_scale, "scale_bits = 0"),
    (one_record_shorter, "'a' was told another n_joined, init, records"),
    (other_scale, "its [clustering] scale_bits is 16, but this party's scenario file"),
    (swapped_records, "'a' was told another records"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_every_party_refuses_a_lying_alignment_before_round_0(tmp_path, monkeypatch, lie, victim_says):
    out, session = run_parties(tmp_path, monkeypatch, "alignment", lying_alignment("b", lie))
    assert_refused_before_round_0(out, session, victim_says)
    # the party lied to speaks first when its own checks catch the lie; the other one hears why, or finds out itself
    assert "refus" in out["a"][1] or "told the parties different things" in out["a"][1], out["a"][1]


def test_a_label_count_one_short_is_refused_before_the_next_post(tmp_path, monkeypatch):
    real = handlers.labels

    def labels(session, request):
        messages = list(real(session, request))
        if request.party == "b" and not request.seeding:
            values = np.frombuffer(b"".join(m.labels.data for m in messages[1:]), dtype="<i4")[:-1]
            return iter([messages[0]] + [session_pb2.LabelsMessage(labels=c)
                                         for c in int32_chunks(values, 1 << 20)])
        return iter(messages)

    # a, told nothing, would wait for round 1's sum until the session's deadline: b's refusal is what is tested
    out, session = run_parties(tmp_path, monkeypatch, "labels", labels, until=("b",))
    code, err = out["b"]
    assert code != 0 and "Traceback" not in err and "79 labels for 80 joined records" in err, err
    rounds = {(e.party, e.time) for e in session.ledger.entries() if e.rpc == "PostDistances"}
    assert rounds  # round 0 was posted by both (the labels come after it) ...
    assert session.arbiter is not None and session.arbiter.round <= 1 and "b" not in session.arbiter.posted
    # ... but b never posted round 1, so round 1's sum was never formed


# -- the confirmation itself, without processes ---------------------------------------------------------

class Relay(Link):
    """Two parties' confirmations through a coordinator that may rewrite them on the way (``tamper``)."""

    def __init__(self, tamper=None):
        self.posted: dict[str, list] = {}
        self.refused: dict[str, str] = {}
        self.tamper = tamper

    def confirm(self, tags):
        raise NotImplementedError  # see party()

    def party(self, me: str):
        relay = self

        class One(Link):
            def confirm(self, tags):
                relay.posted[me] = list(tags)
                other = next(p for p in relay.posted if p != me)
                out = [session_pb2.ConfirmTag(to=me, sender=other, field=t.field, mac=t.mac)
                       for t in relay.posted[other] if t.to == me]
                return relay.tamper(me, out, relay.posted[me]) if relay.tamper else out

            def refuse(self, why):
                relay.refused[me] = why

        return One()


def header(scale_bits=32):
    return session_pb2.AlignmentHeader(n_joined=4, n_rows=5, n_clusters=2, init=[0, 3], scale_bits=scale_bits,
                                       max_iter=300, parties=["a", "b"], revision=2)


def confirm_both(fields_a, fields_b, tamper=None):
    pairs = {"a": KeyPair.generate(1), "b": KeyPair.generate(2)}
    keys = {p: k.public for p, k in pairs.items()}
    relay = Relay(tamper)
    relay.posted["b"] = []  # b "posts" first: computed below, then a confirms against it, then b against a's
    from parties.secagg import _confirm_keys, _tag
    kb = _confirm_keys(pairs["b"], keys, ["a", "b"], "s", "b")
    relay.posted["b"] = [session_pb2.ConfirmTag(to="a", field=f, mac=_tag(kb["a"], "b", "a", f, fields_b[f]))
                         for f in FIELDS]
    errors = {}
    for me, fields in (("a", fields_a), ("b", fields_b)):
        try:
            confirm_alignment(relay.party(me), pairs[me], keys, ["a", "b"], "s", me, fields)
        except PartyError as exc:
            errors[me] = str(exc)
    # a party that stops on a bad tag tells the coordinator why (Confirm's refusal), which fails the session at
    # once for every party instead of leaving them to wait out the deadline
    assert relay.refused == errors
    return errors


def test_parties_told_the_same_confirm_and_parties_told_otherwise_both_stop_naming_the_field():
    ids = np.array([b"%016d" % i for i in range(5)], dtype="S16")
    positions = np.array([4, 0, 2, 1], dtype=np.int32)
    same = confirmed_fields(header(), positions, ids)
    assert confirm_both(same, same) == {}
    errors = confirm_both(same, confirmed_fields(header(scale_bits=16), positions, ids))
    assert set(errors) == {"a", "b"}
    assert "'b' was told another scale_bits" in errors["a"] and "'a' was told another scale_bits" in errors["b"]


def test_a_coordinator_reflecting_a_partys_own_tags_or_dropping_them_is_caught():
    ids = np.array([b"%016d" % i for i in range(5)], dtype="S16")
    fields = confirmed_fields(header(), np.array([4, 0, 2, 1], dtype=np.int32), ids)

    def reflect(me, received, own):  # hand a party its own tags back, as if the other party had sent them
        return [session_pb2.ConfirmTag(to=me, sender="b" if me == "a" else "a", field=t.field, mac=t.mac)
                for t in own]

    assert set(confirm_both(fields, fields, reflect)) == {"a", "b"}
    assert set(confirm_both(fields, fields, lambda me, received, own: [])) == {"a", "b"}


def test_one_party_alone_refuses_what_it_can_check_and_names_it():
    good = np.array([4, 0, 2, 1], dtype=np.int32)
    check_alignment(header(), good, 5, "a", ["a", "b"])
    cases = [
        (header(), np.array([4, 0, 2], dtype=np.int32), "3 positions for 4 joined records"),
        (header(), np.array([4, 4, 4, 4], dtype=np.int32), "row 4 is joined 4 times"),
        (header(), np.array([4, 0, 2, 5], dtype=np.int32), "position 5 is not one of this party's rows"),
        (header(scale_bits=0), good, "scale_bits = 0"),
        (header(scale_bits=60), good, "scale_bits = 60"),
        (session_pb2.AlignmentHeader(n_joined=4, n_rows=5, n_clusters=2, init=[0, 3], scale_bits=32, max_iter=3,
                                     parties=["a", "b"]), good, "revision 0 of the secure-aggregation contract"),
        (session_pb2.AlignmentHeader(n_joined=4, n_rows=6, n_clusters=2, init=[0, 3], scale_bits=32, max_iter=3,
                                     parties=["a", "b"], revision=2), good, "uploaded 6 rows; it uploaded 5"),
        (session_pb2.AlignmentHeader(n_joined=4, n_rows=5, n_clusters=2, init=[3, 3], scale_bits=32, max_iter=3,
                                     parties=["a", "b"], revision=2), good, "initial centres [3, 3]"),
        (session_pb2.AlignmentHeader(n_joined=4, n_rows=5, n_clusters=2, init=[0, 3], scale_bits=32, max_iter=3,
                                     parties=["b", "a"], revision=2), good, "but Join named ['a', 'b']"),
    ]
    for hdr, positions, says in cases:
        with pytest.raises(PartyError, match="refusing the coordinator's alignment") as err:
            check_alignment(hdr, positions, 5, "a", ["a", "b"])
        assert says in str(err.value), (says, str(err.value))


def test_the_coordinator_relays_only_well_formed_confirmations():
    from coordinator.session import Session, SessionSpec

    session = Session(SessionSpec(name="s", parties=("a", "b"), deadline=5))
    request = session_pb2.ConfirmRequest(session="s", party="a", tags=[
        session_pb2.ConfirmTag(to="a", field="records", mac=bytes(32))])
    with pytest.raises(InvalidArgument, match="not another party"):
        handlers.confirm(session, request)
    request = session_pb2.ConfirmRequest(session="s", party="a", tags=[
        session_pb2.ConfirmTag(to="b", field="records", mac=bytes(31))])
    with pytest.raises(InvalidArgument, match="has 31 bytes"):
        handlers.confirm(session, request)
    with pytest.raises(FailedPrecondition):
        handlers.confirm(session, session_pb2.ConfirmRequest(session="s", party="b", refusal="a lie"))
    assert session.error == "party 'b' refused what the coordinator sent it: a lie"


# -- labels told differently to each party -------------------------------------------------------------

def _equivocate(tmp_path, monkeypatch):
    """Round 0's labels as they are to 'a', all 0 to 'b' (b's centres 1, 2 then stay put: empty clusters); the
    arbiter's round-0 and round-1 sums, and what a's partial distances alone changed by between them."""
    import parties.secagg as party_secagg
    from ppcsim.run.inprocess import simulate_secure

    real = handlers.labels

    def labels(session, request):
        messages = list(real(session, request))
        if request.party == "b" and request.round == 0 and not request.seeding:
            n = messages[0].header.n_labels
            k = len(messages[0].header.sizes)
            del messages[0].header.sizes[:]  # sizes (and round 1's changed) to match: b's own checks pass
            messages[0].header.sizes.extend([n] + [0] * (k - 1))
            return iter([messages[0]] + [session_pb2.LabelsMessage(labels=c)
                                         for c in int32_chunks(np.zeros(n, dtype=np.int32), 1 << 20)])
        if request.party == "b" and request.round == 1 and not request.seeding:
            told = np.frombuffer(b"".join(m.labels.data for m in messages[1:]), dtype="<i4")
            messages[0].header.changed = int(np.count_nonzero(told))  # against the zeros b was told in round 0
        return iter(messages)

    monkeypatch.setattr(handlers, "labels", labels)
    scenario = load_scenario(write_scenario(tmp_path, SCENARIO.replace("n_clusters = 3", "n_clusters = 3\nmax_iter = 1")))
    session, _, own = simulate_secure(scenario)
    arbiter = session.arbiter
    first, second = arbiter.seen_first / 2.0**32, arbiter.seen / 2.0**32
    Xa = own["a"].X[arbiter.join.index["a"]]
    start = Xa[np.asarray(arbiter.init)]
    moved = party_secagg.update_centres(Xa, np.argmin(arbiter.seen_first, axis=1), start)
    alone = party_secagg.partial_distances(Xa, moved) - party_secagg.partial_distances(Xa, start)
    return (second - first)[:, 1:], alone[:, 1:]


def test_labels_told_differently_would_isolate_one_party_and_now_give_noise(tmp_path, monkeypatch):
    import parties.secagg as party_secagg

    # with masks keyed by the pair secret alone (as before the transcript keyed them), the attack reads a's part
    with monkeypatch.context() as patched:
        patched.setattr(party_secagg, "keyed", lambda masks, transcript: masks)
        seen, alone = _equivocate(tmp_path, patched)
        assert np.allclose(seen, alone, atol=1e-6)  # a's partial distances alone, to the fixed-point precision
    # keyed by the transcript, the two parties' masks no longer cancel: the round-1 sum is noise
    seen, alone = _equivocate(tmp_path, monkeypatch)
    assert not np.allclose(seen, alone, atol=1.0)
    assert abs(np.corrcoef(seen.ravel(), alone.ravel())[0, 1]) < 0.3


def test_the_report_says_what_an_active_coordinator_could_do_without_mutual_tls(tmp_path):
    from parties.client import WITHOUT_MUTUAL_TLS
    from ppcsim.report.outputs import coordinator_learns

    plain = load_scenario(write_scenario(tmp_path, SCENARIO, "plain.toml"))
    learns = coordinator_learns(plain)
    assert any(WITHOUT_MUTUAL_TLS in line and "man in the middle" in line for line in learns)
    assert any("clusters of single records" in line for line in learns)
    mutual = load_scenario(write_scenario(tmp_path, SCENARIO.replace("tls = false\ntokens = false",
                                                                     "mutual = true"), "mutual.toml"))
    learns = coordinator_learns(mutual)
    assert not any(WITHOUT_MUTUAL_TLS in line for line in learns)
    assert any("could not substitute the parties' keys" in line for line in learns)


# -- what an active arbiter can still do ------------------------------------------------------------------

def test_an_active_arbiter_choosing_singleton_clusters_reads_every_distance_within_max_iter(monkeypatch, tmp_path):
    """Labels are the arbiter's to choose, the same for every party: the parties cannot check an argmin they
    never see. With k - 1 clusters of one record each round, the next round's sums are every joined record's
    squared distance to those records: the whole distance matrix in about m / (k - 1) rounds, which max_iter
    bounds (a party refuses a round past it)."""
    from ppcsim.run.inprocess import simulate_secure

    seen: dict[int, np.ndarray] = {}
    batches: dict[int, np.ndarray] = {}

    def choose(self, signed):  # the arbiter's choice of labels, lying: it keeps each round's sums
        seen[self.round] = signed.copy()
        batch = np.arange(self.round * (self.k - 1), (self.round + 1) * (self.k - 1)) % self.m
        batches[self.round] = batch
        labels = np.full(self.m, self.k - 1, dtype=np.int32)
        labels[batch] = np.arange(self.k - 1)
        return labels, (self.round + 1) * (self.k - 1) >= self.m

    monkeypatch.setattr(secagg.Arbiter, "choose", choose)
    text = SCENARIO.replace("rows = 80", "rows = 40").replace("n_clusters = 3", "n_clusters = 3\nmax_iter = 20")
    session, _, own = simulate_secure(load_scenario(write_scenario(tmp_path, text)))
    join = session.arbiter.join
    X = np.hstack([own[p].X[join.index[p]] for p in ("a", "b")])
    truth = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    read = np.full_like(truth, np.nan)
    for r, batch in batches.items():
        if r + 1 in seen:
            read[:, batch] = seen[r + 1][:, : len(batch)] / 2.0**32
    assert not np.isnan(read[:, :38]).any()  # 19 rounds of 2 singletons: records 0..37, every other record
    assert np.abs(read[:, :38] - truth[:, :38]).max() < 1e-8
    # and the parties stop it at max_iter: 80 records would need 40 rounds
    text = SCENARIO.replace("n_clusters = 3", "n_clusters = 3\nmax_iter = 20")
    with pytest.raises(PartyError, match="past max_iter = 20"):
        simulate_secure(load_scenario(write_scenario(tmp_path, text, "long.toml")))


# -- certificates: for whom, for what, for which session -----------------------------------------------


def test_sizes_and_changed_that_do_not_follow_from_the_labels_are_refused():
    """done, changed and sizes are not in the transcript: changed and sizes follow from the labels (which are),
    and a party refuses an answer whose figures do not."""
    from parties.secagg import check_summary
    from parties.serde import LabelsHeader

    labels, before = np.array([0, 1, 1, 2], dtype=np.int32), np.array([0, 1, 2, 2], dtype=np.int32)
    check_summary(LabelsHeader(round=0, changed=4, sizes=[1, 2, 1]), labels, None, 3)
    check_summary(LabelsHeader(round=1, changed=1, sizes=[1, 2, 1]), labels, before, 3)
    with pytest.raises(PartyError, match="sizes \\[2, 1, 1\\] and 1 labels changed; its labels give \\[1, 2, 1\\]"):
        check_summary(LabelsHeader(round=1, changed=1, sizes=[2, 1, 1]), labels, before, 3)
    with pytest.raises(PartyError, match="0 labels changed; its labels give \\[1, 2, 1\\] and 1"):
        check_summary(LabelsHeader(round=1, changed=0, sizes=[1, 2, 1]), labels, before, 3)
