"""Neighbourhood preservation and class compactness (Alotaibi's thesis, "000", §5.3.3, eqs. 5.21-5.23)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import squareform

#: 000 Tables 5.8 and 5.9 average both measures over k = 3..10.
K_RANGE = tuple(range(3, 11))


def _square(distances) -> np.ndarray:
    D = np.asarray(distances, dtype=np.float64)
    if D.ndim == 1:
        D = squareform(D, checks=False)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"distances must be a square or condensed matrix, got shape {D.shape}")
    return D


def neighbours(distances, k: int) -> np.ndarray:
    """The k nearest neighbours of every object (itself excluded), shape (m, k), nearest first.

    Ties are broken by the lower index (a stable sort), the same way for the
    original and the disguised data.
    """
    D = _square(distances).copy()
    m = D.shape[0]
    if not 1 <= k < m:
        raise ValueError(f"k must be between 1 and {m - 1} for {m} objects, got {k}")
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def _shared(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """Mean over objects of |first k of a ∩ first k of b| / k (neighbour lists hold no repeats)."""
    return float((a[:, :k, None] == b[:, None, :k]).any(axis=2).sum() / (k * a.shape[0]))


def _compact(nn: np.ndarray, labels: np.ndarray, k: int) -> float:
    same = (labels[nn[:, :k]] == labels[:, None]).mean(axis=1)
    return float(np.mean([same[labels == c].mean() for c in np.unique(labels)]))


def neighbourhood_preservation(original, disguised, k: int) -> float:
    """NP (000 eq. 5.21): ``(1/k) sum_i |U_k(x_i) ∩ U_k(y_i)| / m``.

    The average share of each object's k nearest neighbours in the original
    data that are still among its k nearest in the disguised data; 1 keeps
    every neighbourhood.

    Parameters
    ----------
    original, disguised : ndarray, square (m, m) or condensed
        Pairwise distances of the same m objects, in the same order.
    k : int
        Neighbours per object.
    """
    return _shared(neighbours(original, k), neighbours(disguised, k), k)


def class_compactness(distances, labels, k: int) -> float:
    """CC (000 eqs. 5.22-5.23): per class, the share of each member's k nearest neighbours in that class; mean over classes.

    ``CC_j = (1/k) sum_{x_i in c_j} |U_k(x_i, c_j)| / m(c_j)`` and
    ``CC = (1/s) sum_j CC_j``. Computed on the data whose ``distances`` are
    given (disguised or original); 1 means every neighbour shares the class.
    """
    labels = np.asarray(labels)
    nn = neighbours(distances, k)
    if labels.shape != (nn.shape[0],):
        raise ValueError(f"labels must have one entry per object ({nn.shape[0]}), got shape {labels.shape}")
    return _compact(nn, labels, k)


def profile(original, disguised, labels=None, ks=K_RANGE) -> dict:
    """NP, and with ``labels`` CC of the disguised and of the original data, each averaged over ``ks``.

    000 Tables 5.8 and 5.9 report these averages over k = 3..10. Values of k
    that need more objects than there are are left out. The neighbour lists
    are sorted once, at the largest k.

    Returns
    -------
    dict
        ``{"np": {"mean", "by_k"}, "cc": {...}, "cc_original": {...}}`` (CC only with labels),
        or ``{}`` when there are too few objects.
    """
    m = _square(original).shape[0]
    ks = [k for k in ks if k < m]
    if not ks:
        return {}
    a, b = neighbours(original, max(ks)), neighbours(disguised, max(ks))

    def avg(values: dict) -> dict:
        return {"mean": float(np.mean(list(values.values()))), "by_k": values}

    out = {"np": avg({str(k): _shared(a, b, k) for k in ks})}
    if labels is not None:
        labels = np.asarray(labels)
        out["cc"] = avg({str(k): _compact(b, labels, k) for k in ks})
        out["cc_original"] = avg({str(k): _compact(a, labels, k) for k in ks})
    return out
