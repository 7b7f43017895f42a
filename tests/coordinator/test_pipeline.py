"""coordinator.pipeline apart from any session, the session's deadline on a manual clock, and imports going one way."""

from __future__ import annotations

import ast
import threading

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist
from sklearn.cluster import KMeans

from conftest import ROOT
from coordinator.clock import ManualClock
from coordinator.clustering import ClusteringSpec
from coordinator.errors import SessionError
from coordinator.pipeline import pipeline
from coordinator.session import CLUSTERING, DONE, FAILED, WAITING, Session, SessionSpec
from coordinator.sums import PairSums
from coordinator.types import Contribution
from coordinator.wire.serde import header_from_proto, made, upload_stream
from parties.client import upload_messages
from parties.methods.base import rows

RNG = np.random.default_rng(11)
IDS = np.array([f"r{i}" for i in range(30)])
BLOCKS = {"a": RNG.normal(size=(30, 2)), "b": RNG.normal(size=(30, 3))}


ORDER = RNG.permutation(29)  # b holds its records in another order, and lacks r29


def features() -> list[Contribution]:
    return [Contribution("a", "none", {}, IDS, {"data": BLOCKS["a"]}),
            Contribution("b", "none", {}, IDS[ORDER], {"data": BLOCKS["b"][ORDER]})]


# -- the pipeline alone ------------------------------------------------------------------------------------


def test_features_are_joined_concatenated_and_clustered_like_kmeans():
    spec = ClusteringSpec(algorithm="kmeans", n_clusters=3, seed=4)
    outcome = pipeline(features(), spec)
    joined = np.hstack([BLOCKS["a"][:29], BLOCKS["b"][:29]])  # the join keeps r0..r28, in the first party's order
    assert outcome.join.ids.tolist() == IDS[:29].tolist()
    np.testing.assert_array_equal(outcome.combined.features, joined)
    expected = KMeans(n_clusters=3, random_state=4, n_init=spec.n_init).fit_predict(joined)
    np.testing.assert_array_equal(outcome.labels, expected)
    assert outcome.by_party["a"][29] == -2 and outcome.by_party["a"][:29].tolist() == expected.tolist()
    np.testing.assert_array_equal(outcome.by_party["b"], expected[ORDER])  # b's rows, in b's order
    assert set(outcome.seconds) == {"join_seconds", "cluster_seconds"}


def test_summed_dissimilarities_are_used_up_when_not_kept():
    spec = ClusteringSpec(algorithm="agglomerative", linkage="average", n_clusters=4)
    sums = PairSums()
    contributions = []
    released = []
    for p, X in BLOCKS.items():
        adder = sums.attach(IDS)
        adder.add("sqdist", 0, pdist(X, "sqeuclidean"))
        contributions.append(Contribution(p, "osbr", {"metric": "euclidean"}, IDS, {}, True, ("sqdist",),
                                          release=lambda p=p: released.append(p)))
    outcome = pipeline(contributions, spec, sums, keep=False)
    expected = np.sqrt(pdist(BLOCKS["a"], "sqeuclidean") + pdist(BLOCKS["b"], "sqeuclidean"))
    truth = fcluster(linkage(expected, "average"), 4, "maxclust")
    # the same partition as scipy's average linkage (labels numbered differently)
    assert len({(a, b) for a, b in zip(outcome.labels, truth)}) == 4
    assert released == ["a", "b"] and sums._sums == {}  # every input let go, in one place
    assert outcome.combined.dissimilarity is None  # clustered in place, then let go


def test_kept_inputs_are_left_as_they_were():
    contributions = features()
    before = {c.party: c.arrays["data"].copy() for c in contributions}
    pipeline(contributions, ClusteringSpec(algorithm="kmeans", n_clusters=2))
    for c in contributions:
        np.testing.assert_array_equal(c.arrays["data"], before[c.party])


def test_a_pipeline_error_is_a_session_error():
    a, b = features()
    b.ids = np.array([f"x{i}" for i in range(len(b.ids))])
    with pytest.raises(SessionError, match="no record id"):
        pipeline([a, b], ClusteringSpec(algorithm="kmeans", n_clusters=2))


# -- the session's deadline, with no waiting -----------------------------------------------------------------


def upload(session: Session, party: str) -> None:
    messages = upload_messages("s", party, "none", {}, IDS, [rows("data", BLOCKS[party])], 5, 4096)
    session.receive(header_from_proto(next(messages).header), upload_stream(messages))


def test_the_deadline_passes_when_the_clock_says_so():
    clock = ManualClock(100.0)
    session = Session(SessionSpec(name="s", parties=("a", "b"), deadline=8.0), clock)
    session.join("a")
    clock.advance(7.5)
    assert session.state == WAITING and session.seconds_left() == 0.5
    upload(session, "a")
    clock.advance(0.5)
    assert session.state == FAILED
    assert session.error == "deadline of 8 s passed (never joined: b)"
    with pytest.raises(SessionError, match="session 's' failed: deadline of 8 s passed"):
        session.wait(timeout=0)
    assert session.seconds_left() == 0.0 and session.timing["first_join"] == 0.0


def test_a_pending_upload_is_named_and_cut_off_after_the_grace():
    clock = ManualClock()
    session = Session(SessionSpec(name="s", parties=("a", "b"), deadline=2.0), clock)
    session.join("a")
    session.join("b")
    cut = threading.Event()
    gate = threading.Event()
    messages = upload_messages("s", "a", "none", {}, IDS, [rows("data", BLOCKS["a"])], 5, 4096)
    header = header_from_proto(next(messages).header)

    def stalled():
        yield made(next(messages))
        gate.wait(5)  # the party stalls, then sends on: it hears why its upload is no longer taken
        yield from upload_stream(messages)

    errors = []
    worker = threading.Thread(target=lambda: errors.append(_catch(session, header, stalled(), cut.set)))
    worker.start()
    try:
        for _ in range(500):
            if "a" in session.uploads:
                break
            threading.Event().wait(0.01)
        clock.advance(2.0)
        assert session.error == "deadline of 2 s passed (upload not finished: a, b)"
        clock.advance(1.75)
        assert not cut.is_set()
        clock.advance(0.25)  # STOP_GRACE after the failure
        assert cut.is_set()
    finally:
        gate.set()
        worker.join(5)
    assert errors == ["party 'a': upload stopped, the session failed: deadline of 2 s passed "
                      "(upload not finished: a, b)"]


def _catch(session, header, messages, cancel):
    try:
        session.receive(header, messages, cancel)
    except SessionError as exc:
        return str(exc)
    return None


def test_a_session_done_before_its_deadline_cancels_it():
    clock = ManualClock()
    session = Session(SessionSpec(name="s", parties=("a", "b"), deadline=5.0,
                                  clustering=ClusteringSpec(algorithm="kmeans", n_clusters=2)), clock)
    for p in ("a", "b"):
        session.join(p)
        clock.advance(1.0)
        upload(session, p)
    assert session.state in (CLUSTERING, DONE)
    outcome = session.wait(timeout=30)
    assert session.timing["uploaded"] == 2.0 and session.timing["done"] == 2.0
    assert clock.pending == 0
    clock.advance(100.0)
    assert session.state == DONE and session.outcome is outcome


# -- imports go one way ----------------------------------------------------------------------------------


def coordinator_imports() -> dict[str, set[str]]:
    """Every coordinator module (subfolders too) -> the coordinator modules it imports, anywhere in it (inside
    functions and under TYPE_CHECKING as well)."""
    graph = {}
    for path in (ROOT / "coordinator").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("coordinator"):
                package = (ROOT / node.module.replace(".", "/")).is_dir()
                found |= {f"{node.module}.{a.name}" for a in node.names} if package else {node.module}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("coordinator.")}
        graph[module] = found - {module}
    return graph


def test_the_coordinator_import_graph_has_no_cycle():
    graph = coordinator_imports()
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        if state.get(module) == 1:
            raise AssertionError("import cycle: " + " -> ".join(path + [module]))
        if state.get(module) == 2:
            return
        state[module] = 1
        for other in graph.get(module, ()):
            visit(other, path + [module])
        state[module] = 2

    for module in graph:
        visit(module, [])


def test_shared_types_and_helpers_import_no_stage():
    graph = coordinator_imports()
    assert graph["coordinator.types"] <= {"coordinator.join"}
    assert graph["coordinator.text"] == set() and graph["coordinator.condensed"] == set()
    assert graph["coordinator.clock"] == set()
    for low in ("coordinator.embed", "coordinator.clustering", "coordinator.sums", "coordinator.linkage"):
        assert "coordinator.combine" not in graph[low], low
    assert "coordinator.session" not in graph["coordinator.pipeline"]


def test_the_subfolders_are_in_the_graph_and_the_protocols_know_no_wire():
    graph = coordinator_imports()
    assert {"coordinator.protocols.upload", "coordinator.protocols.keys", "coordinator.protocols.secagg",
            "coordinator.protocols.confirm", "coordinator.protocols.mpc", "coordinator.wire.serde"} <= set(graph)
    assert "coordinator.protocols.mpc" in graph["coordinator.handlers"]  # a package import is read by its names
    assert graph["coordinator.messages"] == set()
    for module, imports in graph.items():
        if module.startswith("coordinator.protocols") or module in ("coordinator.session", "coordinator.messages"):
            assert not any(i.startswith("coordinator.wire") for i in imports), module
            assert "coordinator.servicer" not in imports and "coordinator.handlers" not in imports, module


def test_only_the_servicer_and_the_wire_name_the_wire_messages():
    """The coordinator's logic works on coordinator.messages; protobuf is decoded and encoded at the edge."""
    naming = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "coordinator").rglob("*.py")
                    if "session_pb2" in p.read_text() or "array_pb2" in p.read_text())
    assert naming == ["coordinator/servicer.py", "coordinator/wire/serde.py", "coordinator/wire/table.py"]
