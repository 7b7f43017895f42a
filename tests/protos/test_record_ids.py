"""Record ids on the wire: the smallest encoding, exact round trips, and bounded decoding."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from coordinator.errors import SessionError
from coordinator.join import join_ids
from coordinator.limits import Budget
from coordinator.protocols.upload import Upload, plan_upload
from coordinator.wire.serde import header_from_proto, made
from parties.client import upload_messages
from parties.methods import Sent
from protos.ids import INT_DELTAS, LINES, TEXT, TEXT_IDS, IdError, as_text, for_file, pack, stored_bytes, unpack
from protos.serde import Layout


def roundtrip(ids: list[str]) -> tuple[int, bytes]:
    encoding, packed = pack(np.array(ids, dtype=str))
    if encoding != TEXT:
        assert as_text(unpack(encoding, packed, len(ids))).tolist() == ids
    return encoding, packed


def test_consecutive_integer_ids_pack_to_almost_nothing():
    encoding, packed = roundtrip([str(i) for i in range(100_000)])
    assert encoding == INT_DELTAS and len(packed) < 2_000  # 588,889 bytes as text; deflate tops out near 1000:1


def test_shuffled_and_text_ids_round_trip_exactly():
    rng = np.random.default_rng(1)
    assert roundtrip([str(i) for i in rng.permutation(5_000)])[0] in (INT_DELTAS, LINES)
    assert roundtrip([f"P{rng.integers(10**9):09d}" for _ in range(5_000)])[0] == LINES
    # not canonical integers: packed as lines, so "007" and "-0" come back as written
    assert roundtrip(["007", "-0", "12"])[0] in (LINES, TEXT)
    assert roundtrip(["007", "-0", "12", "x"] * 50)[0] == LINES


def test_integer_ids_go_as_int_deltas_and_come_back_as_int64():
    ids = np.array([5, -3, 10**15, 7, 0], dtype=np.int64)
    encoding, packed = pack(ids)
    assert encoding == INT_DELTAS
    back = unpack(encoding, packed, len(ids))
    assert back.dtype == np.int64 and back.tolist() == ids.tolist()
    # consecutive ids pack to the same block as integers or as text
    assert pack(np.arange(1000)) == pack(np.arange(1000).astype(str))


def test_ids_with_a_newline_go_as_text():
    assert pack(np.array(["a\nb", "c"]))[0] == TEXT


def test_decoding_is_bounded_and_exact():
    with pytest.raises(IdError, match="not one complete block"):
        unpack(LINES, zlib.compress(b"x" * 10_000), 3)  # inflates past what 3 ids may need
    with pytest.raises(IdError, match="hold 2 ids, not 3"):
        unpack(LINES, zlib.compress(b"a\nb"), 3)
    with pytest.raises(IdError, match="hold 2 integers, not 3"):
        unpack(INT_DELTAS, zlib.compress(np.zeros(2, "<i8").tobytes()), 3)
    with pytest.raises(IdError, match="do not decompress"):
        unpack(LINES, b"not zlib", 1)
    with pytest.raises(IdError, match="NUL"):
        unpack(LINES, zlib.compress(b"a\x00\nb"), 2)


def test_the_coordinator_rebuilds_packed_ids_and_names_the_party_for_bad_ones():
    ids = np.array([str(i) for i in range(1000)])
    messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", np.zeros((1000, 1)), Layout.ROWS)], 1, 1 << 20))
    header = messages[0].header
    assert header.id_encoding == INT_DELTAS and header.packed_id_bytes < 200
    upload = Upload(plan_upload(header_from_proto(header)))
    for m in messages[1:]:
        upload.add(made(m).part)
    assert upload.finish().ids.tolist() == list(range(1000))  # canonical integers come back as int64

    header.packed_id_bytes += 1  # announces a byte that never comes
    short = Upload(plan_upload(header_from_proto(header)))
    for m in messages[1:]:
        short.add(made(m).part)
    with pytest.raises(SessionError, match=r"party 'a': upload ended after \d+ of \d+ packed id bytes"):
        short.finish()


def test_repeated_integer_ids_are_refused_naming_the_party():
    ids = np.array([3, 1, 2, 1], dtype=np.int64)
    messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", np.zeros((4, 1)), Layout.ROWS)], 1, 1 << 20))
    upload = Upload(plan_upload(header_from_proto(messages[0].header)))
    for m in messages[1:]:
        upload.add(made(m).part)
    with pytest.raises(SessionError, match=r"party 'a': duplicate record ids in the upload \('1'"):
        upload.finish()



def upload_of(ids: np.ndarray, budget: Budget | None = None) -> Upload:
    messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", np.zeros((len(ids), 1)), Layout.ROWS)],
                                    1, 1 << 20))
    upload = Upload(plan_upload(header_from_proto(messages[0].header)), budget=budget)
    for m in messages[1:]:
        upload.add(made(m).part)
    return upload


@pytest.mark.parametrize("encoding", [LINES, TEXT])
def test_text_ids_are_stored_compactly_one_long_id_widening_no_other(encoding):
    # 9,999 ids of 6 characters and one of 1,000: a numpy unicode array would take 10,000 x 1,000 x 4 = 40 MB
    ids = np.array([f"r{i:05d}" for i in range(9_999)] + ["x" * 1000])
    if encoding == TEXT:
        ids[0] = "a\nb"  # a newline sends every id as text
    budget = Budget("session 's'", 0)
    upload = upload_of(ids, budget)
    assert upload.plan.id_encoding == encoding
    got = upload.finish().ids
    assert got.dtype == TEXT_IDS and got.tolist() == ids.tolist()
    assert stored_bytes([6] * 9_999 + [1000]) == 16 * 10_000 + 1008 * 5 // 4 == 161_260
    assert upload.ids_held == 161_260
    assert budget.used == 161_260 + 10_000 * 8 and budget.peak < 3_000_000  # ids and the array, against 40 MB


def test_text_ids_stored_compactly_join_integer_ids_and_save_without_pickling(tmp_path):
    text = upload_of(np.array(["10", "2", "x" * 40, "été"])).finish().ids
    assert text.dtype == TEXT_IDS
    joined = join_ids({"a": text, "b": np.array([2, 10, 11], dtype=np.int64)})
    assert joined.ids.tolist() == ["10", "2"] and joined.index["b"].tolist() == [1, 0]
    np.savez(tmp_path / "ids.npz", ids=for_file(text))
    with np.load(tmp_path / "ids.npz") as z:  # allow_pickle is False by default
        assert z["ids"].dtype == np.dtype("<U40") and z["ids"].tolist() == ["10", "2", "x" * 40, "été"]
    assert as_text(text) is text
