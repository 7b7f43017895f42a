"""Clustering of the joined data: k-means, agglomerative, DBSCAN.

Features go to scikit-learn. Dissimilarities stay condensed (m(m-1)/2
values): agglomerative clustering runs scipy's linkage on them, the same
linkage scikit-learn runs on a square matrix, and DBSCAN gets the sparse graph
of pairs within ``eps``, so the coordinator never builds the m x m square.

scipy and scikit-learn are imported where they are used: every party process
reads its scenario, and with it ClusteringSpec, and needs neither.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coordinator.errors import SessionError
from coordinator.linkage import UPDATES, merges_in_place
from coordinator.types import Combined
from protos.schema import Param, check_table

ALGORITHMS = ("kmeans", "agglomerative", "dbscan")
#: How a session clusters: one upload of disguised data, or k-means by rounds of secure aggregation.
PROTOCOLS = ("upload", "secure_aggregation")
SECURE = "secure_aggregation"
#: Initial centres of secure-aggregation k-means.
INITS = ("random", "k-means++")
LINKAGES = ("single", "average", "complete", "ward")

#: The ``[clustering]`` table's fields (``seed`` is the coordinator's own, drawn from the scenario seed).
FIELDS = {
    "algorithm": Param(str, "kmeans", choices=ALGORITHMS),
    "n_clusters": Param(int, 3, minimum=1, rule="a positive integer", doc="kmeans, agglomerative"),
    "linkage": Param(str, "average", choices=LINKAGES, doc="agglomerative"),
    "eps": Param(float, 0.5, above=0, rule="a positive number", doc="dbscan"),
    "min_samples": Param(int, 5, minimum=1, rule="a positive integer", doc="dbscan"),
    "n_init": Param(int, 10, minimum=1, rule="a positive integer", doc="kmeans restarts"),
    "protocol": Param(str, "upload", choices=PROTOCOLS),
}
#: The fields of a secure-aggregation session (coordinator.secagg).
SECURE_FIELDS = {
    "max_iter": Param(int, 300, minimum=1, rule="a positive integer", doc="most centre updates"),
    "tol": Param(float, 0.0, minimum=0, below=1, rule="a number in [0, 1) (the fraction of labels that may still change)"),
    "init": Param(str, "random", choices=INITS, doc="how the initial centres are drawn"),
    "scale_bits": Param(int, 32, minimum=8, maximum=48, rule="an integer from 8 to 48", doc="fixed point: values * 2^scale_bits"),
}


@dataclass(frozen=True)
class ClusteringSpec:
    """The ``[clustering]`` table: algorithm and its settings; ``seed`` seeds k-means."""

    algorithm: str = "kmeans"
    n_clusters: int = 3
    linkage: str = "average"
    eps: float = 0.5
    min_samples: int = 5
    n_init: int = 10
    seed: int = 0
    #: "upload" (the disguised data, once) or "secure_aggregation" (k-means rounds; coordinator.secagg).
    protocol: str = "upload"
    #: secure_aggregation: most centre updates, the fraction of labels that may still change at
    #: convergence, how the initial centres are drawn, and the fixed-point scale (values * 2^scale_bits).
    max_iter: int = 300
    tol: float = 0.0
    init: str = "random"
    scale_bits: int = 32

    def check(self) -> list[str]:
        """Every problem with the settings, as messages naming the field (``FIELDS``, and ``SECURE_FIELDS`` for
        secure aggregation)."""
        values = {k: getattr(self, k) for k in FIELDS if not (k == "n_clusters" and self.algorithm == "dbscan")}
        errors = check_table(values, {k: FIELDS[k] for k in values})
        if self.protocol == SECURE:
            if self.algorithm != "kmeans":
                errors.append(f"protocol = \"{SECURE}\" runs k-means only; 'algorithm' must be \"kmeans\", "
                              f"got {self.algorithm!r}")
            errors += check_table({k: getattr(self, k) for k in SECURE_FIELDS}, SECURE_FIELDS)
        return errors

    def estimator(self, precomputed: bool):
        """The scikit-learn estimator for these settings."""
        from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans

        if self.algorithm == "kmeans":
            return KMeans(n_clusters=self.n_clusters, n_init=self.n_init, random_state=self.seed)
        if self.algorithm == "agglomerative":
            return AgglomerativeClustering(
                n_clusters=self.n_clusters, linkage=self.linkage, metric="precomputed" if precomputed else "euclidean"
            )
        return DBSCAN(eps=self.eps, min_samples=self.min_samples, metric="precomputed" if precomputed else "euclidean")


def preload() -> None:
    """Import what clustering needs (scikit-learn takes most of a second, mostly on one core), so that a
    session can do it beside the join rather than after it."""
    import scipy.cluster.hierarchy  # noqa: F401
    import sklearn.cluster  # noqa: F401


def cluster(spec: ClusteringSpec, combined: Combined, overwrite: bool = False) -> np.ndarray:
    """Labels (int) of the joined records; -1 marks DBSCAN noise.

    ``overwrite`` lets agglomerative clustering use up ``combined.dissimilarity``
    rather than copy it."""
    from scipy.spatial.distance import num_obs_y

    precomputed = combined.features is None
    if precomputed and spec.algorithm == "kmeans":
        raise SessionError(
            "kmeans needs feature data, but the parties sent dissimilarities (osbr); "
            "use algorithm = \"agglomerative\" or \"dbscan\""
        )
    if precomputed and spec.linkage == "ward" and spec.algorithm == "agglomerative":
        raise SessionError("ward linkage needs feature data; with osbr use single, average or complete")
    features = combined.features
    if features is not None:
        n = features.shape[0]
    else:  # scipy cannot tell how many records an empty triangle has: one
        dissimilarity = combined.require_dissimilarity()
        n = num_obs_y(dissimilarity) if len(dissimilarity) else 1
    if spec.algorithm != "dbscan" and spec.n_clusters > n:
        raise SessionError(f"n_clusters = {spec.n_clusters} is more than the {n} joined records")
    if n < 2 and spec.algorithm == "agglomerative":
        raise SessionError("agglomerative clustering needs at least 2 joined records")
    if features is not None:
        labels = spec.estimator(precomputed).fit_predict(features)
    elif spec.algorithm == "agglomerative":
        labels = tree_cut(dissimilarity, n, spec.linkage, spec.n_clusters, overwrite)
    else:
        labels = spec.estimator(precomputed).fit_predict(within(dissimilarity, n, spec.eps))
    return np.asarray(labels, dtype=np.int32)


def tree_cut(condensed: np.ndarray, n: int, linkage: str, n_clusters: int, overwrite: bool = False) -> np.ndarray:
    """Agglomerative labels: the linkage's merges, cut where ``n_clusters`` remain.

    The same merges as scikit-learn's AgglomerativeClustering(metric="precomputed")
    (which condenses the square and calls scipy's linkage); clusters are
    numbered in the order of their first record. Single linkage reads the
    matrix in place. Average and complete work on scipy's copy of it, or,
    with ``overwrite``, in the matrix itself (coordinator.linkage).
    """
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    cut = n - n_clusters
    if overwrite and linkage in UPDATES:
        pairs = merges_in_place(condensed, n, linkage)[:cut, :2].astype(np.int64)  # records joined, one per merge
        edges = coo_matrix((np.ones(cut), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    else:
        merges = scipy_linkage(condensed, method=linkage)[:cut, :2].astype(np.int64)
        node = n + np.arange(cut)  # leaves 0..n-1, then merge i makes node n + i
        edges = coo_matrix((np.ones(2 * cut), (merges.T.reshape(-1), np.concatenate([node, node]))),
                           shape=(2 * n - 1, 2 * n - 1))
    _, component = connected_components(edges, directed=False)
    _, first, labels = np.unique(component[:n], return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[labels]


def within(condensed: np.ndarray, n: int, eps: float):
    """The sparse n x n graph of the pairs at most ``eps`` apart (scikit-learn's sparse 'precomputed' input)."""
    from scipy.sparse import coo_matrix

    rows, cols, values = [], [], []
    start = 0
    for i in range(n - 1):
        row = condensed[start : start + n - i - 1]
        near = np.flatnonzero(row <= eps)
        rows.append(np.full(len(near), i, dtype=np.int32))
        cols.append((near + i + 1).astype(np.int32))
        values.append(row[near])
        start += n - i - 1
    first, second, dist = (np.concatenate(x) if x else np.zeros(0) for x in (rows, cols, values))
    graph = coo_matrix((np.concatenate([dist, dist]), (np.concatenate([first, second]), np.concatenate([second, first]))),
                       shape=(n, n))
    return graph.tocsr()
