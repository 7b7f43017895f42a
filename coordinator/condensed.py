"""Index arithmetic on condensed pairwise matrices (scipy's ``pdist`` order), shared by combine, sums and linkage."""

from __future__ import annotations

import numpy as np


def condensed_index(m: int, a, b):
    """Positions of the pairs (a, b), a != b, in the condensed triangle of an m x m matrix (scipy's order)."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return m * lo - lo * (lo + 1) // 2 + hi - lo - 1


def reorder_condensed(c: np.ndarray, m: int, index: np.ndarray) -> np.ndarray:
    """The condensed matrix of rows ``index`` (in that order) of the m x m matrix ``c``.

    Works row by row, so memory stays at the size of the output.
    """
    n = len(index)
    if n == m and np.array_equal(index, np.arange(m)):
        return c
    out = np.empty(n * (n - 1) // 2, dtype=c.dtype)
    start = 0
    for i in range(n - 1):
        out[start : start + n - i - 1] = c[condensed_index(m, index[i], index[i + 1 :])]
        start += n - i - 1
    return out
