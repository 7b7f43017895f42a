"""Stress between original and disguised dissimilarities (004 eq. 6)."""

from __future__ import annotations

import numpy as np


def stress(d: np.ndarray, dhat: np.ndarray) -> float:
    """``sqrt(sum (dhat_ij - d_ij)^2 / sum d_ij^2)`` over all pairs (004 eq. 6).

    Parameters
    ----------
    d : ndarray of shape (n_pairs,)
        Dissimilarities in the original space (condensed, as scipy's pdist).
    dhat : ndarray of shape (n_pairs,)
        The same pairs in the disguised space.

    Returns
    -------
    float
        The relative error the distances suffer, on average; 0 when ``d`` is all zeros.
    """
    d, dhat = np.asarray(d, dtype=np.float64), np.asarray(dhat, dtype=np.float64)
    if d.shape != dhat.shape:
        raise ValueError(f"d and dhat must have the same shape, got {d.shape} and {dhat.shape}")
    denominator = float(np.dot(d, d))
    if denominator == 0.0:
        return 0.0
    diff = dhat - d
    return float(np.sqrt(np.dot(diff, diff) / denominator))
