"""Per-party normalisation of numeric columns before disguise (004 §2.1, §4.2 step 2)."""

from __future__ import annotations

import numpy as np

NORMALIZATIONS = ("zscore", "minmax", "none")


def normalize(X: np.ndarray, how: str, *, out: np.ndarray | None = None) -> np.ndarray:
    """Return ``X`` (m x d) normalised column by column.

    ``zscore`` uses the sample standard deviation (ddof=1), which reproduces
    004 eq. 11 from Table 1; ``minmax`` maps each column to [0, 1]; ``none``
    returns a copy. A constant column becomes all zeros, never NaN.

    Works in one (m x d) array, the result: the centred values are computed
    into it and scaled in place, so big inputs need no other full-size
    temporaries. That array is new, or ``out`` (float64, X's shape), which
    may be ``X`` itself to normalise in place; otherwise ``X`` is not modified.
    """
    X = np.asarray(X, dtype=np.float64)
    if how == "none":
        if out is None:
            return X.copy()
        out[...] = X
        return out
    if how == "zscore":
        center = X.mean(axis=0)
        if not X.shape[0]:
            constant = np.ones(X.shape[1], dtype=bool)
        elif (X[0] == X[-1]).any():
            constant = np.ptp(X, axis=0) == 0
        else:  # a constant column has equal first and last values: skip the min/max passes
            constant = np.zeros(X.shape[1], dtype=bool)
    elif how == "minmax":
        center = X.min(axis=0)
        scale = X.max(axis=0) - center
        constant = scale == 0  # the column's ptp, so min and max are read once
    else:
        raise ValueError(f"normalize must be one of {', '.join(NORMALIZATIONS)}, got '{how}'")
    out = np.subtract(X, center, out=out)  # every statistic but the std is read from X before this
    if how == "zscore":
        m = X.shape[0]
        if m > 1:
            # The sample std from the centred output, as X.std(ddof=1) computes it.
            # einsum sums the squares row by row without a squared copy, which for a
            # C-ordered array with several columns is np.sum's own order (bit-identical);
            # other layouts are summed pairwise by np.sum, so square explicitly there.
            if out.flags.c_contiguous and out.shape[1] > 1:
                sumsq = np.einsum("ij,ij->j", out, out)
            else:
                sumsq = np.square(out).sum(axis=0)
            scale = np.sqrt(sumsq / (m - 1))
        else:
            scale = np.zeros(X.shape[1])
    np.divide(out, np.where(constant, 1.0, scale), out=out)
    out[:, constant] = 0.0
    return out
