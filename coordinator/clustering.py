"""Clustering of the joined data: a registry of algorithms (k-means, agglomerative, DBSCAN built in).

Each registered ``Algorithm`` declares its ``[clustering]`` fields (a
``Param`` table), whether it uses ``n_clusters``, and what it clusters:
features, condensed dissimilarities, or both. A new algorithm is its
functions and one line in ``ALGORITHMS``.

Features go to scikit-learn. Dissimilarities stay condensed (m(m-1)/2
values): agglomerative clustering runs scipy's linkage on them, the same
linkage scikit-learn runs on a square matrix, and DBSCAN gets the sparse graph
of pairs within ``eps``, so the coordinator never builds the m x m square.

The ``[clustering]`` schema (``ClusteringSpec``, ``fields``) is
protos.clustering's, which a party reads its scenario with; it is imported
here for the coordinator's modules. scipy and scikit-learn are imported where
they are used.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from coordinator.errors import SessionError
from coordinator.join import check_clusters_fit
from coordinator.linkage import UPDATES, merges_in_place
from coordinator.malloc import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, malloc_trim, mallopt
from coordinator.types import Combined
from protos.clustering import (  # noqa: F401 - the schema, read here by the coordinator's modules as before
    ALGORITHMS,
    COMMON,
    DISTANCES,
    ENGINES,
    INITS,
    LABELS,
    LINKAGES,
    MPC,
    MPC_DEFAULT_ITER,
    MPC_FIELDS,
    MPC_MAX_ITER,
    MPYC,
    PROTOCOLS,
    REVEALS,
    ROUNDS,
    SECURE,
    SECURE_FIELDS,
    SPU,
    AlgorithmFields,
    ClusteringSpec,
    fields,
)
from protos.schema import Param


@dataclass(frozen=True)
class Algorithm(AlgorithmFields):
    """One clustering algorithm as ``[clustering]`` names it: its fields
    (protos.clustering.AlgorithmFields: ``params``, ``n_clusters``, ``least``)
    and the functions that cluster. ``features(spec, X)`` clusters rows of
    features and ``dissimilarities(spec, condensed, n, overwrite)`` a condensed matrix over
    ``n`` records (``overwrite``: it may use the matrix up); either is None
    when the algorithm does not take that input, and ``refuse`` then says why,
    with the algorithms that do. ``check(spec, precomputed)`` is a further
    problem of the settings with the input at hand, or None.
    """

    features: Callable[[ClusteringSpec, np.ndarray], np.ndarray] | None = None
    #: ``features`` allowed to use its input up (``cluster(..., overwrite=True)``), when the algorithm has one.
    features_in_place: Callable[[ClusteringSpec, np.ndarray], np.ndarray] | None = None
    dissimilarities: Callable[[ClusteringSpec, np.ndarray, int, bool], np.ndarray] | None = None
    check: Callable[[ClusteringSpec, bool], str | None] | None = None

    def refuse(self, precomputed: bool) -> str:
        """Why this algorithm cannot cluster the input at hand (features, or dissimilarities if ``precomputed``)."""
        if precomputed:
            others = [f'"{a.name}"' for a in _registered() if a.dissimilarities is not None]
            return (f"{self.name} needs feature data, but the parties sent dissimilarities (osbr); "
                    f"use algorithm = {' or '.join(others)}")
        others = [f'"{a.name}"' for a in _registered() if a.features is not None]
        return (f"{self.name} needs dissimilarities, but the parties sent features; "
                f"use algorithm = {' or '.join(others)}")



def _registered() -> list[Algorithm]:
    """The registered algorithms that can cluster (those with their functions)."""
    return [a for a in ALGORITHMS.values() if isinstance(a, Algorithm)]


def algorithm_of(spec: ClusteringSpec) -> Algorithm | None:
    """The registered algorithm ``spec`` names, with its functions; None if none."""
    algorithm = ALGORITHMS.get(spec.algorithm)
    return algorithm if isinstance(algorithm, Algorithm) else None


def _kmeans(spec: ClusteringSpec, X: np.ndarray) -> np.ndarray:
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=spec.n_clusters, n_init=spec.n_init, random_state=spec.seed).fit_predict(X)


def _kmeans_in_place(spec: ClusteringSpec, X: np.ndarray) -> np.ndarray:
    """``_kmeans`` on X itself, for a matrix nothing reads after: scikit-learn centres X in place and adds the mean
    back after (``copy_x=False``) instead of centring a copy, and the tolerance's column variances are summed a
    block of rows at a time (``column_variances``) instead of over a temporary copy of X, so the coordinator holds
    one matrix, not three. The labels are the same (the same centred values, the same tolerance to the bit); X
    may differ from before in its last bits."""
    from sklearn.cluster import KMeans

    class InPlace(KMeans):
        def _check_params_vs_input(self, X, *args, **kwargs):
            tol: float = self.tol  # type: ignore[has-type]
            self.tol = 0.0  # scikit-learn's own tolerance takes np.var(X), a temporary copy of X
            try:
                super()._check_params_vs_input(X, *args, **kwargs)
            finally:
                self.tol = tol
            self._tol = np.mean(column_variances(X)) * tol if tol else 0  # what scikit-learn computes, in blocks

    return InPlace(n_clusters=spec.n_clusters, n_init=spec.n_init, random_state=spec.seed,
                   copy_x=False).fit_predict(X)


def column_variances(X: np.ndarray, rows: int = 1 << 16) -> np.ndarray:
    """``np.var(X, axis=0)`` to the bit, a block of ``rows`` rows at a time: the same mean, the same squares,
    summed in the same order (each block's sums start from the previous block's), so it needs a block's
    memory, not a copy of X."""
    mean = X.mean(axis=0, keepdims=True)
    total: np.ndarray | None = None
    for start in range(0, len(X), rows):
        x = X[start : start + rows] - mean
        np.multiply(x, x, out=x)
        total = np.add.reduce(x if total is None else np.vstack([total, x]), axis=0, keepdims=True)
    if total is None:
        return np.full(X.shape[1], np.nan)
    return total[0] / len(X)


def _agglomerative(spec: ClusteringSpec, X: np.ndarray) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    return AgglomerativeClustering(n_clusters=spec.n_clusters, linkage=spec.linkage, metric="euclidean").fit_predict(X)


def _agglomerative_condensed(spec: ClusteringSpec, condensed: np.ndarray, n: int, overwrite: bool) -> np.ndarray:
    return tree_cut(condensed, n, spec.linkage, spec.n_clusters, overwrite)


def _no_ward(spec: ClusteringSpec, precomputed: bool) -> str | None:
    if precomputed and spec.linkage == "ward":
        return "ward linkage needs feature data; with osbr use single, average or complete"
    return None


def _dbscan(spec: ClusteringSpec, X: np.ndarray) -> np.ndarray:
    from sklearn.cluster import DBSCAN

    return DBSCAN(eps=spec.eps, min_samples=spec.min_samples, metric="euclidean").fit_predict(X)


def _dbscan_condensed(spec: ClusteringSpec, condensed: np.ndarray, n: int, overwrite: bool) -> np.ndarray:
    from sklearn.cluster import DBSCAN

    return DBSCAN(eps=spec.eps, min_samples=spec.min_samples, metric="precomputed").fit_predict(
        within(condensed, n, spec.eps))


# The built-in algorithms with their functions, in place of their declarations in protos.clustering.ALGORITHMS
# (the registry, by the name ``[clustering]``'s ``algorithm`` gives: one line there registers another).
ALGORITHMS.update({
    "kmeans": Algorithm(
        "kmeans", {"n_init": Param(int, 10, minimum=1, rule="a positive integer", doc="kmeans restarts")},
        features=_kmeans, features_in_place=_kmeans_in_place, doc="Lloyd's k-means (scikit-learn), best of n_init seeded starts"),
    "agglomerative": Algorithm(
        "agglomerative", {"linkage": Param(str, "average", choices=LINKAGES, doc="agglomerative")},
        features=_agglomerative, dissimilarities=_agglomerative_condensed, least=2, check=_no_ward,
        doc="hierarchical clustering cut at n_clusters; on dissimilarities the condensed linkage, in place"),
    "dbscan": Algorithm(
        "dbscan", {"eps": Param(float, 0.5, above=0, rule="a positive number", doc="dbscan"),
                   "min_samples": Param(int, 5, minimum=1, rule="a positive integer", doc="dbscan")},
        features=_dbscan, dissimilarities=_dbscan_condensed, n_clusters=False,
        doc="density clusters; on dissimilarities the sparse graph of pairs within eps"),
})


def preload() -> None:
    """Import what clustering needs (scikit-learn takes most of a second, mostly on one core)."""
    import scipy.cluster.hierarchy  # noqa: F401
    import sklearn.cluster  # noqa: F401


def input_problem(spec: ClusteringSpec, precomputed: bool) -> str | None:
    """Why ``spec`` cannot cluster features (or dissimilarities if ``precomputed``), or None: known from what the
    parties' methods declare they send, so the scenario loader asks it before any party starts."""
    algorithm = algorithm_of(spec)
    if algorithm is None:
        return f"algorithm {spec.algorithm!r} is not one of {', '.join(ALGORITHMS)}"
    if (algorithm.dissimilarities if precomputed else algorithm.features) is None:
        return algorithm.refuse(precomputed)
    return algorithm.check(spec, precomputed) if algorithm.check is not None else None


_preloading: list[threading.Thread] = []


def preload_in_background() -> None:
    """Start ``preload`` in a thread, once per process: a session does so when it is created, so that the import
    overlaps the parties' own start and work rather than the clustering it would otherwise delay (the in-run
    k-means phase then times k-means alone)."""
    if not _preloading:
        _preloading.append(threading.Thread(target=preload, name="preload", daemon=True))
        _preloading[0].start()


_keeping_lock = threading.Lock()
_keeping = [0]  # calls inside keeping_freed_memory


@contextmanager
def keeping_freed_memory() -> Iterator[None]:
    """While inside, glibc's malloc keeps freed blocks for reuse instead of handing each back to the system.

    k-means' temporaries are large (k-means++ draws ``n_local_trials`` x m
    distances at every step, 32 MB each at a million records) and are freed
    and allocated again hundreds of times. Blocks of 128 KiB and more are
    mapped afresh for each (ppc's processes keep glibc's mmap threshold at
    128 KiB; glibc's own adjustment stops at 32 MiB): about a million page
    faults at 1e6 records x 40 columns, 2 s of system time. Inside, the
    threshold is 64 MiB and the trim threshold 1 GiB, so a freed temporary is
    reused by the next allocation of its size (blocks above 64 MiB are still
    mapped and handed back as freed: with a 1 GiB threshold the coordinator's
    peak at 1e6 pseudonymous records rose from 651 to 719 MiB, past
    bench/e2e_drbt.py's target); on the way out they are set back (to
    ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` if set, else 128
    KiB, ppc's setting and glibc's default trim) and ``malloc_trim`` hands
    what is free back. Nested and concurrent uses (two sessions clustering at
    once) share one setting, restored when the last ends. Nothing happens
    off glibc.
    """
    with _keeping_lock:
        _keeping[0] += 1
        if _keeping[0] == 1:
            mallopt(M_MMAP_THRESHOLD, 64 << 20) or mallopt(M_MMAP_THRESHOLD, 32 << 20)  # glibc < 2.26: 32 MiB at most
            mallopt(M_TRIM_THRESHOLD, 1 << 30)
    try:
        yield
    finally:
        with _keeping_lock:
            _keeping[0] -= 1
            if _keeping[0] == 0 and mallopt(M_MMAP_THRESHOLD, int(os.environ.get("MALLOC_MMAP_THRESHOLD_", 128 << 10))):
                mallopt(M_TRIM_THRESHOLD, int(os.environ.get("MALLOC_TRIM_THRESHOLD_", 128 << 10)))
                malloc_trim()


def cluster(spec: ClusteringSpec, combined: Combined, overwrite: bool = False) -> np.ndarray:
    """Labels (int) of the joined records; -1 marks DBSCAN noise.

    The registered algorithm ``spec.algorithm`` (``ALGORITHMS``) clusters the
    features, or the condensed dissimilarities if that is what the parties
    sent. ``overwrite`` lets it use up ``combined.dissimilarity`` (agglomerative
    clustering does) or ``combined.features`` (k-means) rather than copy it."""
    from scipy.spatial.distance import num_obs_y

    problem = input_problem(spec, combined.features is None)
    if problem:
        raise SessionError(problem)
    algorithm = algorithm_of(spec)
    assert algorithm is not None  # input_problem refuses an unregistered name
    features = combined.features
    if features is not None:
        n = features.shape[0]
    else:  # scipy cannot tell how many records an empty triangle has: one
        dissimilarity = combined.require_dissimilarity()
        n = num_obs_y(dissimilarity) if len(dissimilarity) else 1
    if algorithm.n_clusters:
        check_clusters_fit(spec.n_clusters, n)
    if n < algorithm.least:
        raise SessionError(f"{algorithm.name} clustering needs at least {algorithm.least} joined records")
    if features is not None and algorithm.features is not None:
        use = algorithm.features_in_place if overwrite and algorithm.features_in_place else algorithm.features
        with keeping_freed_memory():  # its temporaries reused, not mapped afresh each time
            labels = use(spec, features)
    elif algorithm.dissimilarities is not None:
        labels = algorithm.dissimilarities(spec, dissimilarity, n, overwrite)
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
