"""Clustering of the joined data with scikit-learn: k-means, agglomerative, DBSCAN."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import squareform

from coordinator.combine import Combined
from coordinator.errors import SessionError

ALGORITHMS = ("kmeans", "agglomerative", "dbscan")
LINKAGES = ("single", "average", "complete", "ward")


def _integer(value) -> bool:
    """An int but not a bool (TOML's ``true`` is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


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

    def check(self) -> list[str]:
        """Every problem with the settings, as messages naming the field."""
        errors = []
        if self.algorithm not in ALGORITHMS:
            errors.append(f"'algorithm' must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}")
        if self.algorithm != "dbscan" and (not _integer(self.n_clusters) or self.n_clusters < 1):
            errors.append(f"'n_clusters' must be a positive integer, got {self.n_clusters!r}")
        if self.linkage not in LINKAGES:
            errors.append(f"'linkage' must be one of {', '.join(LINKAGES)}, got {self.linkage!r}")
        if isinstance(self.eps, bool) or not isinstance(self.eps, (int, float)) or self.eps <= 0:
            errors.append(f"'eps' must be a positive number, got {self.eps!r}")
        if not _integer(self.min_samples) or self.min_samples < 1:
            errors.append(f"'min_samples' must be a positive integer, got {self.min_samples!r}")
        if not _integer(self.n_init) or self.n_init < 1:
            errors.append(f"'n_init' must be a positive integer, got {self.n_init!r}")
        return errors

    def estimator(self, precomputed: bool):
        """The scikit-learn estimator for these settings."""
        # imported here: reading a scenario, as every party process does, needs no scikit-learn
        from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans

        if self.algorithm == "kmeans":
            return KMeans(n_clusters=self.n_clusters, n_init=self.n_init, random_state=self.seed)
        if self.algorithm == "agglomerative":
            return AgglomerativeClustering(
                n_clusters=self.n_clusters, linkage=self.linkage, metric="precomputed" if precomputed else "euclidean"
            )
        return DBSCAN(eps=self.eps, min_samples=self.min_samples, metric="precomputed" if precomputed else "euclidean")


def cluster(spec: ClusteringSpec, combined: Combined) -> np.ndarray:
    """Labels (int) of the joined records; -1 marks DBSCAN noise."""
    precomputed = combined.features is None
    if precomputed and spec.algorithm == "kmeans":
        raise SessionError(
            "kmeans needs feature data, but the parties sent dissimilarities (osbr); "
            "use algorithm = \"agglomerative\" or \"dbscan\""
        )
    if precomputed and spec.linkage == "ward" and spec.algorithm == "agglomerative":
        raise SessionError("ward linkage needs feature data; with osbr use single, average or complete")
    X = squareform(combined.dissimilarity) if precomputed else combined.features
    n = X.shape[0]
    if spec.algorithm != "dbscan" and spec.n_clusters > n:
        raise SessionError(f"n_clusters = {spec.n_clusters} is more than the {n} joined records")
    if n < 2 and spec.algorithm == "agglomerative":
        raise SessionError("agglomerative clustering needs at least 2 joined records")
    return np.asarray(spec.estimator(precomputed).fit_predict(X), dtype=np.int32)
