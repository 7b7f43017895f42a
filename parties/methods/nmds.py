"""``nmds``: the data owner's non-metric MDS perturbation (000 ch. 3, §3.3.4, §5.2.3.1; 003 §IV).

The party computes the dissimilarities of its own normalised records,
embeds them by non-metric MDS in ``dims`` dimensions (Kruskal's stress-1,
000 eq. 3.12, minimised by SMACOF with isotonic disparities) and releases
only the configuration Y, m x ``dims`` values: the distances themselves never
leave it.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from parties.methods.base import Disguise, Param, Sent, rows
from parties.methods.drbt import seed_words

#: SMACOF stops when the relative decrease of the stress falls below this (scikit-learn's ``eps``).
EPS = 1e-7
#: Records above which a party is refused: SMACOF holds a few m x m matrices (20,000 records: 3.2 GB each).
MAX_RECORDS = 20_000
#: The smallest gain in stress-1 (relative, and absolute: an exact start has stress-1 of about 1e-16) that counts
#: as SMACOF improving on its classical start (000 §5.2.3.1).
IMPROVED, IMPROVED_ABS = 1e-9, 1e-12


def kruskal_stress_1(dissimilarity: np.ndarray, Y: np.ndarray) -> float:
    """Kruskal's stress-1 of a configuration (000 eq. 3.12).

    ``S = sqrt(sum (d_ij - dhat_ij)^2 / sum d_ij^2)`` over all pairs, with ``d``
    the Euclidean distances of ``Y`` and ``dhat`` the disparities: the
    least-squares monotone (isotonic) regression of ``d`` on the order of the
    dissimilarities (eqs. 3.10-3.13; scikit-learn's ``IsotonicRegression``).

    Parameters
    ----------
    dissimilarity : ndarray of shape (n_pairs,)
        The dissimilarities, condensed as scipy's ``pdist``.
    Y : ndarray of shape (m, p)
        The configuration, one row per object.

    Returns
    -------
    float
        Stress-1; 0 when every distance of ``Y`` is 0.
    """
    from scipy.spatial.distance import pdist
    from sklearn.isotonic import IsotonicRegression

    d = pdist(np.asarray(Y, dtype=np.float64))
    denominator = float(np.sum(d * d))
    if denominator == 0.0:
        return 0.0
    dhat = IsotonicRegression().fit_transform(np.asarray(dissimilarity, dtype=np.float64), d)
    return float(np.sqrt(np.sum((d - dhat) ** 2) / denominator))


class NMDS(Disguise):
    """Embed the party's own records by non-metric MDS and send the configuration (000 ch. 3; 003 §IV).

    000 §3.3.4's algorithm on the party's block: the Euclidean dissimilarities
    of its normalised records (000 eq. 3.6), an initial configuration in
    ``dims`` dimensions, then SMACOF iterations, each fitting disparities by
    monotone regression and moving the points to lower the stress, until it
    stops falling (relative change below ``EPS``) or ``max_iter``.

    With ``init = "classical"`` (the default) the start is the classical
    (Torgerson) scaling of the dissimilarities, as 000 §5.2.3.1 does. When
    SMACOF cannot improve on that start (its stress-1 is already the best),
    releasing it would release classical scaling, from which the
    dissimilarities, and with them the data, can be derived (000 §3.3.2); so,
    as §5.2.3.1 does "for all data that have the best stress at its initial
    configuration", the party then starts instead from ``n_init`` seeded
    random configurations and keeps the one of least stress-1. That happens
    at the latest when ``dims`` equals the party's columns, where classical
    scaling is exact. With ``init = "random"`` it starts from ``n_init``
    random configurations from the outset, as 003 does ("The initial
    configuration was chosen randomly").

    The configuration's scale is arbitrary (000 ch. 3): it is multiplied by
    the one factor that fits its distances to the party's own in least
    squares, so that, joined with other parties' blocks, each block weighs as
    its columns do. Stress-1 (eq. 3.12) does not depend on that factor; the
    party reports it with the start it kept (``facts``).

    The party sends m x ``dims`` values (bytes m * dims * l, as DRBT), not
    the m(m-1)/2 distances: the coordinator clusters the configurations joined
    column-wise. Non-metric MDS holds m x m matrices, so a party with more
    than ``MAX_RECORDS`` records is refused.

    Parameters
    ----------
    dims : int
        Output dimensions p (000 uses p = n - 1 mostly); at most the party's columns.
    init : {"classical", "random"}, default="classical"
        The start: classical scaling (with the fallback above) or ``n_init`` random configurations.
    n_init : int, default=4
        Random starts, when they are used; the least stress-1 wins.
    max_iter : int, default=3000
        SMACOF iterations at most, per start.

    Attributes
    ----------
    stress_1_ : float
        Kruskal's stress-1 (000 eq. 3.12) of the configuration sent.
    start_ : str
        ``"classical"``, or ``"random"`` with why.
    n_iter_ : int
        SMACOF iterations of the kept start.
    scale_ : float
        The least-squares factor applied to the configuration.
    seconds_ : float
        Seconds the embedding took.
    """

    name = "nmds"
    summary = "a non-metric MDS configuration of its own records"
    source = "000 ch. 3, §5.2.3.1, eq. 3.12; 003 §IV"
    # set from ``params`` by Disguise.__init__
    dims: int
    init: str
    n_init: int
    max_iter: int

    params = {
        "dims": Param(int, required=True, minimum=1, doc="the configuration's dimensions"),
        "init": Param(str, default="classical", choices=("classical", "random"),
                      doc="the start: classical scaling (random starts when it is already best) or random"),
        "n_init": Param(int, default=4, minimum=1, doc="random starts, when they are used"),
        "max_iter": Param(int, default=3000, minimum=1, doc="SMACOF iterations at most, per start"),
    }

    @property
    # Disguise declares a class-wide flag; here it depends on the instance's start
    def randomised(self) -> bool:  # type: ignore[override]
        """Random starts draw from ``random_state``; the classical start does not (unless it falls back)."""
        return self.init == "random"

    @classmethod
    def check_columns(cls, params: dict[str, Any], columns: list[str]) -> list[str]:
        dims = params.get("dims")
        if isinstance(dims, int) and not isinstance(dims, bool) and dims > len(columns):
            return [f"dims = {dims} is larger than the party's {len(columns)} columns"]
        return []

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:
        m, d = X.shape
        if self.dims > d:
            raise ValueError(f"dims = {self.dims} is larger than the party's {d} columns")
        if self.dims >= m:
            raise ValueError(f"dims = {self.dims} needs more than {self.dims} records, got {m}")
        if m > MAX_RECORDS:
            raise ValueError(f"non-metric MDS holds {m:,} x {m:,} matrices; it takes at most {MAX_RECORDS:,} records "
                             "(use drbt, pca or another method that scales)")

    def start_seed(self, start: int) -> np.random.RandomState:
        """The generator of random start ``start``: a child of ``random_state`` of its own."""
        seq = np.random.SeedSequence(seed_words(self.random_state), spawn_key=(start,))
        return np.random.RandomState(np.random.MT19937(seq))

    def smacof(self, D: np.ndarray, init: np.ndarray | None, start: int) -> tuple[np.ndarray, int]:
        """Non-metric SMACOF (scikit-learn's) from ``init``, or from random start ``start`` when None."""
        from sklearn.manifold import smacof

        with warnings.catch_warnings():  # scikit-learn warns of its own defaults changing
            warnings.simplefilter("ignore")
            Y, _, n_iter = smacof(D, metric=False, n_components=self.dims, init=init, n_init=1,
                                  max_iter=self.max_iter, eps=EPS, random_state=self.start_seed(start),
                                  return_n_iter=True, normalized_stress=True)
        return np.asarray(Y, dtype=np.float64), int(n_iter)

    def embed(self, X: np.ndarray) -> np.ndarray:
        """000 §3.3.4 with §5.2.3.1's start: the configuration of least stress-1, before its scale is fitted."""
        from scipy.spatial.distance import pdist, squareform
        from sklearn.manifold import ClassicalMDS

        delta = pdist(X)
        D = squareform(delta)
        if self.init == "classical":
            start = ClassicalMDS(metric="precomputed", n_components=self.dims).fit_transform(D)
            Y, n_iter = self.smacof(D, np.asarray(start, dtype=np.float64), 0)
            before, self.stress_1_ = kruskal_stress_1(delta, start), kruskal_stress_1(delta, Y)
            if before - self.stress_1_ > max(IMPROVED * before, IMPROVED_ABS):
                self.start_, self.n_iter_ = "classical", n_iter
                return Y
            why = "random: the classical start was already the best (000 §5.2.3.1)"
        else:
            why = "random"
        best: tuple[float, np.ndarray, int] | None = None
        for start in range(self.n_init):
            Y, n_iter = self.smacof(D, None, start)
            value = kruskal_stress_1(delta, Y)
            if best is None or value < best[0]:
                best = (value, Y, n_iter)
        assert best is not None  # n_init >= 1
        self.stress_1_, Y, self.n_iter_ = best
        self.start_ = why
        return Y

    def facts(self) -> dict[str, Any]:
        return {"stress_1": self.stress_1_, "start": self.start_, "n_iter": self.n_iter_, "seconds": self.seconds_}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        from scipy.spatial.distance import pdist

        self.check_data(X, columns)
        t = time.perf_counter()
        X = np.asarray(X, dtype=np.float64)
        Y = self.embed(X)
        d, dy = pdist(X), pdist(Y)
        self.scale_ = float(np.sum(d * dy) / max(float(np.sum(dy * dy)), 1e-300))
        self.seconds_ = time.perf_counter() - t
        return [rows("data", Y * self.scale_)]
