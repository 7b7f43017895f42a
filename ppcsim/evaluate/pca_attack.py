"""000's PCA-based attack with a known sample (§4.5, Algorithm 4.3) and its eigenstructure distances (eqs. 4.25-4.26).

The attacker holds a sample ``S`` of records drawn from the distribution of
the original data and the disguised block ``Y`` (m x p, p <= n). It pads
``Y`` with zero columns to ``X^`` (step 1, as §4.4.4 does; zero variances get
a small 1e-4 so that the covariance has full rank, §4.5.4), eigendecomposes
the covariance matrices of ``X^`` and ``S`` (steps 2-3), picks the mirror
image (the signs) of the eigenvectors by two-sample Kolmogorov-Smirnov tests
(steps 4-9) and maps ``X^`` onto the sample's principal axes (step 10):
``X' = (X^ - mean) U_X^ diag(signs) U_S' + mean(S)``.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.stats import ks_2samp

#: Columns up to which every one of the 2^n mirror images is tested jointly (000 Algorithm 4.3, steps 4-9).
EXHAUSTIVE_COLUMNS = 12
#: Records of each side the joint search compares at most (a seeded sample; the pick's p-value uses them all).
SEARCH_ROWS = 200
#: Mirror images the joint search compares again on every record, the best of the sampled comparison.
FINALISTS = 8
#: The variance given to a padded zero column (000 §4.5.4: "we added small noise (0.0001) to all zero diagonals").
PAD_VARIANCE = 1e-4


def _ks_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample KS p-value (exact where scipy can, else asymptotic, without its warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(ks_2samp(a, b).pvalue)


def _eigen(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors (columns, in that order) of the block's covariance matrix."""
    cov = np.atleast_2d(np.cov(block, rowvar=False))
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def pad(disguised: np.ndarray, n: int) -> np.ndarray:
    """000 Algorithm 4.3 step 1: the disguised block up-scaled to n columns with zero-valued features."""
    Y = np.asarray(disguised, dtype=np.float64)
    if Y.shape[1] > n:
        raise ValueError(f"the disguised block has {Y.shape[1]} columns, more than the original's {n}: it cannot be "
                         "up-scaled by zero-valued features")
    return np.hstack([Y, np.zeros((Y.shape[0], n - Y.shape[1]))])


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The two-sample KS statistic along the last axis of ``a`` (..., n1) against ``b`` (..., n2), batched."""
    n1, n2 = a.shape[-1], b.shape[-1]
    both = np.concatenate([a, np.broadcast_to(b, a.shape[:-1] + (n2,))], axis=-1)
    steps = np.concatenate([np.full(n1, 1.0 / n1), np.full(n2, -1.0 / n2)])
    order = np.argsort(both, axis=-1, kind="stable")
    return np.abs(np.cumsum(steps[order], axis=-1)).max(axis=-1)


def pca_attack(sample: np.ndarray, disguised: np.ndarray, *, exhaustive: bool | None = None,
               random_state=0) -> dict:
    """000 Algorithm 4.3: recover the original block from the disguised one and a sample of the original data.

    Parameters
    ----------
    sample : ndarray of shape (s, n)
        ``S``: records drawn from the original data's distribution.
    disguised : ndarray of shape (m, p), p <= n
        ``Y``, what the party sent.
    exhaustive : bool, optional
        True tests all 2^n mirror images jointly, as the algorithm states:
        each recovers ``X'`` and is scored by the smallest KS p-value of its
        columns against the sample's (the largest KS statistic, which orders
        them the same way at fixed sizes), first on at most ``SEARCH_ROWS``
        records of each, then, for the ``FINALISTS`` best, on every record;
        the highest wins. False picks each eigenvector's sign on its own, by the KS
        p-value of the projections ``S u_S`` and ``X^ u_X^`` (2n tests).
        Default: exhaustive when n <= ``EXHAUSTIVE_COLUMNS``.
    random_state : int or Generator
        Seed of the joint search's record sample.

    Returns
    -------
    dict
        ``estimate`` (m, n), ``signs`` (n,), ``pvalue`` (the smallest KS
        p-value of the estimate's columns against the sample's, on every
        record), ``exhaustive``, and the eigenstructures ``values_sample``,
        ``vectors_sample``, ``values_disguised``, ``vectors_disguised``.
    """
    S = np.asarray(sample, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] < 2:
        raise ValueError(f"the sample must be a 2-D block of at least two records, got shape {S.shape}")
    n = S.shape[1]
    X_hat = pad(disguised, n)
    centred = X_hat - X_hat.mean(axis=0)
    flat = centred.var(axis=0) == 0
    if flat.any():  # §4.5.4: the padded columns' zero variances made small, so that every axis is defined
        centred = centred.copy()
        centred[:, flat] = np.random.default_rng(random_state).normal(scale=np.sqrt(PAD_VARIANCE),
                                                                      size=(len(centred), int(flat.sum())))
    values_s, U_s = _eigen(S)
    values_x, U_x = _eigen(centred)
    P_x, P_s = centred @ U_x, (S - S.mean(axis=0)) @ U_s  # the principal components of both
    exhaustive = n <= EXHAUSTIVE_COLUMNS if exhaustive is None else exhaustive
    if exhaustive:
        rng = np.random.default_rng(random_state)
        rows_x = rng.choice(len(P_x), size=min(SEARCH_ROWS, len(P_x)), replace=False)
        rows_s = rng.choice(len(S), size=min(SEARCH_ROWS, len(S)), replace=False)
        target = S[rows_s].T  # n x s
        every = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        worst = np.empty(len(every))
        for chunk in np.array_split(np.arange(len(every)), max(1, len(every) // 64)):
            # (c, rows, n): each mirror image's recovered columns, compared column by column with the sample's
            recovered = np.einsum("rk,ck,jk->crj", P_x[rows_x], every[chunk], U_s) + S.mean(axis=0)
            worst[chunk] = _ks_statistic(np.swapaxes(recovered, 1, 2), target).max(axis=1)
        # the few best on the sampled records, compared again on every record: the pick does not hang on the sample
        finalists = every[np.argsort(worst, kind="stable")[:FINALISTS]]
        mean = S.mean(axis=0)
        scored = [max(_ks_statistic(((P_x * d) @ U_s.T + mean)[:, j], S[:, j]) for j in range(n)) for d in finalists]
        signs = finalists[int(np.argmin(scored))]
    else:
        signs = np.array([1.0 if _ks_pvalue(P_s[:, j], P_x[:, j]) >= _ks_pvalue(P_s[:, j], -P_x[:, j]) else -1.0
                          for j in range(n)])
    estimate = (P_x * signs) @ U_s.T + S.mean(axis=0)
    pvalue = min(_ks_pvalue(estimate[:, j], S[:, j]) for j in range(n))
    return {"estimate": estimate, "signs": signs, "pvalue": pvalue, "exhaustive": bool(exhaustive),
            "values_sample": values_s, "vectors_sample": U_s, "values_disguised": values_x, "vectors_disguised": U_x}


def _bottleneck(cost: np.ndarray) -> float:
    """``min over permutations pi of max_i cost[i, pi(i)]`` (a bottleneck assignment), by bisection on the costs."""
    levels = np.unique(cost)
    low, high = 0, len(levels) - 1
    while low < high:
        mid = (low + high) // 2
        allowed = cost <= levels[mid]
        rows, cols = linear_sum_assignment(~allowed)
        if allowed[rows, cols].all():
            high = mid
        else:
            low = mid + 1
    return float(levels[low])


def md_eigenvalues(values: np.ndarray, perturbed: np.ndarray) -> float:
    """000 eq. 4.25: ``md = min_pi max_i |lambda~_pi(i) - lambda_i|``, on eigenvalues as shares of their sum.

    000 compares "the proportional change in the eigenvalues ratio (shape)"
    (§4.5.4): each set is divided by its sum, so that a disguise that only
    rescales (an embedding, a projection) is not counted as a change.
    """
    a = np.asarray(values, dtype=np.float64)
    b = np.asarray(perturbed, dtype=np.float64)
    a, b = a / max(a.sum(), 1e-300), b / max(b.sum(), 1e-300)
    return _bottleneck(np.abs(a[:, None] - b[None, :]))


def md_eigenvectors(vectors: np.ndarray, perturbed: np.ndarray) -> float:
    """000 eq. 4.26: ``md = min_pi max_i arccos |u~_pi(i)' u_i|``, in radians (an eigenvector's sign is arbitrary)."""
    cos = np.clip(np.abs(np.asarray(vectors).T @ np.asarray(perturbed)), 0.0, 1.0)
    return _bottleneck(np.arccos(cos))


def distance_error(original: np.ndarray, recovered: np.ndarray) -> float:
    """000 §4.5.4's average distance error: the mean Euclidean distance between a record and its recovery."""
    return float(np.linalg.norm(np.asarray(original) - np.asarray(recovered), axis=1).mean())
