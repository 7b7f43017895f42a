"""Record ids on the wire: plain strings, or packed and compressed, whichever is smaller.

Ids are not the disguised data the paper's cost model counts, but they cross
the wire all the same, and a million ids as strings cost several bytes each.
A party packs them in one of four encodings (``UploadHeader.id_encoding``):

- ``ID_TEXT``: ``IdChunk.ids``, one string each;
- ``ID_LINES_ZLIB``: the ids joined by newlines, UTF-8, zlib-compressed;
- ``ID_INT_DELTAS_ZLIB``: ids that are all canonical decimal integers, as the
  int64 differences between consecutive ids, little-endian, zlib-compressed
  (a run of consecutive ids compresses to almost nothing);
- ``ID_PSEUDONYMS_AES``: 16 bytes per id, keyed pseudonyms (parties.pseudonyms),
  in a session with pseudonymous ids (uncompressed: they look random). The
  first version's ``ID_PSEUDONYMS`` (HMAC-SHA256) is refused (``RETIRED``).

Integer ids (an int64 array, as a party builds for generated data) always go
as int deltas, and int deltas decode to int64: a million ids then never become
text on either side. An integer id equals the text of its canonical decimal
form (``as_text``), which is how integer and text ids meet in a join.

Decoding is bounded: a packed block that inflates past what ``n`` ids can
need, or that does not hold exactly ``n`` ids, is refused.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from protos.ppcsim.v1 import session_pb2

TEXT, LINES, INT_DELTAS = session_pb2.ID_TEXT, session_pb2.ID_LINES_ZLIB, session_pb2.ID_INT_DELTAS_ZLIB
PSEUDONYMS = session_pb2.ID_PSEUDONYMS_AES
ENCODINGS = (TEXT, LINES, INT_DELTAS, PSEUDONYMS)
#: Encodings no longer taken, and why (the coordinator's refusal says it).
RETIRED = {session_pb2.ID_PSEUDONYMS: "ID_PSEUDONYMS (HMAC-SHA256 pseudonyms) is retired: pseudonyms are "
                                      "ID_PSEUDONYMS_AES now (docs/protocol.md, 'Pseudonyms')"}
#: Bytes of one pseudonym in an ID_PSEUDONYMS_AES block.
PSEUDONYM_BYTES = 16
#: Longest id accepted in a packed block, in bytes (bounds what a block may inflate to).
MAX_ID_BYTES = 1024
_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,17}")


class IdError(ValueError):
    """Packed ids that do not decode to the announced number of ids."""


def as_text(ids: np.ndarray) -> np.ndarray:
    """``ids`` as text: integer ids in their canonical decimal form, pseudonyms (bytes) in hexadecimal, text ids
    as they are."""
    if ids.dtype.kind == "S":
        width = 2 * ids.dtype.itemsize
        digits = np.ascontiguousarray(ids).tobytes().hex()
        return np.array([digits[i : i + width] for i in range(0, len(digits), width)], dtype=f"U{width}")
    return ids.astype(str) if ids.dtype.kind in "iu" else ids


def _deltas(values: np.ndarray) -> bytes:
    """The ID_INT_DELTAS_ZLIB block of integer ids: differences of consecutive ids, little-endian int64, deflated."""
    return zlib.compress(np.diff(values.astype("<i8"), prepend=0).tobytes(), 6)


def _smallest(ids: np.ndarray) -> tuple[session_pb2.IdEncoding, bytes, int]:
    """The smallest encoding of ``ids``: ``(encoding, packed block, bytes it takes)``."""
    if ids.dtype.kind == "S":
        if ids.dtype.itemsize != PSEUDONYM_BYTES:
            raise IdError(f"pseudonyms have {PSEUDONYM_BYTES} bytes, not {ids.dtype.itemsize}")
        block = np.ascontiguousarray(ids).tobytes()
        return PSEUDONYMS, block, len(block)
    if ids.dtype.kind == "i":
        block = _deltas(ids)
        return INT_DELTAS, block, len(block)
    as_list = ids.tolist()
    best = (TEXT, b"", sum(len(i.encode()) + 2 for i in as_list))  # a string field costs its bytes and ~2
    if as_list and all(_INTEGER.fullmatch(i) for i in as_list):
        packed = _deltas(np.array(as_list, dtype=np.int64))
        best = min(best, (INT_DELTAS, packed, len(packed)), key=lambda b: b[2])
    if not any("\n" in i for i in as_list):
        packed = zlib.compress("\n".join(as_list).encode(), 6)
        best = min(best, (LINES, packed, len(packed)), key=lambda b: b[2])
    return best


def pack(ids: np.ndarray) -> tuple[session_pb2.IdEncoding, bytes]:
    """The smallest encoding of ``ids`` (text, or int64 which packs as int deltas): ``(encoding, packed block)``;
    ID_TEXT packs to b"". Pseudonyms (16-byte strings) pack as ID_PSEUDONYMS_AES."""
    encoding, block, _ = _smallest(ids)
    return encoding, block


def packed_size(ids: np.ndarray) -> int:
    """Bytes ``ids`` take in their smallest encoding: the packed block, or each text id's bytes and ~2 of framing."""
    return _smallest(ids)[2]


def unpack(encoding: int, packed: bytes | bytearray, n: int) -> np.ndarray:
    """The ``n`` ids a packed block holds: int64 for int deltas, 16-byte strings for pseudonyms, else text;
    IdError if it holds anything else."""
    if encoding == PSEUDONYMS:
        if len(packed) != n * PSEUDONYM_BYTES:
            raise IdError(f"packed pseudonyms take {n * PSEUDONYM_BYTES} bytes for {n} ids, not {len(packed)}")
        return np.frombuffer(packed, dtype=f"S{PSEUDONYM_BYTES}").copy()
    limit = n * 8 if encoding == INT_DELTAS else n * (MAX_ID_BYTES + 1)
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, limit + 1)
    except zlib.error as exc:
        raise IdError(f"packed ids do not decompress: {exc}") from None
    if len(raw) > limit or inflater.unconsumed_tail or not inflater.eof:
        raise IdError(f"packed ids are not one complete block of at most {limit} bytes for {n} ids")
    if encoding == INT_DELTAS:
        if len(raw) != n * 8:
            raise IdError(f"packed ids hold {len(raw) / 8:g} integers, not {n}")
        return np.cumsum(np.frombuffer(raw, dtype="<i8"), dtype=np.int64)
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise IdError("packed ids are not UTF-8 text") from None
    if "\x00" in text:
        raise IdError("packed ids contain a NUL character")
    ids = np.array(text.split("\n") if n else [], dtype=str)
    if len(ids) != n:
        raise IdError(f"packed ids hold {len(ids)} ids, not {n}")
    return ids
