"""``osbr``: object similarity-based representation, a dissimilarity matrix (004 §2.2, §4).

Distances themselves do not add across column blocks, so each party sends the
parts of its dissimilarities that do add (sums over columns: 004 eq. 3 squared,
eq. 5's numerator and denominator), as condensed upper
triangles of m(m-1)/2 values:

- ``euclidean``: squared Euclidean distances ``sqdist``; the coordinator sums
  them over parties and takes the root, giving eq. 3 on the joined columns.
- ``gower`` (eq. 5, mixed types): the ``numerator`` sum_f delta_ij^f d_ij^f
  and, when asymmetric binary columns make it vary, the ``denominator``
  sum_f delta_ij^f; otherwise the denominator is the party's attribute count,
  sent as the public parameter ``attributes``.
- ``jaccard`` (eq. 4, asymmetric binary): the counts ``q`` (both 1) and
  ``rs`` (r + s, mismatches); d = (r + s) / (q + r + s).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parties.distances import pdist
from parties.methods.base import Disguise, Param, Sent, condensed


def _kinds_problems(metric: str, kinds: dict[str, list[str]], columns: list[str]) -> list[str]:
    """What is wrong with eq. 5's column kinds (``categorical``, ``binary``) for ``metric`` and ``columns``."""
    named = [key for key, names in kinds.items() if names]
    if metric != "gower" and named:
        verb = "apply" if len(named) > 1 else "applies"
        return [f"{' and '.join(repr(k) for k in named)} {verb} to metric 'gower' only (004 eq. 5), not '{metric}'"
                f": set metric = \"gower\" for nominal or asymmetric binary columns"
                + (" (eq. 4, 'jaccard', reads 0/1 columns only)" if metric == "jaccard" else "")]
    problems = []
    for key, names in kinds.items():
        missing = [c for c in names if c not in columns]
        if missing:
            problems.append(f"'{key}' names {', '.join(missing)}, which are not among the party's columns")
    return problems


def _binary(X: np.ndarray) -> bool:
    return bool(np.isin(X, (0.0, 1.0)).all())


def shared_ones(B: np.ndarray) -> np.ndarray:
    """Condensed q_ij: columns where rows i and j are both 1 (B is 0/1, m x d)."""
    m = B.shape[0]
    q = np.empty(m * (m - 1) // 2)
    start = 0
    for i in range(m - 1):
        q[start : start + m - i - 1] = B[i + 1 :] @ B[i]
        start += m - i - 1
    return q


class OSBR(Disguise):
    """Send the party's pairwise dissimilarities in the form that adds across parties.

    Parameters
    ----------
    metric : {"euclidean", "gower", "jaccard"}, default="euclidean"
        Eq. 3 on normalised numeric columns, eq. 5 on mixed columns, eq. 4 on
        asymmetric binary (0/1) columns.
    categorical : list of str, default=[]
        gower: nominal columns (d^f = 0 if equal, else 1). They may hold text.
    binary : list of str, default=[]
        gower: asymmetric binary 0/1 columns (a 0-0 pair does not count).
    """

    name = "osbr"
    summary = "pairwise dissimilarities"
    source = "004 §2.2, §4, eqs. 3-5 (OSBR)"
    # set from ``params`` by Disguise.__init__
    metric: str
    categorical: list[str]
    binary: list[str]

    params = {
        "metric": Param(str, default="euclidean", choices=("euclidean", "gower", "jaccard")),
        "categorical": Param(list, default=[], doc="gower: nominal columns"),
        "binary": Param(list, default=[], doc="gower: asymmetric binary columns"),
    }

    @property
    # Disguise declares a class-wide flag; here it depends on the instance's metric
    def normalizes(self) -> bool:  # type: ignore[override]
        # eq. 5 divides interval columns by their range; eq. 4 needs the raw 0/1 values.
        return self.metric == "euclidean"

    def form(self) -> str:
        """Its ``metric``: each is a combination form of its own (coordinator.forms)."""
        return str(self.metric)

    def public_params(self) -> dict[str, str]:
        out = {"metric": self.metric}
        if self.metric == "gower" and not self.binary:
            out["attributes"] = str(self.n_attributes_)
        return out

    @classmethod
    def check_columns(cls, params: dict[str, Any], columns: list[str]) -> list[str]:
        """``categorical`` and ``binary`` (eq. 5's column kinds) with a metric that has no kinds, or naming
        columns the party does not have: refused with the scenario's other problems, before any data is read."""
        return _kinds_problems(params.get("metric", "euclidean"), {key: list(params.get(key) or [])
                                                                   for key in ("categorical", "binary")}, columns)

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:
        problems = _kinds_problems(self.metric, {"categorical": self.categorical, "binary": self.binary}, columns)
        if problems:
            raise ValueError(problems[0])
        if self.metric == "jaccard" and not _binary(X):
            raise ValueError("metric 'jaccard' needs 0/1 columns")
        if self.metric == "gower":
            idx = [columns.index(c) for c in self.binary]
            if idx and not _binary(X[:, idx]):
                raise ValueError(f"'binary' columns must hold only 0 and 1: {', '.join(self.binary)}")

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        X = np.asarray(X, dtype=np.float64)
        if self.metric == "euclidean":
            return [condensed("sqdist", pdist(X, "sqeuclidean"))]
        if self.metric == "jaccard":
            rs = pdist(X, "cityblock")
            return [condensed("q", shared_ones(X)), condensed("rs", rs)]
        return self._gower(X, columns)

    def _gower(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        """Numerator (and denominator) of eq. 5 over this party's columns."""
        kinds = ["categorical" if c in self.categorical else "binary" if c in self.binary else "interval" for c in columns]
        pick = lambda kind: [i for i, k in enumerate(kinds) if k == kind]  # noqa: E731
        interval, nominal, binary = pick("interval"), pick("categorical"), pick("binary")
        m = X.shape[0]
        numerator = np.zeros(m * (m - 1) // 2)
        if interval:
            span = np.ptp(X[:, interval], axis=0)
            numerator += pdist(X[:, interval] / np.where(span > 0, span, 1.0), "cityblock")
        if nominal:
            numerator += np.rint(pdist(X[:, nominal], "hamming") * len(nominal))
        self.n_attributes_ = len(interval) + len(nominal)
        if not binary:
            return [condensed("numerator", numerator)]
        rs = pdist(X[:, binary], "cityblock")
        numerator += rs
        denominator = self.n_attributes_ + shared_ones(X[:, binary]) + rs
        return [condensed("numerator", numerator), condensed("denominator", denominator)]
