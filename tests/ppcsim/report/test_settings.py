"""The report's ``clustering`` section lists the settings the run used and no other (ppcsim.report.settings)."""

from __future__ import annotations

import pytest

import ppcsim
from coordinator.clustering import ClusteringSpec
from ppcsim.report.settings import applied

COMMON = {"algorithm", "protocol", "seed"}


@pytest.mark.parametrize(("table", "expected"), [
    ({"algorithm": "kmeans"}, {"n_clusters", "n_init"}),
    ({"algorithm": "agglomerative", "linkage": "single"}, {"n_clusters", "linkage"}),
    ({"algorithm": "dbscan", "eps": 0.3}, {"eps", "min_samples"}),  # DBSCAN finds its own number of clusters
    ({"algorithm": "kmeans", "protocol": "secure_aggregation", "reveal": "distances"},
     {"n_clusters", "max_iter", "tol", "init", "scale_bits", "reveal", "min_cluster_size"}),
    ({"algorithm": "kmeans", "protocol": "secure_aggregation", "reveal": "labels"},
     {"n_clusters", "max_iter", "tol", "init", "scale_bits", "reveal", "min_cluster_size", "mpc_bits", "mpc_frac",
      "helper", "engine"}),  # the argmin's engine: MPyC or SPU
    ({"algorithm": "kmeans", "protocol": "mpc"},
     {"n_clusters", "max_iter", "init", "mpc_bits", "mpc_frac", "reveal_centres", "helper", "engine"}),
], ids=["kmeans", "agglomerative", "dbscan", "secure-distances", "secure-labels", "mpc"])
def test_only_the_settings_a_run_uses_are_listed(table, expected):
    got = applied(ClusteringSpec.of(table, seed=4))
    assert set(got) == COMMON | expected
    assert got["seed"] == 4 and all(got[k] == v for k, v in table.items())


def test_a_reports_clustering_section_has_no_unused_default():
    report = ppcsim.simulate({"name": "iris", "seed": 1, "data": {"source": "sklearn:iris"},
                              "parties": [{"name": "a", "columns": ["sepal length (cm)"], "method": "none"},
                                          {"name": "b", "columns": ["petal length (cm)"], "method": "none"}],
                              "clustering": {"algorithm": "agglomerative", "n_clusters": 3}},
                             attacks=False).report
    settings = {k for k in report["clustering"]
                if k not in ("input", "embedding", "sizes", "noise", "n_clusters_found")}
    assert settings == COMMON | {"n_clusters", "linkage"}  # no k-means n_init, no protocol's rounds, no eps
