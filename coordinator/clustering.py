"""Clustering of the joined data: a registry of algorithms (k-means, agglomerative, DBSCAN built in).

Each registered ``Algorithm`` declares its ``[clustering]`` fields (a
``Param`` table), whether it uses ``n_clusters``, and what it clusters:
features, condensed dissimilarities, or both. A new algorithm is its
functions and one line in ``ALGORITHMS``.

Features go to scikit-learn. Dissimilarities stay condensed (m(m-1)/2
values): agglomerative clustering runs scipy's linkage on them, the same
linkage scikit-learn runs on a square matrix, and DBSCAN gets the sparse graph
of pairs within ``eps``, so the coordinator never builds the m x m square.

scipy and scikit-learn are imported where they are used: every party process
reads its scenario, and with it ClusteringSpec, and needs neither.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import InitVar, dataclass, replace
from dataclasses import fields as dataclass_fields
from typing import Any

import numpy as np

from coordinator.errors import SessionError
from coordinator.linkage import UPDATES, merges_in_place
from coordinator.malloc import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, malloc_trim, mallopt
from coordinator.types import Combined
from protos.schema import Param, check_table

#: How a session clusters: one upload of disguised data, k-means by rounds of secure aggregation, or k-means as a
#: secure multiparty computation (coordinator.protocols.mpc).
PROTOCOLS = ("upload", "secure_aggregation", "mpc")
SECURE = "secure_aggregation"
MPC = "mpc"
#: Protocols in which parties keep their columns at home, upload their ids only and run rounds (GetAlignment).
ROUNDS = (SECURE, MPC)
#: Most Lloyd rounds an MPC session may ask for: it runs exactly max_iter of them (no early stop, which would
#: open whether labels changed), each costing tens of message latencies and megabytes per party.
MPC_MAX_ITER = 100
#: The Lloyd rounds of an MPC session whose ``[clustering]`` table does not say (``max_iter``'s default of 300 is
#: the other protocols', and more than an MPC session may ask for).
MPC_DEFAULT_ITER = 10
#: Initial centres of secure-aggregation k-means.
INITS = ("random", "k-means++")
#: What a secure-aggregation session opens each round (``[clustering] reveal``): only the labels (the default: an
#: MPC argmin over the parties' secret-shared partial distances, coordinator.protocols.secagg_labels), or every
#: record's summed squared distance to every centre, which the arbiter reads (FATE's HeteroKmeans design).
LABELS, DISTANCES = "labels", "distances"
REVEALS = (LABELS, DISTANCES)
#: The engines of an MPC session: MPyC (Shamir secret sharing, pure Python, the default) or SecretFlow's SPU (ABY3
#: replicated secret sharing among exactly three share-holders, compiled; an optional install, parties.spu_env).
ENGINES = ("mpyc", "spu")
MPYC, SPU = ENGINES
LINKAGES = ("single", "average", "complete", "ward")


@dataclass(frozen=True)
class Algorithm:
    """One clustering algorithm as ``[clustering]`` names it.

    ``params`` is its own fields' table (the ``[clustering]`` schema is the
    union of every registered algorithm's, plus ``COMMON``); ``n_clusters``
    whether it uses the common ``n_clusters`` (checked against the joined
    records). ``features(spec, X)`` clusters rows of features and
    ``dissimilarities(spec, condensed, n, overwrite)`` a condensed matrix over
    ``n`` records (``overwrite``: it may use the matrix up); either is None
    when the algorithm does not take that input, and ``refuse`` then says why,
    with the algorithms that do. ``check(spec, precomputed)`` is a further
    problem of the settings with the input at hand, or None.
    """

    name: str
    params: dict[str, Param]
    features: Callable[[ClusteringSpec, np.ndarray], np.ndarray] | None = None
    #: ``features`` allowed to use its input up (``cluster(..., overwrite=True)``), when the algorithm has one.
    features_in_place: Callable[[ClusteringSpec, np.ndarray], np.ndarray] | None = None
    dissimilarities: Callable[[ClusteringSpec, np.ndarray, int, bool], np.ndarray] | None = None
    n_clusters: bool = True
    #: Least joined records it needs.
    least: int = 1
    check: Callable[[ClusteringSpec, bool], str | None] | None = None
    doc: str = ""

    def refuse(self, precomputed: bool) -> str:
        """Why this algorithm cannot cluster the input at hand (features, or dissimilarities if ``precomputed``)."""
        if precomputed:
            others = [f'"{a.name}"' for a in ALGORITHMS.values() if a.dissimilarities is not None]
            return (f"{self.name} needs feature data, but the parties sent dissimilarities (osbr); "
                    f"use algorithm = {' or '.join(others)}")
        others = [f'"{a.name}"' for a in ALGORITHMS.values() if a.features is not None]
        return (f"{self.name} needs dissimilarities, but the parties sent features; "
                f"use algorithm = {' or '.join(others)}")


#: Fields of every ``[clustering]`` table, whatever the algorithm (``seed`` is the coordinator's own, drawn from
#: the scenario seed). ``algorithm``'s choices are the registered algorithms (``fields``).
COMMON = {
    "algorithm": Param(str, "kmeans"),
    "n_clusters": Param(int, 3, minimum=1, rule="a positive integer"),
    "protocol": Param(str, "upload", choices=PROTOCOLS),
}
#: The fields of a secure-aggregation session (coordinator.protocols.secagg).
SECURE_FIELDS = {
    "max_iter": Param(int, 300, minimum=1, rule="a positive integer", doc="most centre updates"),
    "tol": Param(float, 0.0, minimum=0, below=1, rule="a number in [0, 1) (the fraction of labels that may still change)"),
    "init": Param(str, "random", choices=INITS, doc="how the initial centres are drawn"),
    "scale_bits": Param(int, 32, minimum=8, maximum=48, rule="an integer from 8 to 48", doc="fixed point: values * 2^scale_bits"),
    "reveal": Param(str, LABELS, choices=REVEALS,
                    doc="what each round opens: the labels only, or the summed distances to the arbiter"),
    "min_cluster_size": Param(int, 0, minimum=0, rule="a non-negative integer",
                              doc="a party's term: the smallest cluster it accepts in a round's labels (0: 2)"),
}
#: The fields of an MPC session (coordinator.protocols.mpc) beside max_iter and init.
MPC_FIELDS = {
    "mpc_bits": Param(int, 32, minimum=16, maximum=96, rule="an integer from 16 to 96",
                      doc="mpc: bit length l of the secure fixed-point type SecFxp(l, f)"),
    "mpc_frac": Param(int, 16, minimum=4, maximum=64, rule="an integer from 4 to 64",
                      doc="mpc: fractional bits f of SecFxp(l, f)"),
    "reveal_centres": Param(bool, False, doc="mpc: open the final centres too (the labels are always opened)"),
    "helper": Param(bool, False, doc="mpc: the coordinator runs a third share-holder with no data (two parties)"),
    "engine": Param(str, "mpyc", choices=ENGINES,
                    doc="mpc, and secure_aggregation with reveal = \"labels\": the MPC engine, MPyC or SPU (ABY3, "
                        "three share-holders)"),
}


@dataclass(frozen=True)
class ClusteringSpec:
    """The ``[clustering]`` table: algorithm and its settings; ``seed`` seeds k-means.

    The fields of the built-in algorithms are the dataclass's; a registered
    algorithm's own fields are given as ``options`` (``ClusteringSpec.of``
    sorts a table into both) and read like the others, as attributes or with
    :meth:`value`; ``spec.options`` gives them back (and so
    ``dataclasses.replace`` keeps them). A spec of the built-in algorithms
    has exactly the dataclass's attributes, as the report records them.
    """

    algorithm: str = "kmeans"
    n_clusters: int = 3
    linkage: str = "average"
    eps: float = 0.5
    min_samples: int = 5
    n_init: int = 10
    seed: int = 0
    #: "upload" (the disguised data, once) or "secure_aggregation" (k-means rounds; coordinator.protocols.secagg).
    protocol: str = "upload"
    #: secure_aggregation: most centre updates, the fraction of labels that may still change at
    #: convergence, how the initial centres are drawn, and the fixed-point scale (values * 2^scale_bits).
    max_iter: int = 300
    tol: float = 0.0
    init: str = "random"
    scale_bits: int = 32
    #: secure_aggregation: the smallest cluster a party accepts in a round's labels (0: parties.terms' default, 2);
    #: a party's own term, which the coordinator does not use.
    min_cluster_size: int = 0
    #: mpc: the secure fixed-point type SecFxp(mpc_bits, mpc_frac), whether the centres are opened too, and
    #: whether the coordinator runs a third share-holder with no data (for two parties).
    mpc_bits: int = 32
    mpc_frac: int = 16
    reveal_centres: bool = False
    helper: bool = False
    #: secure_aggregation: what each round opens, "labels" (an MPC argmin; mpc_bits, mpc_frac and helper apply)
    #: or "distances" (the arbiter reads the summed distances).
    reveal: str = LABELS
    #: mpc: the engine the share-holders run ("mpyc" or "spu").
    engine: str = MPYC
    #: Fields of registered algorithms other than the dataclass's, set as attributes (absent when none).
    options: InitVar[Mapping[str, Any] | None] = None

    def __post_init__(self, options: Mapping[str, Any] | None) -> None:
        for key, value in (options or {}).items():
            if key in _FIELD_NAMES or hasattr(type(self), key):
                raise TypeError(f"option '{key}' is a field or method of ClusteringSpec, not an algorithm's own")
            object.__setattr__(self, key, value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    @classmethod
    def of(cls, table: Mapping[str, Any], seed: int = 0) -> ClusteringSpec:
        """The spec of a ``[clustering]`` table (fields it leaves out take their defaults); ``seed`` the
        coordinator's. Fields no algorithm registers are left to :func:`fields`' check."""
        known = fields()
        mine = ALGORITHMS[table["algorithm"]].params if table.get("algorithm") in ALGORITHMS else {}
        options = {k: table.get(k, p.default) for k, p in mine.items() if k not in _FIELD_NAMES}
        options.update({k: v for k, v in table.items() if k in known and k not in _FIELD_NAMES})
        given = {k: v for k, v in table.items() if k in _FIELD_NAMES and k != "seed"}
        if given.get("protocol") == MPC:
            given.setdefault("max_iter", MPC_DEFAULT_ITER)
        return cls(**given, seed=seed, options=options)

    def value(self, name: str) -> Any:
        """A field's value: the spec's, or the default of the registered algorithm field ``name``."""
        if hasattr(self, name):
            return getattr(self, name)
        return fields()[name].default

    @property
    def method(self) -> Algorithm | None:
        """The registered algorithm this spec names, None if none."""
        return ALGORITHMS.get(self.algorithm)

    def check(self) -> list[str]:
        """Every problem with the settings, as messages naming the field (``fields()``, and ``SECURE_FIELDS`` for
        secure aggregation)."""
        table = {k: p for k, p in fields(secure=False).items()}
        algorithm = self.method
        if algorithm is not None and not algorithm.n_clusters:
            del table["n_clusters"]
        errors = check_table({k: self.value(k) for k in table}, table)
        if self.protocol == SECURE:
            if self.algorithm != "kmeans":
                errors.append(f"protocol = \"{SECURE}\" runs k-means only; 'algorithm' must be \"kmeans\", "
                              f"got {self.algorithm!r}")
            errors += check_table({k: getattr(self, k) for k in SECURE_FIELDS}, SECURE_FIELDS)
        if self.labels_only:
            errors += self._check_labels()
        elif self.protocol == MPC:
            errors += self._check_mpc()
        elif self.helper or self.reveal_centres or self.engine != MPYC:
            errors.append("'helper', 'reveal_centres' and 'engine' apply to protocol = \"mpc\" (and 'helper' and "
                          "'engine' to protocol = \"secure_aggregation\" with reveal = \"labels\") only")
        if self.min_cluster_size and self.protocol != SECURE:
            errors.append(f"'min_cluster_size' applies to protocol = \"{SECURE}\" only (a party's bound on the "
                          "labels an arbiter answers)")
        return errors

    @property
    def labels_only(self) -> bool:
        """Secure aggregation that opens the labels only (an MPC argmin; coordinator.protocols.secagg_labels)."""
        return self.protocol == SECURE and self.reveal == LABELS

    @property
    def relayed(self) -> bool:
        """Whether the parties compute among themselves over the coordinator's Relay (an MPC, or labels only)."""
        return self.protocol == MPC or self.labels_only

    def _check_labels(self) -> list[str]:
        table = {k: MPC_FIELDS[k] for k in ("mpc_bits", "mpc_frac", "helper")}
        errors = check_table({k: getattr(self, k) for k in table}, table)
        if self.init != "random":
            errors.append(f"protocol = \"{SECURE}\" with reveal = \"{LABELS}\" draws its initial centres as k joined "
                          f"records with the scenario seed: k-means++ seeding (D^2 sampling) draws each centre from "
                          f"every record's distance to the centres so far, which this mode never opens; use init = "
                          f"\"random\", or reveal = \"{DISTANCES}\" (the arbiter then reads every summed "
                          f"distance), got init = {self.init!r}")
        if self.tol != 0:
            errors.append(f"protocol = \"{SECURE}\" with reveal = \"{LABELS}\" stops once no label changes (or at "
                          f"max_iter): the parties alone decide from the opened labels; remove 'tol' ({self.tol!r})")
        if self.reveal_centres:
            errors.append(f"'reveal_centres' applies to protocol = \"{MPC}\" only: with reveal = \"{LABELS}\" each "
                          "party holds its own block of the centres")
        if isinstance(self.mpc_bits, int) and isinstance(self.mpc_frac, int) and self.mpc_frac + 8 > self.mpc_bits:
            errors.append(f"'mpc_frac' ({self.mpc_frac}) must leave at least 8 integer bits in 'mpc_bits' "
                          f"({self.mpc_bits}) for the summed distances")
        return errors

    def _check_mpc(self) -> list[str]:
        table = {k: SECURE_FIELDS[k] for k in ("max_iter", "init")} | MPC_FIELDS
        errors = check_table({k: getattr(self, k) for k in table}, table)
        if self.algorithm != "kmeans":
            errors.append(f"protocol = \"{MPC}\" runs k-means only; 'algorithm' must be \"kmeans\", got {self.algorithm!r}")
        if self.init != "random":
            errors.append(f"protocol = \"{MPC}\" draws its initial centres as k joined records with the scenario seed; "
                          f"'init' must be \"random\", got {self.init!r}")
        if isinstance(self.max_iter, int) and self.max_iter > MPC_MAX_ITER:
            errors.append(f"protocol = \"{MPC}\" runs exactly 'max_iter' Lloyd rounds (no early stop) and each costs "
                          f"megabytes per party; 'max_iter' must be at most {MPC_MAX_ITER}, got {self.max_iter}")
        if self.tol != 0:
            errors.append(f"protocol = \"{MPC}\" runs exactly 'max_iter' rounds: stopping early would open whether "
                          f"labels changed; remove 'tol' ({self.tol!r})")
        if isinstance(self.mpc_bits, int) and isinstance(self.mpc_frac, int) and 2 * self.mpc_frac > self.mpc_bits:
            errors.append(f"'mpc_frac' ({self.mpc_frac}) must be at most half of 'mpc_bits' ({self.mpc_bits}): "
                          "products of two fixed-point values need 2 * mpc_frac bits")
        return errors


_FIELD_NAMES = frozenset(f.name for f in dataclass_fields(ClusteringSpec))


def _options(spec: ClusteringSpec) -> dict[str, Any]:
    """The fields of registered algorithms a spec holds beside the dataclass's (what ``options`` gave)."""
    return {k: v for k, v in vars(spec).items() if k not in _FIELD_NAMES}


# read back as ``spec.options``, so that dataclasses.replace carries them over to the new spec
ClusteringSpec.options = property(_options)  # type: ignore[attr-defined]


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


#: The registered algorithms, by the name ``[clustering]``'s ``algorithm`` gives.
ALGORITHMS: dict[str, Algorithm] = {
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
}


def fields(secure: bool = True) -> dict[str, Param]:
    """The ``[clustering]`` schema: the common fields and every registered algorithm's (and, with ``secure``,
    ``SECURE_FIELDS``), the spec's own fields in their order, then those of algorithms registered later."""
    table: dict[str, Param] = {"algorithm": replace(COMMON["algorithm"], choices=tuple(ALGORITHMS)),
                               "n_clusters": replace(COMMON["n_clusters"], doc=", ".join(
                                   a.name for a in ALGORITHMS.values() if a.n_clusters))}
    for algorithm in ALGORITHMS.values():
        table.update(algorithm.params)
    table["protocol"] = COMMON["protocol"]
    order = [f.name for f in dataclass_fields(ClusteringSpec) if f.name in table]
    table = {**{k: table[k] for k in order}, **{k: p for k, p in table.items() if k not in order}}
    return {**table, **SECURE_FIELDS, **MPC_FIELDS} if secure else table


def preload() -> None:
    """Import what clustering needs (scikit-learn takes most of a second, mostly on one core)."""
    import scipy.cluster.hierarchy  # noqa: F401
    import sklearn.cluster  # noqa: F401


def input_problem(spec: ClusteringSpec, precomputed: bool) -> str | None:
    """Why ``spec`` cannot cluster features (or dissimilarities if ``precomputed``), or None: known from what the
    parties' methods declare they send, so the scenario loader asks it before any party starts."""
    algorithm = spec.method
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
    algorithm = spec.method
    assert algorithm is not None  # input_problem refuses an unregistered name
    features = combined.features
    if features is not None:
        n = features.shape[0]
    else:  # scipy cannot tell how many records an empty triangle has: one
        dissimilarity = combined.require_dissimilarity()
        n = num_obs_y(dissimilarity) if len(dissimilarity) else 1
    if algorithm.n_clusters and spec.n_clusters > n:
        raise SessionError(f"n_clusters = {spec.n_clusters} is more than the {n} joined records")
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
