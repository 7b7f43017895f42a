"""Per-party normalisation of numeric columns before disguise (004 §2.1, §4.2 step 2)."""

from __future__ import annotations

import numpy as np

NORMALIZATIONS = ("zscore", "minmax", "none")


def normalize(X: np.ndarray, how: str) -> np.ndarray:
    """Return ``X`` (m x d) normalised column by column.

    ``zscore`` uses the sample standard deviation (ddof=1), which reproduces
    004 eq. 11 from Table 1; ``minmax`` maps each column to [0, 1]; ``none``
    returns a copy. A constant column becomes all zeros, never NaN.
    """
    X = np.asarray(X, dtype=np.float64)
    if how == "none":
        return X.copy()
    if how == "zscore":
        center = X.mean(axis=0)
        scale = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    elif how == "minmax":
        center = X.min(axis=0)
        scale = X.max(axis=0) - center
    else:
        raise ValueError(f"normalize must be one of {', '.join(NORMALIZATIONS)}, got '{how}'")
    constant = np.ptp(X, axis=0) == 0 if X.shape[0] else np.ones(X.shape[1], dtype=bool)
    out = (X - center) / np.where(constant, 1.0, scale)
    out[:, constant] = 0.0
    return out
