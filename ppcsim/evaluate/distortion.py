"""Value distortion of a block: VD, RP, RM, CP, CK (Xu's thesis, "001", §2.4, eqs. 2.7-2.11).

Each compares an original block ``A`` (m objects x n attributes) with a
distorted or estimated block of the same shape: what a party sent, when it
sends one column per original column, or an attacker's reconstruction.
Ranks are ascending, ties sharing their average rank (scipy's ``rankdata``).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from ppcsim.evaluate.privacy import _pair, vd


def rank_position(original, distorted) -> float:
    """RP (001 eq. 2.8): the mean absolute change of each element's rank within its column."""
    A, B = _pair(original, distorted)
    return float(np.abs(rankdata(A, axis=0) - rankdata(B, axis=0)).mean())


def rank_maintenance(original, distorted) -> float:
    """RM (001 eq. 2.9): the share of elements that keep their rank within their column."""
    A, B = _pair(original, distorted)
    return float((rankdata(A, axis=0) == rankdata(B, axis=0)).mean())


def _attribute_ranks(A: np.ndarray) -> np.ndarray:
    return rankdata(A.mean(axis=0))


def attribute_rank_change(original, distorted) -> float:
    """CP (001 eq. 2.10): the mean absolute change of each attribute's rank by its average value."""
    A, B = _pair(original, distorted)
    return float(np.abs(_attribute_ranks(A) - _attribute_ranks(B)).mean())


def attribute_rank_maintenance(original, distorted) -> float:
    """CK (001 eq. 2.11): the share of attributes that keep their rank by average value."""
    A, B = _pair(original, distorted)
    return float((_attribute_ranks(A) == _attribute_ranks(B)).mean())


def distortion(original, distorted) -> dict[str, float]:
    """All five: ``{"vd", "rp", "rm", "cp", "ck"}`` (001 eqs. 2.7-2.11), ranking each block once."""
    A, B = _pair(original, distorted)
    ra, rb = rankdata(A, axis=0), rankdata(B, axis=0)
    ca, cb = _attribute_ranks(A), _attribute_ranks(B)
    return {"vd": vd(A, B), "rp": float(np.abs(ra - rb).mean()), "rm": float((ra == rb).mean()),
            "cp": float(np.abs(ca - cb).mean()), "ck": float((ca == cb).mean())}
