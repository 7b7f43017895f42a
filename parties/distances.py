"""Pairwise distances between a party's records as condensed upper triangles, without importing scipy for small
sets.

A party process that disguises a few hundred records with ``drbt`` (004 eq. 6's local stress) or ``osbr``
(004 eq. 3 squared, the L1 part of eq. 5) needs ``scipy.spatial.distance.pdist`` on them, and importing
``scipy.spatial`` (which imports scipy.sparse, scipy.linalg and scipy.special) costs a process about 0.3
CPU-seconds, more than the distances themselves. Up to ``OWN_ROWS`` records, :func:`pdist` computes them here
with numpy, in scipy's own order of operations, so that the values are the same bits scipy gives
(tests/parties/test_distances.py compares them): for each pair, the per-column terms are added one column
after the other, left to right, from the first column (scipy's ``transform_reduce_2d_``), and the Euclidean
distance is the square root of that sum. Above ``OWN_ROWS`` records, or for another metric, scipy computes
them, faster.
"""

from __future__ import annotations

import numpy as np

#: Up to this many records (about two million pairs) the distances are computed here; above, by scipy.
OWN_ROWS = 2000
#: Metrics computed here; any other goes to scipy.
OWN_METRICS = ("euclidean", "sqeuclidean", "cityblock")
#: Records of the upper triangle's rows computed at once (a block of BLOCK x m values).
BLOCK = 64


def pdist(X: np.ndarray, metric: str = "euclidean") -> np.ndarray:
    """The condensed distances between the rows of ``X``, as ``scipy.spatial.distance.pdist(X, metric)`` returns
    them, to the last bit.

    Parameters
    ----------
    X : array_like, shape (m, d)
        The records, one per row (converted to float64).
    metric : str, default "euclidean"
        ``euclidean`` (004 eq. 3), ``sqeuclidean`` (its square, what osbr sends) or ``cityblock`` (the sum of
        absolute differences: the interval part of 004 eq. 5's numerator on range-scaled columns) are computed
        here up to ``OWN_ROWS`` records; any other metric, or more records, by scipy.

    Returns
    -------
    numpy.ndarray, shape (m(m-1)/2,)
        The distance of records i < j at position m*i - i*(i+1)/2 + j - i - 1.

    Raises
    ------
    ValueError
        When ``X`` is not 2-dimensional.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"pdist needs a 2-dimensional array, got shape {X.shape}")
    m, d = X.shape
    if metric not in OWN_METRICS or m > OWN_ROWS:
        from scipy.spatial.distance import pdist as scipy_pdist

        return scipy_pdist(X, metric)
    out = np.empty(m * (m - 1) // 2)
    columns = np.ascontiguousarray(X.T)  # one contiguous row per column
    absolute = metric == "cityblock"
    start = 0
    for a in range(0, m - 1, BLOCK):
        b = min(a + BLOCK, m - 1)
        # rows a..b-1 against rows a+1..m-1: the rectangle holds every pair (i, j > i) of these rows
        total = np.zeros((b - a, m - a - 1))
        term = np.empty_like(total)
        for c in range(d):
            np.subtract(columns[c, a:b, None], columns[c, None, a + 1:], out=term)
            if absolute:
                np.abs(term, out=term)
            else:
                np.multiply(term, term, out=term)
            total += term
        for i in range(a, b):
            n = m - i - 1
            out[start:start + n] = total[i - a, i - a:]
            start += n
    if metric == "euclidean":
        np.sqrt(out, out=out)
    return out
