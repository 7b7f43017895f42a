"""coordinator.protocols.upload.Upload: checks on one party's upload stream, as early and as cheaply as they can be made."""

from __future__ import annotations

import numpy as np
import pytest

from coordinator.errors import SessionError
from coordinator.protocols.upload import Upload
from coordinator.wire.serde import header_from_proto, made
from parties.client import upload_messages
from parties.methods import Sent
from protos.serde import Layout


def test_finite_values_whose_sum_overflows_are_accepted_and_an_infinity_is_not():
    for data, bad in ((np.array([[1e308], [1e308], [-1.0]]), None), (np.array([[1.0], [np.inf], [2.0]]), "(1, 0)")):
        ids = np.arange(3)
        messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", data, Layout.ROWS)], 1, 1 << 20))
        upload = Upload("a", header_from_proto(messages[0].header))
        for m in messages[1:]:
            upload.add(made(m).part)
        if bad is None:
            np.testing.assert_array_equal(upload.finish().arrays["data"], data)
        else:
            with pytest.raises(SessionError, match=rf"NaN or infinite values \(1 of 3, the first at index \{bad[:-1]}\)"):
                upload.finish()


def test_a_session_that_keeps_no_uploads_lets_feature_uploads_go_once_joined():
    from coordinator.clustering import ClusteringSpec
    from coordinator.session import Session, SessionSpec
    from coordinator.wire.serde import upload_stream

    rng = np.random.default_rng(3)
    blocks = {"a": rng.standard_normal((60, 2)) + np.repeat([[0, 0], [6, 6], [0, 9]], 20, axis=0),
              "b": rng.standard_normal((60, 3))}
    outcomes = {}
    for keep in (True, False):
        session = Session(SessionSpec(name="s", parties=("a", "b"), keep_uploads=keep,
                                      clustering=ClusteringSpec(n_clusters=3, seed=1)))
        for party, X in blocks.items():
            session.join(party)
            messages = upload_stream(upload_messages("s", party, "none", {}, np.arange(60),
                                                       [Sent("data", X, Layout.ROWS)], X.shape[1], 256))
            session.receive(next(messages).part, messages)
        outcomes[keep] = session.wait(timeout=30)
        assert all(bool(c.arrays) == keep for c in session.contributions.values())
        assert all(a.kept == keep for u in session.uploads.values() for a in u.assemblers)
        # kept: each upload in its own buffer; not kept: written straight into the matrix that was clustered
        # (here one upload ends before the next begins: the first moves into the matrix when they are joined)
        assert session.matrix is None if keep else outcomes[keep].combined.features is session.matrix.matrix
    np.testing.assert_array_equal(outcomes[False].labels, outcomes[True].labels)
    np.testing.assert_array_equal(outcomes[True].combined.features, np.hstack(list(blocks.values())))
    # clustered in place: centred and put back, equal but for the last bits
    np.testing.assert_allclose(outcomes[False].combined.features, np.hstack(list(blocks.values())), rtol=0,
                               atol=1e-14)


def test_nonfinite_finds_nan_and_infinities_but_not_an_overflowing_sum():
    from coordinator.protocols.upload import nonfinite

    assert nonfinite(np.array([1e308, 1e308, -5.0])) is None
    assert nonfinite(np.zeros(0)) is None
    np.testing.assert_array_equal(nonfinite(np.array([1.0, np.nan, 2.0, -np.inf])), [False, True, False, True])
    np.testing.assert_array_equal(nonfinite(np.array([np.inf, -np.inf])), [True, True])  # their sum is NaN


def test_pseudonyms_that_share_their_first_bytes_are_distinct_and_a_repeated_one_is_refused():
    rng = np.random.default_rng(5)
    heads = rng.bytes(8 * 4)
    distinct = [heads[8 * (i % 4) : 8 * (i % 4) + 8] + rng.bytes(8) for i in range(12)]  # 4 heads, each thrice
    unlike = [rng.bytes(16) for _ in range(50)]
    for ids, repeated in ((unlike, None), (distinct, None), (distinct + [distinct[7]], distinct[7]),
                          (unlike + [unlike[0]], unlike[0])):
        ids = np.array(ids, dtype="S16")
        data = np.zeros((len(ids), 1))
        messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", data, Layout.ROWS)], 1, 1 << 20))
        upload = Upload("a", header_from_proto(messages[0].header))
        for m in messages[1:]:
            upload.add(made(m).part)
        if repeated is None:
            np.testing.assert_array_equal(upload.finish().ids, ids)
        else:
            with pytest.raises(SessionError, match=r"duplicate record ids in the upload \('.*' and 0 more repeat\)"):
                upload.finish()


@pytest.mark.parametrize("keep", [True, False])
def test_a_nan_in_any_chunk_is_refused_with_where_it_is_whether_kept_or_written_into_the_matrix(keep):
    from coordinator.errors import InvalidArgument
    from coordinator.session import Session, SessionSpec
    from coordinator.wire.serde import upload_stream

    rng = np.random.default_rng(4)
    blocks = {"a": rng.standard_normal((30, 2)), "b": rng.standard_normal((30, 3))}
    blocks["b"][17, 2] = np.nan
    session = Session(SessionSpec(name="s", parties=("a", "b"), keep_uploads=keep))
    for party in blocks:
        session.join(party)
    for party, X in blocks.items():  # chunks of 52 bytes: elements split across chunks
        messages = upload_stream(upload_messages("s", party, "none", {}, np.arange(30), [Sent("data", X, Layout.ROWS)],
                                                 X.shape[1], 52))
        if party == "a":
            session.receive(next(messages).part, messages)
            continue
        with pytest.raises(InvalidArgument, match=r"party 'b', array 'data': NaN or infinite values \(1 of 90, the first "
                                                  r"at index \(17, 2\)\)"):
            session.receive(next(messages).part, messages)
