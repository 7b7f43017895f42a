"""A party holds the coordinator to the terms of its own scenario file, against real ``ppc party`` processes.

The coordinator here serves every party the *same* terms, weaker than the
parties' files say (it runs the session of a file of its own, or answers
labels of its own choosing): nothing the parties could catch by comparing
notes (the Confirm tags). Each party must refuse from its own file, naming
the term, what its file says and what it was told, before it sends anything
that the term bounds: at Join (the consortium, the protocol, the clustering
terms Join announces) nothing but Join has reached the coordinator; at the
alignment (the same terms as the header repeats them, the share-holders) no
partial distance and no share has; at a round's labels (a cluster under the
least size) no post of the next round.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_lying_coordinator import SCENARIO as SECURE

from conftest import blobs, kmeans, lying_alignment, party_processes, scenario_toml, split_x, write_scenario
from coordinator import handlers
from coordinator.protocols import secagg
from coordinator.registry import Registry
from coordinator.server import start_server
from parties import spu_env
from parties.errors import PartyError
from parties.protocols.terms import DEFAULT_MIN_CLUSTER_SIZE, Terms
from parties.serde import AlignmentHeader
from ppcsim.scenario.load import load_scenario
from ppcsim.scenario.terms import party_terms

#: Three parties of 40 blob records in an MPC without helper (k = 3, one round, centres closed).
MPC = scenario_toml("mpc-terms", split_x(2, 2, 2), seed=4, deadline=60, data=blobs(40, 6, 3),
                    clustering=kmeans(3, "mpc", max_iter=1), security={"tls": False, "tokens": False})
#: Seconds a party process may take, start-up included (a refusal needs a few).
PARTY_SECONDS = 90


def serve_weaker(tmp_path, text: str, weaken, names, monkeypatch=None, patches=None) -> tuple[dict, object]:
    """Serve the session ``weaken(spec)`` makes of ``text``'s own (``patches``: ``(owner, name) -> value`` set on
    the coordinator's code), run ``names`` as ``ppc party`` holding ``text``; each one's (exit code, standard
    error), and the session."""
    path = write_scenario(tmp_path, text)
    for (owner, name), value in (patches or {}).items():
        monkeypatch.setattr(owner, name, value)
    registry = Registry()
    session = registry.create(weaken(load_scenario(path).session_spec()))
    server, port = start_server("127.0.0.1:0", registry)
    try:
        out = party_processes(port, path, names, 5, timeout=PARTY_SECONDS)
    finally:
        server.stop(0)
        session.fail("test over")
    return out, session


def clustering(**fields):
    return lambda spec: replace(spec, clustering=replace(spec.clustering, **fields))


def rpcs(session) -> set[str]:
    return {e.rpc for e in session.ledger.entries()}


def assert_every_party_refused(out: dict, *says: str) -> None:
    for name, (code, err) in out.items():
        assert code != 0, f"party {name} went on:\n{err}"
        assert "Traceback" not in err, err
        assert "refusing the session" in err and "scenario file" in err, err
        for text in says:
            assert text in err, (text, err)


# -- at Join: the consortium -------------------------------------------------------------------------------------

def test_secure_aggregation_with_nobody_to_mask_with_is_refused_at_join(tmp_path):
    """The coordinator tells 'b' the session's parties are ['b']: b alone would post its partial distances
    unmasked (there is nobody to mask with); b's file names a and b."""
    out, session = serve_weaker(tmp_path, SECURE, lambda spec: replace(spec, parties=("b",)), ["b"])
    assert_every_party_refused(out, "its list of parties is ['b']", "says the parties ['a', 'b']")
    assert rpcs(session) <= {"Join"}  # no key relay asked for, no id, no distance


def test_mpc_with_the_helper_as_second_share_holder_is_refused_at_join(tmp_path):
    """The coordinator tells 'a' the MPC's parties are 'a' and its own helper (n = 2, threshold 0: the helper's
    share would be a's value itself); a's file names a, b and c and no helper."""
    out, session = serve_weaker(
        tmp_path, MPC, lambda spec: replace(spec, parties=("a",), clustering=replace(spec.clustering, helper=True)),
        ["a"])
    assert_every_party_refused(out, "its list of parties is ['a']", "says the parties ['a', 'b', 'c']")
    assert rpcs(session) <= {"Join"}


# -- at Join: the clustering terms it announces --------------------------------------------------------------------

def test_mpc_opening_every_record_as_a_centre_is_refused_at_join(tmp_path):
    """n_clusters = the number of records, one round, centres opened, announced alike to all three: the
    'centres' would be every joined record. Every party refuses from its file (k = 3, centres closed)."""
    out, session = serve_weaker(tmp_path, MPC, clustering(n_clusters=40, max_iter=1, reveal_centres=True),
                                ["a", "b", "c"])
    assert_every_party_refused(out, "its [clustering] n_clusters is 40", "says n_clusters = 3")
    assert rpcs(session) <= {"Join"}  # not even an id


def test_mpc_opening_the_centres_is_refused_at_join(tmp_path):
    out, session = serve_weaker(tmp_path, MPC, clustering(reveal_centres=True), ["a", "b", "c"])
    assert_every_party_refused(out, "its reveal_centres is true", "says reveal_centres = false")
    assert rpcs(session) <= {"Join"}


def test_mpc_of_two_parties_without_the_helper_is_refused_at_join(tmp_path):
    """Two parties whose file asks for the helper (threshold 1), served without it (threshold 0)."""
    two = scenario_toml("mpc-terms", split_x(3, 3), seed=4, deadline=60, data=blobs(40, 6, 3),
                        clustering=kmeans(3, "mpc", max_iter=1, helper=True), security={"tls": False, "tokens": False})
    out, session = serve_weaker(tmp_path, two, clustering(helper=False), ["a", "b"])
    assert_every_party_refused(out, "its helper is no helper", "says helper = true")
    assert rpcs(session) <= {"Join"}


def test_secure_aggregation_with_more_rounds_than_the_file_allows_is_refused_at_join(tmp_path):
    out, session = serve_weaker(tmp_path, SECURE, clustering(max_iter=1000), ["a", "b"])
    assert_every_party_refused(out, "its [clustering] max_iter is 1000", "says max_iter = 300")
    assert rpcs(session) <= {"Join"}


# -- at the alignment: the terms again, as the rounds will compute with them ---------------------------------------

def lie_to_everyone(monkeypatch, parties, lie) -> None:
    """GetAlignment tells every one of ``parties`` the header ``lie`` makes of the true one (Join was honest)."""
    for name in parties:
        monkeypatch.setattr(handlers, "alignment", lying_alignment(name, lie))


def more_rounds(header, positions):
    header.max_iter = 1000
    return positions


def centres_opened(header, positions):
    header.reveal_centres = True
    return positions


def test_secure_aggregation_with_more_rounds_in_the_alignment_than_at_join_is_refused_before_round_0(
        tmp_path, monkeypatch):
    lie_to_everyone(monkeypatch, ("a", "b"), more_rounds)
    out, session = serve_weaker(tmp_path, SECURE, lambda spec: spec, ["a", "b"])
    assert_every_party_refused(out, "its [clustering] max_iter is 1000", "says max_iter = 300")
    assert "PostDistances" not in rpcs(session)  # the ids went (the alignment needs them); no distance did


def test_mpc_opening_the_centres_in_the_alignment_only_is_refused_before_any_share(tmp_path, monkeypatch):
    lie_to_everyone(monkeypatch, ("a", "b", "c"), centres_opened)
    out, session = serve_weaker(tmp_path, MPC, lambda spec: spec, ["a", "b", "c"])
    assert_every_party_refused(out, "its reveal_centres is true", "says reveal_centres = false")
    assert "Relay" not in rpcs(session)  # no MPC program ever started: no share exists


def test_an_mpc_on_an_engine_the_file_does_not_name_is_refused_before_the_engine_is_looked_for(tmp_path, monkeypatch):
    """The coordinator runs the parties' MPC on SPU; their file names no engine (MPyC). Each refuses the engine by
    its term before it looks for SPU's environment (here one that does not exist) or starts any program."""
    monkeypatch.setenv(spu_env.VARIABLE, str(tmp_path / "no-such-env" / "bin" / "python"))
    out, session = serve_weaker(tmp_path, MPC, clustering(engine="spu"), ["a", "b", "c"])
    assert_every_party_refused(out, 'its MPC engine is "spu"', 'says [clustering] engine = "mpyc"')
    assert not any("no-such-env" in err for _, err in out.values())
    assert "Relay" not in rpcs(session)  # no program ever started: no share exists


# -- at a round's labels: the least cluster ------------------------------------------------------------------------

def test_a_singleton_cluster_in_the_labels_is_refused_naming_the_round_before_the_next_post(tmp_path, monkeypatch):
    """The arbiter answers round 0 with one record, not an initial centre, alone in cluster 0 (the next round's
    sums would give every record's distance to it); both parties refuse and post nothing more."""
    def choose(self, signed):
        labels = np.full(self.m, 1, dtype=np.int32)
        labels[next(j for j in range(self.m) if j not in self.init)] = 0
        return labels, False

    out, session = serve_weaker(tmp_path, SECURE, lambda spec: spec, ["a", "b"], monkeypatch,
                                {(secagg.Arbiter, "choose"): choose})
    for code, err in out.values():
        assert code != 0 and "Traceback" not in err, err
        assert "round 0: the coordinator's labels put 1 record in cluster 0" in err, err
        assert f"min_cluster_size = {DEFAULT_MIN_CLUSTER_SIZE}" in err, err
    arbiter = session.arbiter
    assert arbiter.round == 1 and not arbiter.posted  # round 0 was answered; nobody posted round 1


def test_an_honest_session_under_the_files_terms_completes(tmp_path):
    out, session = serve_weaker(tmp_path, SECURE, lambda spec: spec, ["a", "b"])
    for code, err in out.values():
        assert code == 0, err


# -- the checks alone ----------------------------------------------------------------------------------------------

def terms(**fields) -> Terms:
    return Terms(**{"source": "study.toml", "parties": ("a", "b", "c"), **fields})


def test_a_party_reads_its_terms_from_its_own_file_with_the_safe_defaults(tmp_path):
    """A by-hand party's file: every party named, only its own table with columns; [clustering] silent but for
    the protocol."""
    text = scenario_toml("by-hand", [{"name": "a", "columns": ["x0", "x1"]}, {"name": "b"}, {"name": "c"}],
                         data=blobs(40, 6, 3), clustering={"protocol": "secure_aggregation"})
    found = party_terms(load_scenario(write_scenario(tmp_path, text), role="party", party="a"))
    assert found == terms(source=found.source, protocol="secure_aggregation")
    assert (found.helper, found.reveal_centres, found.n_clusters, found.max_iter) == (False, False, 3, 300)
    assert found.least_cluster == DEFAULT_MIN_CLUSTER_SIZE


def test_each_weaker_term_is_refused_naming_it_what_the_file_says_and_what_was_told():
    mine = terms(protocol="secure_aggregation", parties=("a", "b"))
    announced = {"n_clusters": 3, "max_iter": 300, "scale_bits": 32, "mpc_bits": 0, "mpc_frac": 0,
                 "reveal_centres": False, "helper": False}
    mine.check_join("secure_aggregation", ["b", "a"], announced)  # the order is the session's
    for protocol, parties, told, says in [
            ("upload", ["a", "b"], {}, 'its protocol is "upload"'),
            ("secure_aggregation", ["a", "b", "x"], announced, "its list of parties is ['a', 'b', 'x']"),
            ("secure_aggregation", ["a", "a"], announced, "its list of parties is ['a', 'a']"),
            ("secure_aggregation", ["a", "b"], {}, "its clustering terms is nothing (Join announced none)"),
            ("secure_aggregation", ["a", "b"], {**announced, "scale_bits": 16}, "its [clustering] scale_bits is 16"),
            ("secure_aggregation", ["a", "b"], {**announced, "n_clusters": 80}, "its [clustering] n_clusters is 80")]:
        with pytest.raises(PartyError, match="refusing the session") as err:
            mine.check_join(protocol, parties, told)
        assert says in str(err.value) and "study.toml" in str(err.value)
    with pytest.raises(PartyError, match="a party alone masks with nobody"):
        terms(protocol="secure_aggregation", parties=("a",)).check_join("secure_aggregation", ["a"], announced)

    mpc = terms(protocol="mpc")
    honest = AlignmentHeader(n_clusters=3, max_iter=300, mpc_bits=32, mpc_frac=16, mpc_parties=["a", "b", "c"])
    mpc.check_alignment(honest)
    for lie, says in [(dict(mpc_frac=12), "its [clustering] mpc_frac is 12"),
                      (dict(mpc_parties=["a", "b", "c", "helper"], mpc_helper="helper"),
                       "its helper is a helper, but this party's scenario file (study.toml) says no helper"),
                      (dict(mpc_parties=["a", "b"]), "its list of MPC share-holders is ['a', 'b']"),
                      (dict(mpc_engine="spu"), 'its MPC engine is "spu", but this party\'s scenario file (study.toml) '
                                               'says [clustering] engine = "mpyc"')]:
        with pytest.raises(PartyError) as err:
            mpc.check_alignment(replace(honest, **lie))
        assert says in str(err.value), str(err.value)
    two = terms(protocol="mpc", parties=("a", "b"), helper=True)
    two.check_alignment(replace(honest, mpc_parties=["a", "b", "h"], mpc_helper="h"))
    with pytest.raises(PartyError, match="threshold t = 0"):  # the helper named, but the parties' list cut to one
        terms(protocol="mpc", parties=("a",), helper=True).check_alignment(
            replace(honest, mpc_parties=["a", "h"], mpc_helper="h"))
    with pytest.raises(PartyError, match="its scale_bits is 16|its \\[clustering\\] scale_bits is 16"):
        terms(protocol="secure_aggregation").check_alignment(AlignmentHeader(n_clusters=3, max_iter=300, scale_bits=16))


def test_the_engine_is_the_files_wherever_the_session_runs_an_mpc():
    """An MPC, or secure aggregation's labels-only argmin, runs on the engine the party's file names (absent:
    MPyC); the distances mode runs no MPC, so no engine is checked there."""
    header = AlignmentHeader(n_clusters=3, max_iter=300, scale_bits=32, mpc_bits=32, mpc_frac=16,
                             mpc_parties=["a", "b", "c"])
    terms(protocol="mpc", engine="spu").check_alignment(replace(header, mpc_engine="spu"))
    with pytest.raises(PartyError, match='its MPC engine is "mpyc".*engine = "spu"'):
        terms(protocol="mpc", engine="spu").check_alignment(header)
    labels = replace(header, reveal="labels", mpc_parties=[])
    terms(protocol="secure_aggregation").check_alignment(labels)
    with pytest.raises(PartyError, match='its MPC engine is "spu"'):
        terms(protocol="secure_aggregation").check_alignment(replace(labels, mpc_engine="spu"))
    terms(protocol="secure_aggregation").check_alignment(replace(labels, reveal="distances", mpc_engine="spu"))


def test_the_least_cluster_spares_empty_clusters_and_initial_centres_alone():
    mine = terms(protocol="secure_aggregation")
    labels = np.array([0, 1, 1, 1, 2, 2], dtype=np.int32)
    mine.check_labels(labels, 0, 4, [0, 2, 4], done=False)  # cluster 0 is record 0 alone, an initial centre
    with pytest.raises(PartyError, match="round 3: the coordinator's labels put 1 record in cluster 0"):
        mine.check_labels(labels, 3, 4, [1, 2, 4], done=False)
    terms(protocol="secure_aggregation", min_cluster_size=1).check_labels(labels, 3, 4, [1, 2, 4], done=False)
    with pytest.raises(PartyError, match="2 records in cluster 2"):
        terms(protocol="secure_aggregation", min_cluster_size=3).check_labels(labels, 0, 3, [0, 1, 2], done=False)
    with pytest.raises(PartyError, match="its number of rounds"):
        terms(protocol="secure_aggregation", max_iter=5).check_labels(np.zeros(6, np.int32) + 1, 5, 3, [0], False)


def test_min_cluster_size_is_read_from_the_file_and_refused_where_no_arbiter_answers_labels(tmp_path):
    from ppcsim.scenario.load import ScenarioError

    def table(protocol: str) -> str:
        return scenario_toml("least", split_x(2, 2), data=blobs(40, 4, 3),
                             clustering={"protocol": protocol, "n_clusters": 3, "max_iter": 5, "min_cluster_size": 4,
                                         **({"reveal": "distances"} if protocol == "secure_aggregation" else {})})

    found = party_terms(load_scenario(write_scenario(tmp_path, table("secure_aggregation")), role="party", party="a"))
    assert (found.least_cluster, found.max_iter) == (4, 5)
    with pytest.raises(ScenarioError, match="'min_cluster_size' applies to protocol = \"secure_aggregation\" only"):
        load_scenario(write_scenario(tmp_path, table("mpc"), "mpc.toml"), role="party", party="a")
