"""coordinator.protocols.upload.Upload: checks on one party's upload stream, as early and as cheaply as they can be made."""

from __future__ import annotations

import ast
import io
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from conftest import ROOT
from coordinator.errors import SessionError
from coordinator.messages import ArraySpec
from coordinator.protocols.upload import Upload, UploadRules, plan_upload
from coordinator.wire.serde import header_from_proto, made
from parties.client import upload_messages
from parties.methods import Sent
from ppcsim.report.outputs import for_file, write_outputs
from protos.serde import Layout


def test_finite_values_whose_sum_overflows_are_accepted_and_an_infinity_is_not():
    for data, bad in ((np.array([[1e308], [1e308], [-1.0]]), None), (np.array([[1.0], [np.inf], [2.0]]), "(1, 0)")):
        ids = np.arange(3)
        messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", data, Layout.ROWS)], 1, 1 << 20))
        upload = Upload(plan_upload(header_from_proto(messages[0].header)))
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
            write_outputs(tmp_path, Written(), session.outcome, session.contributions, sent=True)  # type: ignore[arg-type]
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
    """What write_outputs reads of a report: its JSON and whether it holds the seeds (the test reads sent/ only)."""

    observer = None  # no seeds: the file is written with the usual mode

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


def _header(**kw):
    messages = upload_messages("s", "a", "drbt", {"k": "2"}, np.arange(4), [Sent("data", np.zeros((4, 2)), Layout.ROWS)],
                               2, 1 << 20)
    return replace(header_from_proto(next(messages).header), **kw)


@pytest.mark.parametrize("rules, header, error", [
    (UploadRules("s", method="osbr"), {}, "party 'a': the upload says method 'drbt', but session 's' expects 'osbr'"),
    (UploadRules("s", method="drbt", params={"k": "3"}), {},
     "party 'a': the upload's parameter 'k' is '2', but session 's' expects '3'"),
    (UploadRules("s", dims=3), {}, "party 'a': array 'data' has 2 columns, but session 's' expects k = 3 from it"),
    (UploadRules("s", ids="pseudonymous"), {}, "session 's' takes pseudonymous ids (ID_PSEUDONYMS_AES), never raw ids"),
    (UploadRules("s", ids_only=True), {}, "a secure-aggregation session takes an upload of ids only"),
    (UploadRules("s", max_bytes=63), {}, "the header announces 64 array bytes (64 bytes), more than this session's "
                                         "max_upload_bytes of 63"),
    (UploadRules("s"), {"arrays": (ArraySpec("data", "<f2", (4, 2), Layout.ROWS, None, "array 'data': bad dtype"),)},
     "party 'a': array 'data': bad dtype"),
])
def test_the_plan_refuses_a_header_against_the_sessions_rules_naming_party_and_field(rules, header, error):
    with pytest.raises(SessionError) as refused:
        plan_upload(_header(**header), rules)
    assert error in str(refused.value)


def test_the_plan_holds_what_the_stream_must_bring():
    plan = plan_upload(_header(), UploadRules("s", method="drbt", params={"k": "2"}, dims=2, ids="plain"))
    assert (plan.party, plan.method, dict(plan.params), plan.n, plan.nbytes, plan.expected) == \
        ("a", "drbt", {"k": "2"}, 4, (64,), 64)
    assert plan.widths == (4, (2,), "<f8") and not plan.dissimilarity


def test_only_the_plan_takes_the_upload_header_apart():
    """Past the edge (the handler reads the party it counts bytes for) the header is read by plan_upload alone;
    the session, the upload and the matrix read the plan."""
    readers = set()
    for path in sorted((ROOT / "coordinator").rglob("*.py")):
        text = path.read_text()
        if "wire" in path.parts:
            continue
        for fn in ast.walk(ast.parse(text)):  # the functions that take an UploadHeader (annotated or checked)
            if isinstance(fn, ast.FunctionDef) and "UploadHeader" in (ast.get_source_segment(text, fn) or ""):
                fields = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                          and isinstance(n.value, ast.Name) and n.value.id == "header"}
                if fields - {"party", "session"}:
                    readers.add(f"{path.relative_to(ROOT).as_posix()}:{fn.name}")
    assert readers == {"coordinator/protocols/upload.py:plan_upload"}


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
        upload = Upload(plan_upload(header_from_proto(messages[0].header)))
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
