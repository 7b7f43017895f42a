"""coordinator.join.repeats: whether an upload's ids repeat, for integer, pseudonym (16 bytes) and text ids."""

from __future__ import annotations

import numpy as np
import pytest

from coordinator.join import repeats
from protos.ids import TEXT_IDS


def pseudonyms(*values: bytes) -> np.ndarray:
    return np.array(values, dtype="S16")


def test_pseudonyms_sharing_their_first_eight_bytes_are_told_apart():
    ids = pseudonyms(b"AAAAAAAA" + b"x" * 8, b"AAAAAAAA" + b"y" * 8, b"BBBBBBBB" + b"x" * 8)
    assert not repeats(ids)


def test_a_repeated_pseudonym_is_found_among_many():
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 256, size=(10_000, 16), dtype=np.uint8).view("S16").reshape(-1)
    assert not repeats(ids)
    ids[7_000] = ids[12]
    assert repeats(ids)


def test_pseudonyms_differing_in_their_last_byte_or_in_a_trailing_zero_are_distinct():
    ids = pseudonyms(b"C" * 15 + b"\x01", b"C" * 15 + b"\x02", b"C" * 15, b"C" * 14)
    assert not repeats(ids)  # "C"*15 and "C"*14 are padded with zeros: their 16 bytes differ
    assert repeats(pseudonyms(b"C" * 15 + b"\x01", b"D" * 16, b"C" * 15 + b"\x01"))


@pytest.mark.parametrize("ids, repeated", [
    (np.arange(5), False),
    (np.array([4, 2, 9]), False),
    (np.array([4, 2, 4]), True),
    (np.array(["a", "b", "ab"], dtype=TEXT_IDS), False),
    (np.array(["a", "b", "a"], dtype=TEXT_IDS), True),
    (pseudonyms(), False),
])
def test_integer_and_text_ids_and_no_ids(ids, repeated):
    assert repeats(ids) is repeated


def test_agrees_with_a_set_on_random_pseudonyms_with_shared_prefixes():
    rng = np.random.default_rng(11)
    raw = rng.integers(0, 256, size=(2_000, 16), dtype=np.uint8)
    raw[:, :8] = rng.integers(0, 4, size=(2_000, 1), dtype=np.uint8)  # four first halves: many shared
    raw[:, 8:] = rng.integers(0, 6, size=(2_000, 8), dtype=np.uint8)
    ids = raw.view("S16").reshape(-1)
    for n in (10, 100, 2_000):
        assert repeats(ids[:n]) == (len(set(ids[:n].tolist())) != n)
