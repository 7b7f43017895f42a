"""Distortion of a block's structure: CM, CCA and knnM (Thapa thesis, "001", ch. 7, eqs. 7.1-7.15).

Unlike VD, RP and RM (001 eqs. 2.7-2.9), which compare values one by one,
these compare what data mining uses: the columns' correlations (CM), the
linear relation between the two blocks as wholes (CCA) and each record's
neighbourhood (knnM). 1 (CM, CCA) or 0 (knnM) is "no distortion". CCA and
knnM compare blocks of different widths too (a projection to fewer columns);
CM pairs column i with column i and needs the same width.

knnM has two readings in 001. Eq. 7.12 sums the change of each neighbour's
rank, ``knnM = sum_i (Rank(A)_i^c - Rank(A~)_i^c) / n``, which is 0 under a
rotation (eq. 7.13); Table 7.5, measured on rotated data, instead prints
values just under the neighbourhood size (4.83 for knnM(5) on iris) and
reads "the closer the numbers are to the size of the neighbourhood, the more
similar", which is the number of a record's k neighbours that stay among its
k neighbours. :func:`knnm` is the equation (with the absolute change, since
the signed changes of a permutation of ranks sum to 0 and the thesis reads
higher values as more distortion); :func:`knnm_neighbours` is the table's
reading. Both follow the same kNN join (001 §7.2.3): pick a record at random,
take its k nearest neighbours in the original, remove them all, repeat until
no record is left.
"""

from __future__ import annotations

import numpy as np

#: Neighbourhood size of the reported knnM (001 Table 7.5 uses 5, 10 and 15).
KNNM_K = 5
#: Seed of the kNN join's random picks: the same picks for every pair of blocks of the same records.
KNNM_SEED = 7


def _blocks(original, distorted, *, same_width: bool) -> tuple[np.ndarray, np.ndarray]:
    A = np.asarray(original, dtype=np.float64)
    B = np.asarray(distorted, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"both blocks must be 2-D (records x columns), got shapes {A.shape} and {B.shape}")
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"both blocks must hold the same records, got {A.shape[0]} and {B.shape[0]} rows")
    if same_width and A.shape[1] != B.shape[1]:
        raise ValueError(f"both blocks must have the same columns, got {A.shape[1]} and {B.shape[1]}")
    if A.shape[0] < 2:
        raise ValueError("both blocks need at least two records")
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        raise ValueError("both blocks must hold only finite values")
    return A, B


def correlation_measure(original, distorted) -> float:
    """CM (001 eq. 7.1): the mean over columns of the correlation of column i of each block.

    ``CM = sum_i Corr(A_i, A~_i) / n``; in [-1, 1], 1 for a translated copy
    (eq. 7.2), towards 0 with added noise (eq. 7.8). A column constant in
    either block has no correlation and counts 0.

    Parameters
    ----------
    original, distorted : ndarray of shape (m, n)

    Returns
    -------
    float
    """
    A, B = _blocks(original, distorted, same_width=True)
    a, b = A - A.mean(axis=0), B - B.mean(axis=0)
    norms = np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=0)
    scale = np.maximum(np.abs(A).max(axis=0), 1.0) * np.maximum(np.abs(B).max(axis=0), 1.0) * A.shape[0]
    usable = norms > 1e-12 * scale
    corr = np.where(usable, (a * b).sum(axis=0) / np.where(usable, norms, 1.0), 0.0)
    return float(np.clip(corr, -1.0, 1.0).mean())


def _basis(block: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the centred block's column space (its rank's left singular vectors)."""
    centred = block - block.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return u[:, :0]
    return u[:, s > s[0] * max(block.shape) * np.finfo(np.float64).eps]


def canonical_correlations(original, distorted) -> np.ndarray:
    """The canonical correlations of two blocks of the same records (001 eq. 7.9), largest first.

    The singular values of ``R11^-1/2 R12 R22^-1/2`` on the standardised
    blocks, computed as the singular values of ``Qa' Qb`` with ``Qa``, ``Qb``
    orthonormal bases of the centred blocks' column spaces (the same numbers,
    without inverting a correlation matrix, and defined when a block has a
    constant or repeated column). There are as many as the smaller rank.
    """
    A, B = _blocks(original, distorted, same_width=False)
    qa, qb = _basis(A), _basis(B)
    if qa.shape[1] == 0 or qb.shape[1] == 0:
        return np.zeros(0)
    return np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0.0, 1.0)


def cca(original, distorted) -> float:
    """CCA (001 eq. 7.10): the sum of the canonical correlations over the original's number of attributes.

    1 for a translated (eq. 7.11), rescaled or rotated copy: any invertible
    linear map of the columns keeps every canonical correlation at 1. A block
    of k' < n columns has at most k' canonical correlations, so a projection
    scores at most k' / n: the dimensions it dropped count as lost.

    Parameters
    ----------
    original : ndarray of shape (m, n)
    distorted : ndarray of shape (m, k)
        Any number of columns.

    Returns
    -------
    float
        In [0, 1].
    """
    A, _ = _blocks(original, distorted, same_width=False)
    return float(canonical_correlations(original, distorted).sum() / A.shape[1])


def _join_ranks(A: np.ndarray, B: np.ndarray, k: int, seed: int):
    """The kNN join of 001 §7.2.3 on ``A``, and each neighbour's rank by distance from its pick in both blocks.

    Yields, per cluster, the ranks (1 = nearest) of the pick's k nearest
    records of ``A`` among the records still left, in ``A`` and in ``B``; a
    rank counts the records strictly nearer (by more than 1e-9 of the largest
    distance, so that rounding breaks no tie) plus one.
    """
    rng = np.random.default_rng(seed)
    left = np.ones(A.shape[0], dtype=bool)
    while left.any():
        candidates = np.flatnonzero(left)
        pick = candidates[rng.integers(candidates.size)]
        left[pick] = False
        others = np.flatnonzero(left)
        if others.size == 0:
            break
        da = np.linalg.norm(A[others] - A[pick], axis=1)
        db = np.linalg.norm(B[others] - B[pick], axis=1)
        near = np.argsort(da, kind="stable")[:k]
        rank = []
        for d in (da, db):
            tol = 1e-9 * max(float(d.max()), 1e-300)
            rank.append((d[None, :] < d[near][:, None] - tol).sum(axis=1) + 1)
        left[others[near]] = False
        yield rank[0], rank[1]


def knnm(original, distorted, k: int = KNNM_K, *, seed: int = KNNM_SEED) -> float:
    """knnM (001 eq. 7.12): the mean change of a neighbour's rank from its kNN join pick.

    ``knnM = sum_i |Rank(A)_i^c - Rank(A~)_i^c| / n`` over the n records
    that are a pick's neighbour, ranks by distance from the pick among the
    records not yet taken; 0 when every neighbourhood keeps its order, as
    under a rotation (eq. 7.13), larger is more distortion. Table 7.5 of the
    thesis reports another figure under this name (see
    :func:`knnm_neighbours` and the module's text).

    Parameters
    ----------
    original : ndarray of shape (m, n)
    distorted : ndarray of shape (m, k')
        Any number of columns.
    k : int, default=5
        Neighbourhood size (001 uses 5, 10, 15).
    seed : int
        Seed of the join's random picks.

    Returns
    -------
    float
    """
    A, B = _blocks(original, distorted, same_width=False)
    changes = [np.abs(ra - rb) for ra, rb in _join_ranks(A, B, k, seed)]
    return float(np.concatenate(changes).mean()) if changes else 0.0


def knnm_neighbours(original, distorted, k: int = KNNM_K, *, seed: int = KNNM_SEED) -> float:
    """knnM as 001 Table 7.5 reports it: how many of a pick's k neighbours stay among its k nearest.

    Averaged over the kNN join's clusters (the last may have fewer than k
    records: its count is scaled to k); k for a rotation, lower is more
    distortion. Eq. 7.12, as written, is :func:`knnm`.

    Parameters
    ----------
    original : ndarray of shape (m, n)
    distorted : ndarray of shape (m, k')
    k : int, default=5
    seed : int

    Returns
    -------
    float
        In [0, k].
    """
    A, B = _blocks(original, distorted, same_width=False)
    kept = [k * float(np.mean(rb <= len(rb))) for _, rb in _join_ranks(A, B, k, seed)]
    return float(np.mean(kept)) if kept else float(k)
