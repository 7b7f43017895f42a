"""``comnmf``: cluster-aware compression by constrained NMF, records pulled towards their centroids (001 §4.5)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows
from parties.methods.cnmf import EPS, check_nonnegative, check_weights, kmeans_labels


def objective_comnmf(A, H, W, CL, alpha: float, beta: float) -> float:
    """001 eq. 4.1: ``alpha ||A - HW||_F^2 + beta ||HW - C_L||_F^2``."""
    HW = H @ W
    return float(alpha * np.sum((A - HW) ** 2) + beta * np.sum((HW - CL) ** 2))


def factorise_comnmf(A, H, W, CL, alpha: float, beta: float, max_iter: int, tol: float) -> list[float]:
    """001 eqs. 4.13-4.14, in place, until the objective (eq. 4.1) is at most ``tol`` or ``max_iter`` updates were
    made; the objective before the first update and after each.

    The denominators carry the factor ``alpha + beta`` of the updates before
    001 simplifies them with ``alpha + beta = 1``, so that other weights are
    kept exact too. With ``G = alpha A + beta C_L`` (001 eq. 4.16) these are
    Lee and Seung's updates for ``G / (alpha + beta)`` (eq. 4.17), whose
    objective never rises (001 §4.6.1).
    """
    G = alpha * A + beta * CL  # eq. 4.16
    s = alpha + beta
    trace = [objective_comnmf(A, H, W, CL, alpha, beta)]
    for _ in range(max_iter):
        if trace[-1] <= tol:
            break
        W *= (H.T @ G) / (s * (H.T @ H @ W) + EPS)  # eq. 4.13
        H *= (G @ W.T) / (s * (H @ W @ W.T) + EPS)  # eq. 4.14
        trace.append(objective_comnmf(A, H, W, CL, alpha, beta))
    return trace


class ComNMF(Reduction):
    """Cluster-aware compression (001 §4.5, eqs. 4.1-4.14): NMF that pulls each record towards its centroid.

    ``C_L`` (m x d) is the party's block with every record replaced by the
    centroid of its cluster in the party's own k-means clustering
    (``clusters`` clusters). The party factorises ``A ~ H W`` (rank ``k``) by
    001's updates 4.13 (W) and 4.14 (H), minimising
    ``alpha ||A - HW||^2 + beta ||HW - C_L||^2`` (eq. 4.1): the larger beta,
    the nearer ``HW`` lies to the centroids, and the tighter the clusters
    (001 Figs. 4.8-4.17: at beta = 1 each cluster shrinks to a point), so
    that a record keeps its cluster where noise would move it (§4.5, Figs.
    4.1-4.3). It sends H (m x k) and keeps W. The thesis gives no algorithm
    of its own for it: the loop is Algorithm 3's first phase with these
    updates.

    Parameters
    ----------
    k : int
        The compression rank: the rank of the factorisation and the
        dimensions sent.
    clusters : int, optional
        The k-means clusters whose centroids form C_L; k when not given.
    alpha, beta : float, default=0.5, 0.5
        The weights of the factorisation and of the compression (eq. 4.1).
    max_iter : int, default=200
        Updates (001's maxItr).
    tol : float, default=0
        Stop once the objective is at most this (001's tol).

    Attributes
    ----------
    components_ : ndarray of shape (k, d)
        W (never sent).
    labels_ : ndarray of shape (m,)
        The party's own k-means clusters.
    objective_ : list of float
        Eq. 4.1 before the first update and after each.

    References
    ----------
    Thapa, PhD thesis (seed 001), §4.5, eqs. 4.1-4.14, §4.6.1, §4.9.4.
    """

    name = "comnmf"
    summary = "NMF factor compressed towards the clusters' centroids"
    source = "001 §4.5, eqs. 4.13-4.14"
    randomised = True
    k_at_most_records = True
    nonnegative = True
    # set from ``params`` by Disguise.__init__
    clusters: int | None
    alpha: float
    beta: float
    max_iter: int
    tol: float

    params = {
        "k": Param(int, required=True, minimum=1, doc="compression rank: the dimensions sent"),
        "clusters": Param(int, default=None, minimum=1, doc="k-means clusters of C_L (default: k)"),
        "alpha": Param(float, default=0.5, minimum=0, doc="weight of the factorisation (001 eq. 4.1)"),
        "beta": Param(float, default=0.5, minimum=0, doc="weight of the compression towards centroids (001 eq. 4.1)"),
        "max_iter": Param(int, default=200, minimum=1, doc="updates (001 maxItr)"),
        "tol": Param(float, default=0.0, minimum=0, doc="stop once the objective is at most this (001 tol)"),
    }

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[str]:
        return super().check_params(params) + check_weights(params, cls.name)

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:
        super().check_data(X, columns)
        check_nonnegative(X, columns, self.name)
        clusters = self.clusters or self.k
        if clusters > X.shape[0]:
            raise ValueError(f"clusters = {clusters} is more than the party's {X.shape[0]} records")

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        m, d = X.shape
        rng = np.random.default_rng(self.random_state)
        self.labels_, centroids = kmeans_labels(X, int(self.clusters or self.k), int(rng.integers(2**31 - 1)))
        CL = centroids[self.labels_]  # 001 §4.5: each record replaced by its cluster's centroid
        H, W = rng.random((m, self.k)), rng.random((self.k, d))
        self.objective_ = factorise_comnmf(X, H, W, CL, float(self.alpha), float(self.beta), int(self.max_iter),
                                           float(self.tol))
        self.components_ = W
        return [rows("data", H)]

    def fitted(self) -> dict[str, Any]:
        """The objective (001 eq. 4.1) at the start and the end, and the updates made."""
        if not hasattr(self, "objective_"):
            return {}
        return {"objective_start": self.objective_[0], "objective": self.objective_[-1],
                "updates": len(self.objective_) - 1}
