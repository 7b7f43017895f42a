"""000 Table 5.9, Tables 5.6-5.7 and Figs 5.1-5.3 (``ppcsim.reproduce.thesis000_utility``), checked against
scikit-learn's neighbours, clusterings and mutual information."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import mutual_info_score
from sklearn.neighbors import NearestNeighbors

from ppcsim.reproduce import thesis000_utility as u
from ppcsim.reproduce.markdown000 import utility_section


def cc_by_sklearn(X, y, k):
    """000 eqs. 5.22-5.23 with scikit-learn's k nearest neighbours (the point itself left out)."""
    idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X, return_distance=False)[:, 1:]
    same = (y[idx] == y[:, None]).mean(axis=1)
    return np.mean([same[y == c].mean() for c in np.unique(y)])


def test_table_5_9_is_class_compactness_over_k_3_to_10():
    t = u.table_5_9(2, names=("iris",), progress=lambda _: None)["iris"]
    X, y = u.load("iris")
    assert t["p"] == 3 and t["cells"]["rp_orthonormal"]["n"] == 2 and t["cells"]["pca"]["n"] == 1
    expected = np.mean([cc_by_sklearn(X, y, k) for k in range(3, 11)])
    assert t["cells"]["x"]["mean"] == pytest.approx(expected, abs=0.01)  # ties may order differently
    assert t["cells"]["pca"]["mean"] == pytest.approx(t["cells"]["svd"]["mean"])  # centred data: SVD is PCA
    assert 0.85 < t["cells"]["nmds"]["mean"] <= 1.0


def test_vi_is_eq_5_5_in_bits_and_kmeans_starts_from_the_class_means():
    a, b = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 0, 1, 2, 2, 2])
    entropy = [-(np.bincount(x) / 6 * np.log2(np.bincount(x) / 6)).sum() for x in (a, b)]
    assert u.vi(a, b) == pytest.approx(sum(entropy) - 2 * mutual_info_score(a, b) / np.log(2))
    assert u.vi(a, a) == 0.0
    X, y = u.load("wine")
    centres = np.array([X[y == c].mean(axis=0) for c in range(3)])
    np.testing.assert_array_equal(u.cluster(X, y, "kmeans"), KMeans(3, init=centres, n_init=1).fit_predict(X))


def test_the_dbscan_radius_is_at_the_sharpest_bend_of_the_sorted_4_nn_distances():
    X = np.vstack([np.arange(20)[:, None] * [1.0, 0.0], [[100.0, 0.0], [200.0, 0.0]]])  # a line and two outliers
    assert u.dbscan_radius(X) == 4.0  # the 4th neighbour of every point on the line is 4 away, or more at the ends


def test_figures_and_synthetic_tables_render_with_a_verdict_per_number():
    figs = u.figures_5_1_5_3(1, names=("iris",), progress=lambda _: None)
    assert figs["iris"]["p"] == [1, 2, 3] and set(figs["iris"]["vi"]) == set(u.CLUSTERINGS)
    syn = u.tables_5_6_5_7(2, progress=lambda _: None, rows=150)
    assert syn["p"] == 99 and len(syn["np"]["pca"]["mean"]) == 8 and syn["cc"]["x"]["std"][0] >= 0
    t59 = u.table_5_9(2, names=("iris",), progress=lambda _: None)
    text = utility_section({"seeds": 2, "table_5_9": t59, "tables_5_6_5_7": syn, "figures_5_1_5_3": figs})
    assert "| Iris | X | 0.95 |" in text and "within sampling error" in text
    assert "| NP | RP | 0.99 0.99 0.98 0.98 0.96 0.95 0.94 0.93 |" in text
    assert "5.3 (iris, DBSCAN)" in text
    assert u.within(0.96, {"mean": 0.9641, "std": 0.0}) and not u.within(0.96, {"mean": 0.941, "std": 0.0})
    assert u.within(0.83, {"mean": 0.90, "std": 0.04})
