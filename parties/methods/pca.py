"""``pca``: the party's block projected onto its own top-k principal components (000 §2.6.2)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows


class PCA(Reduction):
    """Send the scores on the top k principal components: ``Y = (X - mean) U_k`` (000 §2.6.2).

    U_k holds the eigenvectors of the block's covariance matrix for its k
    largest eigenvalues, so the sent columns have non-increasing variance.
    Fitted on the party's own normalised block; deterministic. With k = d it
    is a centring followed by a rotation and keeps every distance; with k < d
    it keeps the k directions of largest variance (the least distorting
    k-dimensional projection). Weak against the known-sample PCA attack
    (000 §4.5, Alg. 4.3).

    Parameters
    ----------
    k : int
        The number of components sent, 1 <= k <= d.

    Attributes
    ----------
    components_ : ndarray of shape (k, d)
        U_k transposed (never sent).
    mean_ : ndarray of shape (d,)
        The block's column means (never sent).
    explained_variance_ratio_ : ndarray of shape (k,)
        Share of the block's variance along each component, non-increasing.

    References
    ----------
    Alotaibi, PhD thesis (seed 000), §2.6.2.
    """

    name = "pca"
    summary = "scores on its own principal components"
    source = "000 §2.6.2"
    k_at_most_records = True
    params = {"k": Param(int, required=True, minimum=1, doc="the number of principal components sent")}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        from sklearn.decomposition import PCA as _SklearnPCA  # loaded only by parties that use pca

        pca = _SklearnPCA(n_components=self.k, svd_solver="full").fit(X)
        self.components_ = pca.components_
        self.mean_ = pca.mean_
        self.explained_variance_ratio_ = pca.explained_variance_ratio_
        return [rows("data", pca.transform(X))]
