"""Value distortion of a block: VD, RP, RM, CP, CK (Thapa's thesis, "001", §2.4, eqs. 2.7-2.11).

Each compares an original block ``A`` (m objects x n attributes) with a
distorted or estimated block of the same shape: what a party sent, when it
sends one column per original column, or an attacker's reconstruction.
Ranks are ascending, ties sharing their average rank (scipy's ``rankdata``).

CP and CK rank the attributes by their average value. 001 range-normalises
the original data set (§2.2.1, eq. 2.1: each attribute scaled to [0, 1] by
its own minimum and range), distorts it, and ranks the distorted columns as
they come out. Here both blocks are range-normalised, each column by its own
minimum and range: a variant of 001, because the distorted block is a
disguise of a party's z-scored columns (whose means are all about 1e-16, so
that their ranks would follow the order of summation) or an estimate in the
original units, and the two blocks are put on the same footing. Each column's mean is summed
exactly (``math.fsum``), so the ranks do not depend on the order of the
rows. Where two attributes of a block have average values closer than
``TIE`` (of their [0, 1] range) their order is not determined: CP and CK are
then reported as None, not meaningful.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np
from scipy.stats import rankdata

from ppcsim.evaluate.privacy import _pair, vd

_shared = threading.local()

#: Range-normalised column means closer than this have no rank order (CP and CK are then not meaningful).
TIE = 1e-9


def attribute_means(block: np.ndarray) -> np.ndarray:
    """Each column's average value after range normalisation (001 eq. 2.1), summed exactly (``math.fsum``).

    A constant column is scaled by 1 instead of its zero range (its values all become 0).
    """
    low, span = block.min(axis=0), np.ptp(block, axis=0)
    scaled = (block - low) / np.where(span > 0, span, 1.0)
    return np.array([math.fsum(column) / block.shape[0] for column in scaled.T])


def attribute_ranks(block: np.ndarray) -> np.ndarray | None:
    """The ranks of a block's attributes by range-normalised average value, or None when two are within ``TIE``."""
    means = attribute_means(block)
    if means.size > 1 and np.min(np.diff(np.sort(means))) < TIE:
        return None
    return rankdata(means)


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


def ranks(original, distorted) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The element ranks within each column of both blocks, and the ranks of their attributes by average value.

    The attribute ranks are :func:`attribute_ranks` (None where not determined).
    """
    memo = getattr(_shared, "memo", None)
    if memo is not None and memo[0] is original and memo[1] is distorted:
        return memo[2]
    A, B = _pair(original, distorted)
    found = (rankdata(A, axis=0), rankdata(B, axis=0), attribute_ranks(A), attribute_ranks(B))
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


def attribute_rank_change(original, distorted) -> float | None:
    """CP (001 eq. 2.10): the mean absolute change of each attribute's rank by its (range-normalised) average value.

    None when either block's attribute ranks are not determined (two average values within ``TIE``).
    """
    _, _, ca, cb = ranks(original, distorted)
    return None if ca is None or cb is None else float(np.abs(ca - cb).mean())


def attribute_rank_maintenance(original, distorted) -> float | None:
    """CK (001 eq. 2.11): the share of attributes that keep their rank by (range-normalised) average value.

    None when either block's attribute ranks are not determined (two average values within ``TIE``).
    """
    _, _, ca, cb = ranks(original, distorted)
    return None if ca is None or cb is None else float((ca == cb).mean())


def distortion(original, distorted) -> dict[str, float | None]:
    """All five: ``{"vd", "rp", "rm", "cp", "ck"}`` (001 eqs. 2.7-2.11), ranking each block once."""
    with shared_ranks():
        return {"vd": vd(original, distorted), "rp": rank_position(original, distorted),
                "rm": rank_maintenance(original, distorted), "cp": attribute_rank_change(original, distorted),
                "ck": attribute_rank_maintenance(original, distorted)}
