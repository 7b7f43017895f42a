"""Pseudonyms of record ids: AES-256 of a one-block encoding of each id, all ids in one cipher call.

The scheme (``ID_PSEUDONYMS_AES``, docs/protocol.md "Pseudonyms"), for the
session's 32-byte pseudonym key K and one id taken as text (an integer id as
its canonical decimal text, so integer 7 and text "7" are one id and "007"
another), with b its UTF-8 bytes and L = len(b):

- L <= 15: the block is the byte L, then b, then 15 - L zero bytes;
- L >= 16: the block is the byte 0xFF, then the first 15 bytes of SHA-256(b);

and the pseudonym is AES-256 under K of that 16-byte block (one block of
AES, as ECB mode computes it for every block at once).

Why it is sound: AES under a key the coordinator does not hold
is a pseudorandom permutation, so without K nobody can compute a pseudonym or
test a guessed id against one; the encoding is injective on ids of up to 15
bytes (the first byte is their length, below 0x10) and collision-resistant
above (a different first byte, then 120 bits of SHA-256), so equal pseudonyms
mean equal ids, and two short ids never share a pseudonym. What the
coordinator still learns is what any deterministic pseudonym shows: which
records the parties share, and how many each holds.

Speed: the blocks of integer ids and of ASCII text ids are built with numpy
array operations, and the cipher runs once over all of them (AES-NI); only
ids longer than 15 bytes are hashed one by one (hashlib), and only non-ASCII
text is encoded one by one.
"""

from __future__ import annotations

import hashlib

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from protos.ids import PSEUDONYM_BYTES

#: Longest id (UTF-8 bytes) that goes into its block as it is; longer ones are hashed.
SHORT_BYTES = PSEUDONYM_BYTES - 1
#: First byte of a long id's block (a short id's first byte is its length, at most SHORT_BYTES).
LONG_MARK = 0xFF
_POWERS = np.array([10**j for j in range(1, 20)], dtype=np.uint64)


def _hash_long(blocks: np.ndarray, long: np.ndarray, texts: list[str]) -> None:
    """Fill the rows ``long`` of ``blocks`` for ids of more than SHORT_BYTES bytes, ``texts``: LONG_MARK, then the
    first 15 bytes of the SHA-256 of the id's UTF-8 bytes (one hashlib call per id)."""
    if len(texts):
        digests = b"".join([hashlib.sha256(t.encode()).digest()[:SHORT_BYTES] for t in texts])
        blocks[long, 0] = LONG_MARK
        blocks[long, 1:] = np.frombuffer(digests, dtype=np.uint8).reshape(len(texts), SHORT_BYTES)


def _integer_blocks(ids: np.ndarray) -> np.ndarray:
    """The blocks of integer ids, from their canonical decimal digits computed by array operations."""
    a = ids.astype(np.int64, copy=False)
    n = len(a)
    blocks = np.zeros((n, PSEUDONYM_BYTES), dtype=np.uint8)
    neg = a < 0
    mag = a.view(np.uint64).copy()
    np.negative(mag, out=mag, where=neg)  # two's complement negation modulo 2**64: |a|, even for -2**63
    digits = np.searchsorted(_POWERS, mag, side="right") + 1
    length = digits + neg
    short = length <= SHORT_BYTES
    blocks[:, 0] = np.where(short, length, LONG_MARK)
    width = int(digits[short].max()) if short.any() else 0
    text = _digits(mag, width)
    # rows grouped by (digits, sign): within a group every id's text sits at the same columns, and moves as one
    # item of `digits` bytes (a void view of the row's bytes)
    group = np.where(short, digits * 2 + neg, 0).astype(np.uint8)
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(2 * width + 3))
    for g in range(2, 2 * width + 2):
        idx = order[bounds[g] : bounds[g + 1]]
        if len(idx):
            d, sign = divmod(g, 2)
            if idx[-1] - idx[0] + 1 == len(idx):  # a run of rows (sequential ids): slices, no gather
                rows_ = slice(int(idx[0]), int(idx[-1]) + 1)
                blocks[rows_, 1 + sign : 1 + sign + d] = text[rows_, width - d :]
                if sign:
                    blocks[rows_, 1] = ord("-")
                continue
            if sign:
                blocks[idx, 1] = ord("-")
            _items(blocks, 1 + sign, d)[idx] = _items(text, width - d, d)[idx]
    _hash_long(blocks, ~short, [str(v) for v in a[~short].tolist()])
    return blocks


#: The two ASCII digits of 0..99 as one little-endian uint16 each ("07" is 0x3730).
_PAIRS = np.array([(ord(str(i // 10)) | ord(str(i % 10)) << 8) for i in range(100)], dtype="<u2")


def _digits(mag: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` last decimal digits of each of ``mag`` (uint64) as ASCII, right-aligned: an (n, width) array.

    Two digits per step (a table of the hundred pairs), from 32-bit divisions (several times faster than 64-bit
    ones in numpy): the low 8 digits from ``mag mod 10**8``, the others from ``mag // 10**8``, which is below
    10**7 for the 15-digit ids it is used for.
    """
    even = width + width % 2
    pairs = np.empty((len(mag), even // 2), dtype="<u2")
    parts = [(mag, even)] if even <= 8 else [(mag % np.uint64(10**8), 8), (mag // np.uint64(10**8), even - 8)]
    column = even // 2
    for part, count in parts:
        rest = part.astype(np.uint32)  # exact: below 10**9 in every row whose digits are used
        for _ in range(count // 2):
            quotient = rest // np.uint32(100)
            column -= 1
            pairs[:, column] = _PAIRS[rest - quotient * np.uint32(100)]
            rest = quotient
    return np.ascontiguousarray(pairs.view(np.uint8)[:, even - width :])


def _items(rows: np.ndarray, start: int, size: int) -> np.ndarray:
    """Bytes ``start`` to ``start + size`` of every row of the C-contiguous uint8 matrix ``rows``, as one
    ``size``-byte item per row (a view), so that fancy indexing moves each row's bytes as a unit."""
    return np.ndarray((rows.shape[0],), dtype=f"V{size}", buffer=rows, offset=start, strides=(rows.shape[1],))


def _text_blocks(ids: np.ndarray) -> np.ndarray:
    """The blocks of text ids: ASCII ids by array operations, other text through UTF-8 one id at a time."""
    ids = np.asarray(ids, dtype=str)
    n = len(ids)
    blocks = np.zeros((n, PSEUDONYM_BYTES), dtype=np.uint8)
    if n == 0:
        return blocks
    width = ids.dtype.itemsize // 4
    points = np.ascontiguousarray(ids).view(np.uint32).reshape(n, width)
    if int(points.max()) < 0x80:
        raw, length = points.astype(np.uint8), np.char.str_len(ids)
    else:
        encoded = np.char.encode(ids, "utf-8")
        raw = encoded.view(np.uint8).reshape(n, encoded.dtype.itemsize)
        length = np.char.str_len(encoded)
    short = length <= SHORT_BYTES
    take = min(raw.shape[1], SHORT_BYTES)
    blocks[:, 0] = length
    blocks[:, 1 : 1 + take] = raw[:, :take]  # the rest of each row is zero already (NUL-padded strings)
    _hash_long(blocks, ~short, ids[~short].tolist())
    return blocks


def id_blocks(ids: np.ndarray) -> np.ndarray:
    """The 16-byte block of each id, as an (n, 16) uint8 array (the encoding in the module's docstring)."""
    return _integer_blocks(ids) if ids.dtype.kind in "iu" else _text_blocks(ids)


def pseudonyms(key: bytes, ids: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """The pseudonym of each id under the 32-byte ``key``, as ``PSEUDONYM_BYTES``-byte strings in the same order.

    AES-256 of each id's block (``id_blocks``), ``block`` ids at a time (so
    the working arrays stay near ``block`` ids' worth, whatever the number
    of ids), each batch in one call of the ``cryptography`` library.
    """
    out = np.empty((len(ids), PSEUDONYM_BYTES), dtype=np.uint8)  # raw bytes: no string semantics on the way
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()  # one block per id: ECB is the bare cipher
    for start in range(0, len(ids), block):
        blocks = np.ascontiguousarray(id_blocks(ids[start : start + block]))
        out[start : start + len(blocks)] = np.frombuffer(encryptor.update(blocks.tobytes()),
                                                         dtype=np.uint8).reshape(blocks.shape)
    encryptor.finalize()
    return out.view(f"S{PSEUDONYM_BYTES}").reshape(len(ids))
