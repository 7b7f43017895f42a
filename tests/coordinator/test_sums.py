"""coordinator.sums: dissimilarity uploads summed chunk by chunk equal the sums of the whole arrays."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from coordinator.clustering import ClusteringSpec
from coordinator.errors import SessionError
from coordinator.session import Session, SessionSpec
from coordinator.sums import PairSums
from coordinator.wire.serde import header_from_proto, upload_stream
from parties.client import upload_messages
from parties.methods.base import condensed

RNG = np.random.default_rng(5)
IDS = np.array([f"r{i}" for i in range(40)])
BLOCKS = {p: RNG.normal(size=(40, 3)) for p in ("a", "b", "c")}


def feed(sums: PairSums, ids: np.ndarray, array: np.ndarray, step: int) -> None:
    """Add ``array`` over ``ids`` in runs of ``step`` elements, as an upload's chunks would."""
    adder = sums.attach(ids)
    for start in range(0, len(array), step):
        adder.add("sqdist", start, array[start : start + step])


def test_same_order_sums_in_place():
    sums = PairSums()
    for X in BLOCKS.values():
        feed(sums, IDS, pdist(X, "sqeuclidean"), step=97)
    expected = sum(pdist(X, "sqeuclidean") for X in BLOCKS.values())
    np.testing.assert_allclose(sums.joined("sqdist", IDS), expected, rtol=1e-14)


def test_other_orders_and_missing_ids_land_on_the_reference_pairs():
    sums = PairSums()
    feed(sums, IDS, pdist(BLOCKS["a"], "sqeuclidean"), step=50)
    keep = RNG.permutation(40)[:30]  # party b holds 30 of the records, shuffled, and 5 the others lack
    ids_b = np.concatenate([IDS[keep], [f"x{i}" for i in range(5)]])
    Xb = np.vstack([BLOCKS["b"][keep], RNG.normal(size=(5, 3))])
    feed(sums, ids_b, pdist(Xb, "sqeuclidean"), step=33)
    joined = np.sort(IDS[keep])[::-1]  # any order the join asks for
    rows = [int(i[1:]) for i in joined]
    expected = pdist(BLOCKS["a"][rows], "sqeuclidean") + pdist(BLOCKS["b"][rows], "sqeuclidean")
    np.testing.assert_allclose(sums.joined("sqdist", joined), expected, rtol=1e-14)


def run_session(keep: bool, chunk_bytes: int, ids_by_party: dict | None = None):
    spec = SessionSpec(name="s", parties=tuple(BLOCKS), keep_uploads=keep,
                       clustering=ClusteringSpec(algorithm="agglomerative", n_clusters=3))
    session = Session(spec)
    for p, X in BLOCKS.items():
        ids = IDS if ids_by_party is None else ids_by_party[p]
        rows = [int(i[1:]) for i in ids]
        session.join(p)
        messages = upload_messages("s", p, "osbr", {"metric": "euclidean"}, ids,
                                   [condensed("sqdist", pdist(X[rows], "sqeuclidean"))], 3, chunk_bytes)
        header = next(messages).header
        session.receive(header_from_proto(header), upload_stream(messages))
    return session, session.wait(timeout=30)


@pytest.mark.parametrize("chunk_bytes", [1 << 20, 1028])  # 1028: values split across chunks
def test_session_without_kept_uploads_clusters_the_same(chunk_bytes):
    kept, with_arrays = run_session(True, chunk_bytes)
    summed, without = run_session(False, chunk_bytes)
    expected = np.sqrt(sum(pdist(X, "sqeuclidean") for X in BLOCKS.values()))
    np.testing.assert_allclose(with_arrays.combined.dissimilarity, expected, rtol=1e-14)
    np.testing.assert_array_equal(without.labels, with_arrays.labels)
    assert without.combined.dissimilarity is None  # clustered in place, then let go
    assert all(not c.arrays for c in summed.contributions.values())
    assert all(c.arrays["sqdist"].shape == (40 * 39 // 2,) for c in kept.contributions.values())
    assert summed.uploads["a"].received == 40 * 39 // 2 * 8


def test_session_parties_in_different_orders():
    order = {"a": IDS, "b": IDS[::-1], "c": IDS[RNG.permutation(40)]}
    _, outcome = run_session(True, 1000, order)
    rows = [int(i[1:]) for i in outcome.join.ids]
    expected = np.sqrt(sum(pdist(X[rows], "sqeuclidean") for X in BLOCKS.values()))
    np.testing.assert_allclose(squareform(outcome.combined.dissimilarity), squareform(expected), rtol=1e-14)


def test_nan_in_a_summed_upload_names_party_array_and_index():
    spec = SessionSpec(name="s", parties=("a",), keep_uploads=False)
    session = Session(spec)
    session.join("a")
    bad = pdist(BLOCKS["a"], "sqeuclidean")
    bad[700] = np.nan
    messages = upload_messages("s", "a", "osbr", {"metric": "euclidean"}, IDS, [condensed("sqdist", bad)], 3, 4096)
    header = next(messages).header
    with pytest.raises(SessionError, match=r"party 'a', array 'sqdist': NaN or infinite values \(the first at index \(700,\)\)"):
        session.receive(header_from_proto(header), upload_stream(messages))


def test_integer_and_text_ids_in_the_same_order_add_in_place():
    sums = PairSums()
    sums.attach(np.arange(5))
    same = sums.attach(np.arange(5).astype(str))  # a CSV party whose ids are the same row numbers
    assert same.mapping is None
    same.add("sqdist", 0, np.ones(10))
    assert sums.joined("sqdist", np.arange(5).astype(str)) is sums._sum("sqdist")  # no reordered copy
