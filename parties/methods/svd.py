"""``svd``: the party's block reduced to its rank-k truncated SVD coordinates (000 §2.6.3)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows


class SVD(Reduction):
    """Send the truncated SVD coordinates ``Y = U_k S_k = X V_k`` of ``X = U S V^T`` (000 §2.6.3).

    Like PCA but without centring: V_k holds the right singular vectors of
    the k largest singular values. Deterministic. With k = d, ``X V`` is a
    rotation and keeps every distance; with k < d distances can only shrink.
    000 also perturbs small entries of U and V (Xu et al.); this is the plain
    projection it starts from.

    Parameters
    ----------
    k : int
        The number of singular directions kept, 1 <= k <= d.

    Attributes
    ----------
    components_ : ndarray of shape (k, d)
        V_k transposed (never sent).
    singular_values_ : ndarray of shape (k,)
        S_k, non-increasing.

    References
    ----------
    Alotaibi, PhD thesis (seed 000), §2.6.3.
    """

    name = "svd"
    summary = "truncated SVD coordinates"
    source = "000 §2.6.3"
    k_at_most_records = True
    params = {"k": Param(int, required=True, minimum=1, doc="the number of singular directions kept")}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        U, S, Vt = np.linalg.svd(X, full_matrices=False)
        self.components_ = Vt[: self.k]
        self.singular_values_ = S[: self.k]
        return [rows("data", U[:, : self.k] * S[: self.k])]
