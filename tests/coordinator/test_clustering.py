"""coordinator.clustering: settings checks and clustering, with scikit-learn as the oracle."""

from __future__ import annotations

import platform

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans

from conftest import assert_same_partition, first_seen
from coordinator.clustering import MPC_DEFAULT_ITER, MPC_MAX_ITER, ClusteringSpec, cluster
from coordinator.combine import Combined
from coordinator.errors import SessionError


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(17)
    centers = np.array([[0.0, 0.0, 0.0], [4.0, 4.0, 0.0], [0.0, 5.0, 5.0]])
    X = np.vstack([c + rng.normal(scale=0.8, size=(20, 3)) for c in centers])
    return X[rng.permutation(len(X))]


def test_default_spec_is_valid():
    assert ClusteringSpec().check() == []
    assert ClusteringSpec(algorithm="dbscan", n_clusters=0).check() == []  # n_clusters unused by dbscan


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"algorithm": "spectral"}, "'algorithm' must be one of kmeans, agglomerative, dbscan, got 'spectral'"),
        ({"n_clusters": 0}, "'n_clusters' must be a positive integer, got 0"),
        ({"n_clusters": 2.5}, "'n_clusters' must be a positive integer, got 2.5"),
        ({"n_clusters": "3"}, "'n_clusters' must be a positive integer, got '3'"),
        ({"linkage": "centroid"}, "'linkage' must be one of single, average, complete, ward, got 'centroid'"),
        ({"eps": 0}, "'eps' must be a positive number, got 0"),
        ({"eps": -0.5}, "'eps' must be a positive number, got -0.5"),
        ({"eps": "0.5"}, "'eps' must be a positive number, got '0.5'"),
        ({"min_samples": 0}, "'min_samples' must be a positive integer, got 0"),
        ({"n_init": 0}, "'n_init' must be a positive integer, got 0"),
        # TOML booleans are not counts (bool is a subclass of int in Python)
        ({"n_clusters": True}, "'n_clusters' must be a positive integer, got True"),
        ({"eps": True}, "'eps' must be a positive number, got True"),
        ({"min_samples": True}, "'min_samples' must be a positive integer, got True"),
        ({"n_init": True}, "'n_init' must be a positive integer, got True"),
    ],
)
def test_check_reports_the_bad_field(kwargs, fragment):
    assert ClusteringSpec(**kwargs).check() == [fragment]


def test_an_mpc_table_that_leaves_out_max_iter_gets_a_default_mpc_accepts():
    spec = ClusteringSpec.of({"algorithm": "kmeans", "protocol": "mpc", "n_clusters": 3})
    assert spec.max_iter == MPC_DEFAULT_ITER <= MPC_MAX_ITER
    assert spec.check() == []
    assert ClusteringSpec.of({"protocol": "mpc", "max_iter": 7}).max_iter == 7
    assert ClusteringSpec.of({"protocol": "secure_aggregation"}).max_iter == 300
    assert "at most 100, got 300" in " ".join(ClusteringSpec.of({"protocol": "mpc", "max_iter": 300}).check())


def test_check_reports_every_problem():
    errors = ClusteringSpec(algorithm="x", n_clusters=-1, linkage="y", eps=0.0).check()
    assert len(errors) == 4
    assert [e.split("'")[1] for e in errors] == ["algorithm", "n_clusters", "linkage", "eps"]


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("n_clusters", [2, 3, 5])
def test_kmeans_on_features_equals_sklearn(blobs, seed, n_clusters):
    spec = ClusteringSpec(algorithm="kmeans", n_clusters=n_clusters, n_init=4, seed=seed)
    labels = cluster(spec, Combined(features=blobs))
    expected = KMeans(n_clusters=n_clusters, n_init=4, random_state=seed).fit_predict(blobs)
    assert labels.dtype == np.int32
    assert labels.shape == (len(blobs),)
    np.testing.assert_array_equal(labels, expected)
    assert len(np.unique(labels)) == n_clusters


def test_kmeans_finds_the_three_blobs(blobs):
    labels = cluster(ClusteringSpec(n_clusters=3, seed=1), Combined(features=blobs))
    # each true blob (by nearest centre) is one cluster
    centers = np.array([[0.0, 0.0, 0.0], [4.0, 4.0, 0.0], [0.0, 5.0, 5.0]])
    truth = np.argmin(((blobs[:, None, :] - centers) ** 2).sum(-1), axis=1)
    for t in range(3):
        assert len(np.unique(labels[truth == t])) == 1
    assert len(np.unique(labels)) == 3


@pytest.mark.parametrize("linkage", ["average", "single", "complete"])
def test_agglomerative_on_dissimilarity_equals_sklearn(blobs, linkage):
    d = pdist(blobs, "cityblock")  # a non-Euclidean dissimilarity, to make 'precomputed' matter
    spec = ClusteringSpec(algorithm="agglomerative", n_clusters=3, linkage=linkage)
    labels = cluster(spec, Combined(dissimilarity=d))
    expected = AgglomerativeClustering(n_clusters=3, metric="precomputed", linkage=linkage).fit_predict(squareform(d))
    assert_same_partition(labels, expected)
    assert labels.tolist() == first_seen(labels)  # numbered by each cluster's first record
    assert labels.dtype == np.int32


def test_agglomerative_small_hand_example():
    # two tight pairs far apart: {0, 2} and {1, 3}
    D = np.array(
        [
            [0.0, 9.0, 1.0, 8.0],
            [9.0, 0.0, 7.0, 2.0],
            [1.0, 7.0, 0.0, 9.5],
            [8.0, 2.0, 9.5, 0.0],
        ]
    )
    labels = cluster(ClusteringSpec(algorithm="agglomerative", n_clusters=2), Combined(dissimilarity=squareform(D)))
    assert labels[0] == labels[2] and labels[1] == labels[3] and labels[0] != labels[1]


def test_agglomerative_on_features_equals_sklearn_ward(blobs):
    labels = cluster(ClusteringSpec(algorithm="agglomerative", n_clusters=3, linkage="ward"), Combined(features=blobs))
    np.testing.assert_array_equal(labels, AgglomerativeClustering(n_clusters=3, linkage="ward").fit_predict(blobs))


def test_dbscan_on_dissimilarity_equals_sklearn(blobs):
    d = pdist(blobs)
    spec = ClusteringSpec(algorithm="dbscan", eps=1.2, min_samples=4)
    labels = cluster(spec, Combined(dissimilarity=d))
    expected = DBSCAN(eps=1.2, min_samples=4, metric="precomputed").fit_predict(squareform(d))
    np.testing.assert_array_equal(labels, expected)


def test_kmeans_on_dissimilarity_raises(blobs):
    with pytest.raises(SessionError, match=r"kmeans needs feature data"):
        cluster(ClusteringSpec(algorithm="kmeans"), Combined(dissimilarity=pdist(blobs)))


def test_ward_on_dissimilarity_raises(blobs):
    with pytest.raises(SessionError, match=r"ward linkage needs feature data"):
        cluster(ClusteringSpec(algorithm="agglomerative", linkage="ward"), Combined(dissimilarity=pdist(blobs)))


def test_more_clusters_than_rows_raises():
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(SessionError, match=r"n_clusters = 5 is more than the 4 joined records"):
        cluster(ClusteringSpec(n_clusters=5), Combined(features=X))
    with pytest.raises(SessionError, match=r"n_clusters = 5 is more than the 4 joined records"):
        cluster(ClusteringSpec(algorithm="agglomerative", n_clusters=5), Combined(dissimilarity=pdist(X)))


def test_n_clusters_equal_rows_is_allowed():
    X = np.arange(8.0).reshape(4, 2)
    labels = cluster(ClusteringSpec(n_clusters=4, n_init=1), Combined(features=X))
    assert sorted(labels.tolist()) == [0, 1, 2, 3]


def test_dbscan_counts_duplicate_records_as_neighbours(blobs):
    # zero distances must stay in the sparse graph: a record repeated min_samples times is a core point
    X = np.vstack([blobs, np.repeat(blobs[:1] + 50.0, 4, axis=0)])
    d = pdist(X)
    labels = cluster(ClusteringSpec(algorithm="dbscan", eps=0.5, min_samples=4), Combined(dissimilarity=d))
    expected = DBSCAN(eps=0.5, min_samples=4, metric="precomputed").fit_predict(squareform(d))
    np.testing.assert_array_equal(labels, expected)
    assert len(set(labels[-4:].tolist())) == 1 and labels[-1] != -1


@pytest.mark.parametrize("linkage", ["average", "complete"])
@pytest.mark.parametrize("seed", range(6))
def test_in_place_linkage_equals_scipy_also_on_ties(linkage, seed):
    from scipy.cluster.hierarchy import linkage as scipy_linkage

    from coordinator.linkage import merges_in_place

    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 120))
    X = rng.integers(0, 3, size=(n, 3)) if seed % 2 else rng.normal(size=(n, 4))  # odd seeds: many equal distances
    d = pdist(X, "cityblock")
    spec = ClusteringSpec(algorithm="agglomerative", n_clusters=int(rng.integers(2, 8)), linkage=linkage)
    work = d.copy()
    in_place = cluster(spec, Combined(dissimilarity=work), overwrite=True)
    np.testing.assert_array_equal(in_place, cluster(spec, Combined(dissimilarity=d)))
    assert not np.array_equal(work, d)  # the matrix was used up, not copied
    np.testing.assert_array_equal(merges_in_place(d.copy(), n, linkage)[:, 2], scipy_linkage(d, linkage)[:, 2])


def test_kmeans_on_a_matrix_it_may_use_up_clusters_it_in_place_with_the_labels_of_a_copy():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 1.0, size=(400, 6)) for c in (0, 6, 12)]).astype(np.float32)
    spec = ClusteringSpec(algorithm="kmeans", n_clusters=3, n_init=3, seed=9)
    want = KMeans(n_clusters=3, n_init=3, random_state=9).fit_predict(X)
    kept = X.copy()
    assert np.array_equal(cluster(spec, Combined(features=kept)), want) and np.array_equal(kept, X)
    used = X.copy()
    assert np.array_equal(cluster(spec, Combined(features=used), overwrite=True), want)
    assert used.dtype == np.float32 and np.allclose(used, X, atol=1e-5)  # centred in place, then put back


def test_column_variances_in_blocks_equal_numpys_to_the_bit():
    from coordinator.clustering import column_variances

    rng = np.random.default_rng(8)
    for n, d, dtype in ((70_001, 9, np.float64), (20_000, 5, np.float32), (3, 2, np.float64)):
        X = (rng.normal(size=(n, d)) * rng.uniform(0.1, 100, size=d) + rng.normal(size=d) * 50).astype(dtype)
        assert np.array_equal(column_variances(X, rows=4096), np.var(X, axis=0)), (n, d, dtype)


def _faults_of_touching_twice(size: int = 3 << 20) -> int:
    """Minor page faults of allocating, filling and freeing ``size`` bytes, the second of two rounds (below 4 MiB,
    which numpy would ask the kernel to back with huge pages: a fault each 2 MiB)."""
    import resource

    np.ones(size // 8)  # the first round: freed at once
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    np.ones(size // 8)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_keeping_freed_memory_reuses_a_freed_block_inside_and_maps_afresh_after():
    from coordinator.clustering import keeping_freed_memory
    from coordinator.malloc import M_MMAP_THRESHOLD, mallopt

    assert mallopt(M_MMAP_THRESHOLD, 128 << 10)  # as ppc's processes run (ppcsim.cli.entry)
    before = _faults_of_touching_twice()  # mapped afresh, faulted in again (a fault a page, or a few pages)
    with keeping_freed_memory():
        with keeping_freed_memory():  # nested: the outer one restores
            pass
        inside = _faults_of_touching_twice()  # the freed block, reused
    after = _faults_of_touching_twice()
    assert before > 50 and after > 50 and inside < min(before, after) / 10, (before, inside, after)


def test_kmeans_keeping_freed_memory_gives_sklearns_labels():
    X = np.random.default_rng(3).normal(size=(40_000, 6)) + np.repeat(np.arange(4), 10_000)[:, None] * 4
    spec = ClusteringSpec(algorithm="kmeans", n_clusters=4, n_init=3, seed=5)
    labels = cluster(spec, Combined(features=X.copy()), overwrite=True)
    assert np.array_equal(labels, KMeans(n_clusters=4, n_init=3, random_state=5).fit_predict(X))
