"""Feature uploads written straight into the matrix the coordinator clusters (coordinator.matrix)."""

from __future__ import annotations

import numpy as np

from coordinator.combine import combine
from coordinator.join import join_ids
from coordinator.matrix import FeatureMatrix, place, whole
from coordinator.messages import Received
from coordinator.protocols.upload import Upload, plan_upload
from coordinator.wire.serde import upload_stream
from parties.client import upload_messages
from parties.methods import Sent
from protos.serde import Layout

RNG = np.random.default_rng(5)


def stream(party: str, ids: np.ndarray, X: np.ndarray, chunk: int = 100, dtype: str | None = None) -> list[Received]:
    """An upload's messages; chunks of 100 bytes split the float64 elements and the rows across messages."""
    return list(upload_stream(upload_messages("s", party, "none", {}, ids, [Sent("data", X, Layout.ROWS)],
                                                X.shape[1], chunk, dtype)))


def feed(upload: Upload, messages: list[Received]) -> None:
    for m in messages:
        upload.add(m.part)


def test_place_writes_any_run_of_row_major_elements_into_its_rows():
    block = np.zeros((7, 3))
    values = np.arange(21.0)
    for cut in ([0, 21], [0, 1, 2, 3, 21], [0, 4, 5, 13, 20, 21], [0, 3, 6, 21]):
        block[:] = 0
        for a, b in zip(cut[:-1], cut[1:]):
            place(block, a, values[a:b])
        assert np.array_equal(block, values.reshape(7, 3)), cut


def test_chunks_written_before_the_matrix_exists_move_into_it_and_the_join_clusters_it_without_a_copy():
    ids = np.arange(50)
    A, B = RNG.normal(size=(50, 3)), RNG.normal(size=(50, 2))
    matrix = FeatureMatrix(("a", "b"))
    sa, sb = stream("a", ids, A), stream("b", ids, B)
    ua = Upload(plan_upload(sa[0].part), keep=False, matrix=matrix)
    feed(ua, sa[1:9])  # some of a's bytes, ending inside an element: the matrix does not exist yet
    assert matrix.matrix is None and not ua.blocks and ua.assemblers[0].kept
    ub = Upload(plan_upload(sb[0].part), keep=False, matrix=matrix)
    assert matrix.matrix is not None and matrix.matrix.shape == (50, 5)
    feed(ub, sb[1:4])
    feed(ua, sa[9:])  # a moves what it had into its columns and gives its buffer back
    feed(ub, sb[4:])
    assert not ua.assemblers[0].kept and not ub.assemblers[0].kept
    a, b = ua.finish(), ub.finish()
    combined = combine([a, b], join_ids({"a": a.ids, "b": b.ids}), None, matrix)
    assert combined.features is matrix.matrix
    assert np.array_equal(combined.features, np.hstack([A, B]))


def test_float32_stays_float32_and_an_upload_finished_before_the_matrix_existed_is_moved_in_at_the_join():
    ids = np.arange(40)
    A, B = RNG.normal(size=(40, 2)), RNG.normal(size=(40, 4))
    matrix = FeatureMatrix(("a", "b"))
    sa, sb = stream("a", ids, A, dtype="<f4"), stream("b", ids, B, dtype="<f4")
    ua = Upload(plan_upload(sa[0].part), keep=False, matrix=matrix)
    feed(ua, sa[1:])
    a = ua.finish()  # all of a in its own buffer: b had not announced
    released = []
    a.release = lambda: released.append("a")
    ub = Upload(plan_upload(sb[0].part), keep=False, matrix=matrix)
    feed(ub, sb[1:])
    combined = combine([a, ub.finish()], join_ids({"a": ids, "b": ids}), None, matrix)
    assert combined.features is matrix.matrix and combined.features.dtype == np.float32 and released == ["a"]
    assert np.array_equal(combined.features, np.hstack([A, B]).astype(np.float32))


def test_ids_in_another_order_are_joined_by_copying_rows_out_of_the_matrix():
    ids = np.arange(30)
    A, B = RNG.normal(size=(30, 2)), RNG.normal(size=(30, 2))
    order = RNG.permutation(30)
    matrix = FeatureMatrix(("a", "b"))
    sa, sb = stream("a", ids, A), stream("b", ids[order], B[order])
    ua = Upload(plan_upload(sa[0].part), keep=False, matrix=matrix)
    ub = Upload(plan_upload(sb[0].part), keep=False, matrix=matrix)
    feed(ua, sa[1:])
    feed(ub, sb[1:])
    a, b = ua.finish(), ub.finish()
    combined = combine([a, b], join_ids({"a": a.ids, "b": b.ids}), None, matrix)
    assert combined.features is not matrix.matrix
    assert np.array_equal(combined.features, np.hstack([A, B]))


def test_whole_is_only_the_matrix_its_blocks_tile_exactly():
    m = np.zeros((4, 5))
    assert whole([m[:, :2], m[:, 2:]]) is m
    assert whole([m[:, :2], m[:, 3:]]) is None and whole([m[:, 2:], m[:, :2]]) is None
    assert whole([m[:, :2]]) is None and whole([m[:2, :2], m[:2, 2:]]) is None and whole([np.zeros((4, 5))]) is None
