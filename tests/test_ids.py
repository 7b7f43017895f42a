"""Record ids on the wire: the smallest encoding, exact round trips, and bounded decoding."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from coordinator.errors import SessionError
from coordinator.upload import Upload
from parties.client import upload_messages
from parties.methods import Sent
from protos.ids import INT_DELTAS, LINES, TEXT, IdError, as_text, pack, unpack
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
    upload = Upload("a", header)
    for m in messages[1:]:
        upload.add(m)
    assert upload.finish().ids.tolist() == list(range(1000))  # canonical integers come back as int64

    header.packed_id_bytes += 1  # announces a byte that never comes
    short = Upload("a", header)
    for m in messages[1:]:
        short.add(m)
    with pytest.raises(SessionError, match=r"party 'a': upload ended after \d+ of \d+ packed id bytes"):
        short.finish()


def test_repeated_integer_ids_are_refused_naming_the_party():
    ids = np.array([3, 1, 2, 1], dtype=np.int64)
    messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", np.zeros((4, 1)), Layout.ROWS)], 1, 1 << 20))
    upload = Upload("a", messages[0].header)
    for m in messages[1:]:
        upload.add(m)
    with pytest.raises(SessionError, match=r"party 'a': duplicate record ids in the upload \('1'"):
        upload.finish()

