"""``cnmf``: constrained non-negative matrix factorisation that keeps, or hides, cluster membership (001 ch. 3-4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows

#: Added to every denominator of the multiplicative updates, so that a zero entry never divides (reference §5).
EPS = 1e-12
#: How 001 §3.3 changes a hidden record's membership: to any cluster but its own, or to one chosen cluster.
CHANGES = ("not_in", "in")


def check_nonnegative(X: np.ndarray, columns: list[str], method: str) -> None:
    """ValueError naming the first column with a negative value: NMF factorises non-negative data only (001 §3.1)."""
    low = X.min(axis=0) if X.size else np.zeros(X.shape[1])
    negative = np.flatnonzero(low < 0)
    if negative.size:
        j = int(negative[0])
        raise ValueError(f"column '{columns[j]}' has negative values (least {low[j]:.6g}): {method} factorises "
                         "non-negative data only (001 §3.1); normalise with normalize = \"minmax\"")


def check_weights(params: dict[str, Any], method: str) -> list[str]:
    """The NMF methods' weights of the fit and of the clustering term (``alpha``, ``beta``; default 0.5 each):
    both 0 would leave nothing to minimise."""
    alpha, beta = params.get("alpha", 0.5), params.get("beta", 0.5)
    if isinstance(alpha, (int, float)) and isinstance(beta, (int, float)) and alpha + beta <= 0:
        return [f"'alpha' and 'beta' must not both be 0 (method '{method}')"]
    return []


def kmeans_labels(A: np.ndarray, clusters: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The party's own k-means clustering of its block (001 §4.3: "C is initialized based on the k-means result on
    the original data"): each record's cluster and the centroids, seeded."""
    from sklearn.cluster import KMeans  # loaded only by parties that use these methods

    fit = KMeans(n_clusters=clusters, n_init=10, random_state=seed).fit(A)
    return fit.labels_.astype(np.int64), fit.cluster_centers_


def objective_cnmf(A, H, W, C, alpha: float, beta: float) -> float:
    """001 eq. 3.26: ``alpha ||A - HW||_F^2 + beta ||H - C||_F^2``."""
    return float(alpha * np.sum((A - H @ W) ** 2) + beta * np.sum((H - C) ** 2))


def factorise_cnmf(A, H, W, C, alpha: float, beta: float, max_iter: int, tol: float) -> list[float]:
    """001 Algorithm 2's inner loop: updates 3.25 (H) then 3.24 (W), in place, until the objective (eq. 3.26) is
    at most ``tol`` or ``max_iter`` updates were made; the objective before the first update and after each."""
    trace = [objective_cnmf(A, H, W, C, alpha, beta)]
    for _ in range(max_iter):
        if trace[-1] <= tol:
            break
        H *= (alpha * A @ W.T + beta * C) / (H @ (alpha * W @ W.T) + beta * H + EPS)  # eq. 3.25
        W *= (H.T @ A) / (H.T @ H @ W + EPS)  # eq. 3.24
        trace.append(objective_cnmf(A, H, W, C, alpha, beta))
    return trace


class CNMF(Reduction):
    """Constrained NMF (001 ch. 3, Algorithm 2; ch. 4 §4.3): send H, the records' rank-k factor, keep W.

    The party factorises its non-negative block ``A ~ H W`` (A m x d, H m x k,
    W k x d) by the multiplicative updates of 001 eqs. 3.24-3.25, minimising
    ``alpha ||A - HW||^2 + beta ||H - C||^2`` (eq. 3.26), where the cluster
    constraint C (m x k) holds, for each record, its cluster in the party's
    own k-means clustering of A (k clusters, §4.3): a 1 in that cluster's
    column. H is pulled towards C, so the largest entry of a record's row of
    H names its cluster (001 §3.3) and the clusters survive the disguise,
    while the values, which H carries only through the private basis W, do
    not. It sends H (m x k); 001 publishes the rank-k product ``H W`` itself
    (m x d); here W never leaves the party.

    Data pattern hiding (001 ch. 3): ``hide`` records, drawn by the party's
    seed, have their membership hidden. ``change = "not_in"`` (001's *not in
    a cluster change*) sets their row of C to 0 in their cluster's column and
    to random numbers in [0, 1) elsewhere; ``"in"`` (*in a cluster change*)
    to a 1 in another cluster's column, drawn at random. Algorithm 2's outer
    loop then runs up to ``main_iter`` times: after each factorisation the
    side effect (records whose largest entry of H is not where C wants it) is
    counted, and while it is not 0, alpha is lowered by 0.1 and beta raised
    by 0.1 (001 §3.8.2, keeping alpha + beta = 1), continuing from the same H
    and W.

    Parameters
    ----------
    k : int
        The rank of the factorisation, which is the number of clusters of the
        constraint (001: "k being the number of clusters in A").
    alpha, beta : float, default=0.5, 0.5
        The weights of the factorisation and of the clustering constraint
        (001 eq. 3.16; §3.8.1 uses 0.5 and 0.5).
    max_iter : int, default=200
        Updates per factorisation (001's maxItr).
    tol : float, default=0
        Stop a factorisation once the objective is at most this (001's tol).
    hide : int, default=0
        Records whose cluster membership is hidden (001 ch. 3); 0 keeps
        every record's (ch. 4's CNMF).
    change : {"not_in", "in"}, default="not_in"
        How their membership changes (001 §3.3).
    main_iter : int, default=1
        Rounds of Algorithm 2's outer loop (001's mainItr).

    Attributes
    ----------
    components_ : ndarray of shape (k, d)
        W (never sent).
    labels_ : ndarray of shape (m,)
        The party's own k-means clusters behind C.
    hidden_ : ndarray of int
        The records whose membership was hidden.
    objective_ : list of float
        Eq. 3.26 before the first update and after each, per round (the
        rounds' lists joined).
    side_effect_ : int
        Records whose largest entry of H is not where C wants it, at the end.

    References
    ----------
    Thapa, PhD thesis (seed 001), §3.4 eqs. 3.16-3.26, Algorithm 2, §4.3.
    """

    name = "cnmf"
    summary = "constrained NMF factor, clusters kept"
    source = "001 ch. 3, Algorithm 2, eqs. 3.24-3.25"
    randomised = True
    k_at_most_records = True
    nonnegative = True
    # set from ``params`` by Disguise.__init__
    alpha: float
    beta: float
    max_iter: int
    tol: float
    hide: int
    change: str
    main_iter: int

    params = {
        "k": Param(int, required=True, minimum=1, doc="rank of the factorisation: the clusters of the constraint"),
        "alpha": Param(float, default=0.5, minimum=0, doc="weight of the factorisation (001 eq. 3.16)"),
        "beta": Param(float, default=0.5, minimum=0, doc="weight of the clustering constraint (001 eq. 3.16)"),
        "max_iter": Param(int, default=200, minimum=1, doc="updates per factorisation (001 maxItr)"),
        "tol": Param(float, default=0.0, minimum=0, doc="stop once the objective is at most this (001 tol)"),
        "hide": Param(int, default=0, minimum=0, doc="records whose cluster membership is hidden (001 ch. 3)"),
        "change": Param(str, default="not_in", choices=CHANGES, doc="how a hidden record's membership changes"),
        "main_iter": Param(int, default=1, minimum=1, doc="rounds of Algorithm 2's outer loop (001 mainItr)"),
    }

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[str]:
        return super().check_params(params) + check_weights(params, cls.name)

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:
        super().check_data(X, columns)
        check_nonnegative(X, columns, self.name)
        if self.hide > X.shape[0]:
            raise ValueError(f"hide = {self.hide} is more than the party's {X.shape[0]} records")
        if self.hide and self.k < 2:
            raise ValueError("hide needs k of at least 2: a record can only leave its cluster for another")

    def constraint(self, A: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """C (m x k): each record's k-means cluster (001 §4.3), the hidden records' rows changed (001 §3.3)."""
        m, k = A.shape[0], self.k
        self.labels_, self.centroids_ = kmeans_labels(A, k, int(rng.integers(2**31 - 1)))
        C = np.zeros((m, k))
        C[np.arange(m), self.labels_] = 1.0
        self.hidden_ = np.sort(rng.choice(m, size=int(self.hide), replace=False))
        for i in self.hidden_:
            source = self.labels_[i]
            if self.change == "in":
                C[i] = 0.0
                C[i, rng.choice([c for c in range(k) if c != source])] = 1.0
            else:
                C[i] = rng.random(k)
                C[i, source] = 0.0
        self.target_ = C
        return C

    def side_effect(self, H: np.ndarray, C: np.ndarray) -> int:
        """Records whose largest entry of H is not where C wants it (001 §3.3.1): a kept or moved record off its
        cluster, or a hidden ``not_in`` record still in its own."""
        found = H.argmax(axis=1)
        wrong = found != C.argmax(axis=1)
        if self.change == "not_in" and self.hidden_.size:
            wrong[self.hidden_] = found[self.hidden_] == self.labels_[self.hidden_]
        return int(wrong.sum())

    def factorise(self, A: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """001 Algorithm 2 (Algorithm 3's first phase): H and W from random non-negative starts."""
        m, d = A.shape
        C = self.constraint(A, rng)
        H, W = rng.random((m, self.k)), rng.random((self.k, d))
        alpha, beta = float(self.alpha), float(self.beta)
        self.objective_: list[float] = []
        self.rounds_ = 0
        for _ in range(int(self.main_iter)):
            self.rounds_ += 1
            self.objective_ += factorise_cnmf(A, H, W, C, alpha, beta, int(self.max_iter), float(self.tol))
            self.side_effect_ = self.side_effect(H, C)
            if self.side_effect_ == 0:
                break
            alpha, beta = max(alpha - 0.1, 0.0), beta + 0.1  # 001 §3.8.2: "Change value of alpha, beta"
        self.alpha_, self.beta_ = alpha, beta
        return H, W

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        rng = np.random.default_rng(self.random_state)
        H, self.components_ = self.factorise(X, rng)
        return [rows("data", H)]

    def fitted(self) -> dict[str, Any]:
        """The objective (001 eq. 3.26) at the start and the end, the updates made, the rounds of Algorithm 2's
        outer loop, the final alpha and beta, the side effect and how many records were hidden."""
        if not hasattr(self, "objective_"):
            return {}
        return {"objective_start": self.objective_[0], "objective": self.objective_[-1],
                "updates": len(self.objective_) - self.rounds_, "rounds": self.rounds_, "alpha": self.alpha_,
                "beta": self.beta_, "side_effect": self.side_effect_, "hidden": int(self.hidden_.size)}
