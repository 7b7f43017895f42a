"""coordinator.protocols.upload.Upload: checks on one party's upload stream, as early and as cheaply as they can be made."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from coordinator.errors import SessionError
from coordinator.protocols.upload import Upload
from coordinator.wire.serde import header_from_proto, made
from parties.client import upload_messages
from parties.methods import Sent
from ppcsim.report.outputs import for_file, write_outputs
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


def test_a_session_that_keeps_no_uploads_lets_feature_uploads_go_once_joined(tmp_path):
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
        # kept or not, written straight into the matrix that was clustered, no buffer of their own left (here one
        # upload ends before the next begins: the first moves into the matrix when they are joined); kept, each
        # party's arrays (for sent/ and the observer) are views of its columns there
        assert not any(a.kept for u in session.uploads.values() for a in u.assemblers)
        assert outcomes[keep].combined.features is session.matrix.matrix
        assert all(np.shares_memory(a, session.matrix.matrix) for c in session.contributions.values()
                   for a in c.arrays.values())
        if keep:  # sent/ holds each party's array as it sent it, byte for byte, from its view in the matrix
            write_outputs(tmp_path, Written(), session, sent=True)  # type: ignore[arg-type]
            for party, X in blocks.items():
                expected = io.BytesIO()
                np.savez(expected, ids=for_file(session.contributions[party].ids), data=X)
                assert members((tmp_path / "sent" / f"{party}.npz").read_bytes()) == members(expected.getvalue())
    np.testing.assert_array_equal(outcomes[False].labels, outcomes[True].labels)
    np.testing.assert_array_equal(outcomes[True].combined.features, np.hstack(list(blocks.values())))
    # clustered in place: centred and put back, equal but for the last bits
    np.testing.assert_allclose(outcomes[False].combined.features, np.hstack(list(blocks.values())), rtol=0,
                               atol=1e-14)


class Written:
    """What write_outputs reads of a report: its JSON (the test reads sent/ only)."""

    def dumps(self) -> str:
        return "{}"


def members(npz: bytes) -> dict[str, bytes]:
    """Each member's bytes of an .npz (the zip's own headers carry the time of writing)."""
    with zipfile.ZipFile(io.BytesIO(npz)) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_nonfinite_finds_nan_and_infinities_but_not_an_overflowing_sum():
    from coordinator.protocols.upload import nonfinite

    assert nonfinite(np.array([1e308, 1e308, -5.0])) is None
    assert nonfinite(np.zeros(0)) is None
    np.testing.assert_array_equal(nonfinite(np.array([1.0, np.nan, 2.0, -np.inf])), [False, True, False, True])
    np.testing.assert_array_equal(nonfinite(np.array([np.inf, -np.inf])), [True, True])  # their sum is NaN
