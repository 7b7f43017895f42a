"""Value distortion of a block: VD, RP, RM, CP, CK (Xu's thesis, "001", §2.4, eqs. 2.7-2.11).

Each compares an original block ``A`` (m objects x n attributes) with a
distorted or estimated block of the same shape: what a party sent, when it
sends one column per original column, or an attacker's reconstruction.
Ranks are ascending, ties sharing their average rank (scipy's ``rankdata``).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np
from scipy.stats import rankdata

from ppcsim.evaluate.privacy import _pair, vd

_shared = threading.local()


@contextmanager
def shared_ranks():
    """Within this block, the rank metrics of the same pair of arrays (the same objects) rank them once.

    The four rank metrics sort every column of both blocks; scoring one
    estimate with all four (as ``ppcsim.evaluate.scores.scores`` does) then
    sorts them once instead of four times. Outside the block nothing is kept.
    """
    _shared.active, _shared.memo = True, None
    try:
        yield
    finally:
        _shared.active, _shared.memo = False, None


def ranks(original, distorted) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The element ranks within each column of both blocks, and the ranks of their attributes by average value."""
    memo = getattr(_shared, "memo", None)
    if memo is not None and memo[0] is original and memo[1] is distorted:
        return memo[2]
    A, B = _pair(original, distorted)
    found = (rankdata(A, axis=0), rankdata(B, axis=0), rankdata(A.mean(axis=0)), rankdata(B.mean(axis=0)))
    if getattr(_shared, "active", False):
        _shared.memo = (original, distorted, found)
    return found


def rank_position(original, distorted) -> float:
    """RP (001 eq. 2.8): the mean absolute change of each element's rank within its column."""
    ra, rb, _, _ = ranks(original, distorted)
    return float(np.abs(ra - rb).mean())


def rank_maintenance(original, distorted) -> float:
    """RM (001 eq. 2.9): the share of elements that keep their rank within their column."""
    ra, rb, _, _ = ranks(original, distorted)
    return float((ra == rb).mean())


def attribute_rank_change(original, distorted) -> float:
    """CP (001 eq. 2.10): the mean absolute change of each attribute's rank by its average value."""
    _, _, ca, cb = ranks(original, distorted)
    return float(np.abs(ca - cb).mean())


def attribute_rank_maintenance(original, distorted) -> float:
    """CK (001 eq. 2.11): the share of attributes that keep their rank by average value."""
    _, _, ca, cb = ranks(original, distorted)
    return float((ca == cb).mean())


def distortion(original, distorted) -> dict[str, float]:
    """All five: ``{"vd", "rp", "rm", "cp", "ck"}`` (001 eqs. 2.7-2.11), ranking each block once."""
    with shared_ranks():
        return {"vd": vd(original, distorted), "rp": rank_position(original, distorted),
                "rm": rank_maintenance(original, distorted), "cp": attribute_rank_change(original, distorted),
                "ck": attribute_rank_maintenance(original, distorted)}
