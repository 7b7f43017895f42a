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

Text ids decode to numpy's variable-width strings (``TEXT_IDS``): each id's
UTF-8 bytes, inline in its 16-byte element up to 15 bytes, else in the
array's own buffer, so that one long id never makes every row as wide as it
is (a numpy unicode array takes rows x longest id x 4 bytes).
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
#: How text ids are held once decoded: numpy's variable-width UTF-8 strings (see the module docstring).
TEXT_IDS = np.dtypes.StringDType()
#: Bytes of one element of a TEXT_IDS array; an id longer than TEXT_INLINE_BYTES is stored beside it as well.
TEXT_ELEMENT_BYTES = 16
TEXT_INLINE_BYTES = 15
#: Bytes of text decoded at a time into a TEXT_IDS array.
WINDOW = 1 << 18
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


def stored_bytes(lengths: np.ndarray | list[int]) -> int:
    """Bytes a TEXT_IDS array takes for ids of these UTF-8 ``lengths``: TEXT_ELEMENT_BYTES each, and an id longer
    than TEXT_INLINE_BYTES its bytes and 8 more beside, counted a quarter over for the buffer's growth."""
    lengths = np.asarray(lengths, dtype=np.int64)
    beside = lengths[lengths > TEXT_INLINE_BYTES]
    return TEXT_ELEMENT_BYTES * len(lengths) + int(beside.sum() + 8 * len(beside)) * 5 // 4


def text_ids(ids: np.ndarray) -> np.ndarray:
    """Ids as TEXT_IDS where ids held differently meet (a join): integers in their canonical decimal form, text
    of a numpy unicode array as it is; pseudonyms as they are."""
    return ids.astype(TEXT_IDS) if ids.dtype.kind in "iuU" else ids


def for_file(ids: np.ndarray) -> np.ndarray:
    """``as_text(ids)`` as a numpy unicode array, which ``np.save`` writes without pickling (TEXT_IDS arrays
    would be pickled)."""
    text = as_text(ids)
    if text.dtype.kind != "T":
        return text
    return text.astype(f"U{max(1, int(np.strings.str_len(text).max(initial=0)))}")  # astype(str) cannot size it


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
    if b"\x00" in raw:
        raise IdError("packed ids contain a NUL character")
    return _lines(raw, n)


def _lines(raw: bytes, n: int) -> np.ndarray:
    """The ``n`` newline-separated UTF-8 ids of ``raw`` as a TEXT_IDS array, decoded WINDOW bytes at a time (the
    Python strings in between stay few)."""
    held = raw.count(b"\n") + 1 if n else 0
    if held != n:
        raise IdError(f"packed ids hold {held} ids, not {n}")
    ids = np.empty(n, dtype=TEXT_IDS)
    view, start, done = memoryview(raw), 0, 0
    while done < n:
        end = raw.rfind(b"\n", start, start + WINDOW)  # the window's last whole line
        if end < 0:
            end = raw.find(b"\n", start)  # a line longer than the window
        if end < 0:
            end = len(raw)  # the last line
        try:
            lines = str(view[start:end], "utf-8").split("\n")
        except UnicodeDecodeError:
            raise IdError("packed ids are not UTF-8 text") from None
        ids[done : done + len(lines)] = lines
        start, done = end + 1, done + len(lines)
    return ids
