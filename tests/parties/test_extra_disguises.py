"""The extra disguises (rotation, geometric, noise, pca, svd, dct): the properties their sources prove.

002 (geometric perturbation): R orthogonal, distances kept by R and psi,
k-means unchanged (Thm 6), noise adds 2 d sigma^2 to squared distances in
expectation. 000 §2.6 (PCA / SVD / DCT): orthogonal projections, exact at
k = d and contractions below.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.cluster import KMeans
from sklearn.datasets import load_wine, make_blobs

from conftest import SHOP, WINE, WINE_LABELLED, kmeans, party_table, read_report, run_ppc, scenario_toml, write_scenario
from parties.methods import DCT, PCA, SVD, Geometric, Noise, Rotation, method_class
from parties.methods.base import Sent
from parties.methods.rotation import haar_orthogonal
from parties.normalize import normalize
from protos.serde import Layout

NEW = {"rotation": Rotation, "geometric": Geometric, "noise": Noise, "pca": PCA, "svd": SVD, "dct": DCT}
REQUIRED = {"pca": {"k": 2}, "svd": {"k": 2}, "dct": {"k": 2}}


def block(m: int = 300, d: int = 5, seed: int = 0) -> np.ndarray:
    """A z-scored block of m records with d correlated columns."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d)) @ rng.standard_normal((d, d))
    return normalize(X, "zscore")


def sent_data(method, X: np.ndarray) -> np.ndarray:
    sent = method.disguise(X, [f"c{i}" for i in range(X.shape[1])])
    assert [s.name for s in sent] == ["data"] and sent[0].layout == Layout.ROWS
    assert sent[0].array.dtype == np.float64 and sent[0].array.flags.c_contiguous
    return sent[0].array


# --------------------------------------------------------------------------------------------
# registry and parameters


@pytest.mark.parametrize("name", sorted(NEW))
def test_registered_and_refuses_unknown_fields(name):
    cls = method_class(name)
    assert cls is NEW[name] and cls.name == name
    assert cls.check_params(REQUIRED.get(name, {})) == []
    errors = cls.check_params({**REQUIRED.get(name, {}), "colour": 1})
    assert len(errors) == 1 and errors[0].startswith(f"unknown field 'colour' for method '{name}'")


@pytest.mark.parametrize("name", ["geometric", "noise"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [(-0.1, "'sigma' must be at least 0, got -0.1"), (True, "'sigma' must be a finite number, got True"),
     ("0.1", "'sigma' must be a finite number, got '0.1'"), (float("nan"), "'sigma' must be a finite number, got nan")],
)
def test_sigma_is_a_non_negative_number(name, value, problem):
    cls = method_class(name)
    assert cls.check_params({"sigma": 0}) == [] and cls.check_params({"sigma": 0.25}) == []
    assert cls.check_params({"sigma": value}) == [f"{problem} (method '{name}')"]


def test_noise_distribution_choices():
    assert Noise.check_params({"distribution": "laplace"}) == [
        "'distribution' must be one of gaussian, uniform, got 'laplace' (method 'noise')"
    ]


@pytest.mark.parametrize("name", ["pca", "svd", "dct"])
def test_reductions_need_k_at_most_d(name):
    cls = method_class(name)
    assert cls.check_params({}) == [f"method '{name}' needs 'k' ({cls.params['k'].doc})"]
    assert cls.check_params({"k": 0}) == [f"'k' must be at least 1, got 0 (method '{name}')"]
    assert cls.check_columns({"k": 3}, ["a", "b", "c"]) == []
    assert cls.check_columns({"k": 4}, ["a", "b", "c"]) == ["k = 4 is larger than the party's 3 columns"]
    with pytest.raises(ValueError, match=r"^k = 6 is larger than the party's 5 columns$"):
        cls(k=6).disguise(block(), list("abcde"))


# --------------------------------------------------------------------------------------------
# rotation (002 eq. 1 with R only; Thm 6)


def test_rotation_is_orthogonal_and_keeps_distances():
    X = block()
    method = Rotation(random_state=11)
    Y = sent_data(method, X)
    R = method.R_
    assert R.shape == (5, 5)
    np.testing.assert_allclose(R @ R.T, np.eye(5), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y, X @ R.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pdist(Y), pdist(X), rtol=0, atol=1e-10)
    assert np.abs(Y - X).max() > 0.5  # it did move the records
    np.testing.assert_array_equal(Y, sent_data(Rotation(random_state=11), X))
    assert not np.allclose(Y, sent_data(Rotation(random_state=12), X))


def test_rotation_draws_are_haar_not_biased():
    # Haar: E[R] = 0 and every entry has variance 1/d (without the sign fix the diagonal is biased positive)
    rng = np.random.default_rng(0)
    draws = np.stack([haar_orthogonal(3, rng) for _ in range(4000)])
    np.testing.assert_allclose(draws.mean(0), 0, atol=0.05)
    np.testing.assert_allclose((draws**2).mean(0), 1 / 3, atol=0.03)


def test_rotation_keeps_kmeans_labels_exactly():
    """002 Thm 6: Euclidean clustering is invariant to rotation (and translation)."""
    X, _ = make_blobs(n_samples=300, n_features=4, centers=3, cluster_std=1.0, random_state=5)
    X = normalize(X, "zscore")
    Y = sent_data(Rotation(random_state=3), X)
    before = KMeans(n_clusters=3, n_init=10, random_state=0).fit_predict(X)
    after = KMeans(n_clusters=3, n_init=10, random_state=0).fit_predict(Y)
    np.testing.assert_array_equal(after, before)


def test_rotation_of_one_column_is_only_a_sign_flip():
    """With d = 1 the only orthogonal matrices are +1 and -1: no protection (a 1 x 1 orthogonal matrix is +1 or -1)."""
    X = block(d=1)
    for seed in range(10):
        method = Rotation(random_state=seed)
        Y = sent_data(method, X)
        assert abs(method.R_[0, 0]) == pytest.approx(1.0, abs=1e-15)
        np.testing.assert_allclose(np.abs(Y), np.abs(X), rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------------
# geometric (002 eq. 1)


def test_geometric_without_noise_is_rotation_plus_translation():
    X = block()
    method = Geometric(random_state=4, sigma=0)
    Y = sent_data(method, X)
    assert method.psi_.shape == (5,) and ((method.psi_ >= 0) & (method.psi_ < 1)).all()
    np.testing.assert_allclose(Y - method.psi_, X @ method.R_.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pdist(Y), pdist(X), rtol=0, atol=1e-10)
    # the same R as a plain rotation with the same seed
    rotation = Rotation(random_state=4)
    rotation.disguise(X, list("abcde"))
    np.testing.assert_array_equal(method.R_, rotation.R_)


def test_geometric_is_reproducible_from_its_seed():
    X = block()
    Y = sent_data(Geometric(random_state=9), X)
    np.testing.assert_array_equal(Y, sent_data(Geometric(random_state=9), X))
    assert not np.allclose(Y, sent_data(Geometric(random_state=10), X))


def mean_pair_sqdist(Y: np.ndarray) -> float:
    """Mean of ||y_i - y_j||^2 over the pairs i < j, as 2m/(m-1) times the mean squared deviation."""
    m = len(Y)
    return 2 * m / (m - 1) * ((Y - Y.mean(0)) ** 2).sum(1).mean()


@pytest.mark.parametrize("sigma", [0.1, 0.3])
def test_geometric_noise_adds_2_d_sigma2_to_squared_distances(sigma):
    """E ||y_i - y_j||^2 = ||x_i - x_j||^2 + 2 d sigma^2 (Delta i.i.d. N(0, sigma^2), R and psi exact).

    On one draw the mean over pairs also carries the zero-mean cross term
    4/(m-1) sum_i (x_i - xbar).R^T e_i, whose spread (about 4 sigma sqrt(d/m)
    on z-scored data, 20% of 2 d sigma^2 at sigma = 0.1) is far above 5%; the
    expectation is taken over 200 seeded draws, which brings it to ~1.5%.
    """
    m, d = 2000, 5
    X = block(m=m, d=d, seed=1)
    base = mean_pair_sqdist(X)
    assert base == pytest.approx(pdist(X, "sqeuclidean").mean(), rel=1e-12)
    added = [mean_pair_sqdist(sent_data(Geometric(random_state=s, sigma=sigma), X)) - base for s in range(200)]
    assert np.mean(added) == pytest.approx(2 * d * sigma**2, rel=0.05)
    # and on one seeded draw, with all 2M pairs through pdist, within the cross term's spread
    Y = sent_data(Geometric(random_state=0, sigma=sigma), X)
    one = (pdist(Y, "sqeuclidean") - pdist(X, "sqeuclidean")).mean()
    assert one == pytest.approx(2 * d * sigma**2, abs=3 * 4 * sigma * np.sqrt(d / m))


# --------------------------------------------------------------------------------------------
# noise


@pytest.mark.parametrize("distribution", ["gaussian", "uniform"])
@pytest.mark.parametrize("sigma", [0.1, 0.5])
def test_noise_std_is_sigma(distribution, sigma):
    X = block(m=2000)
    Y = sent_data(Noise(random_state=2, distribution=distribution, sigma=sigma), X)
    E = Y - X
    assert E.std() == pytest.approx(sigma, rel=0.03)
    assert abs(E.mean()) < 3 * sigma / np.sqrt(E.size)
    if distribution == "uniform":
        assert np.abs(E).max() <= sigma * np.sqrt(3)
        assert np.abs(E).max() > 0.99 * sigma * np.sqrt(3)  # it fills the range
    else:
        assert np.abs(E).max() > sigma * np.sqrt(3)  # Gaussian tails pass the uniform's bound


def test_noise_with_zero_sigma_is_the_block_itself():
    X = block()
    np.testing.assert_array_equal(sent_data(Noise(random_state=1, sigma=0), X), X)


# --------------------------------------------------------------------------------------------
# pca, svd, dct (000 §2.6)


def test_pca_orders_components_by_variance():
    X = block()
    method = PCA(k=3)
    Y = sent_data(method, X)
    assert Y.shape == (300, 3)
    ratios = method.explained_variance_ratio_
    assert (np.diff(ratios) <= 0).all() and 0 < ratios.sum() < 1
    assert (np.diff(Y.var(0)) <= 0).all()
    np.testing.assert_allclose(Y.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(method.components_ @ method.components_.T, np.eye(3), atol=1e-12)


@pytest.mark.parametrize("cls", [PCA, SVD, DCT])
def test_full_rank_reductions_keep_distances_exactly(cls):
    """k = d: centring + rotation (PCA), rotation (SVD: X V), orthonormal transform (DCT)."""
    X = block()
    Y = sent_data(cls(k=5), X)
    assert Y.shape == (300, 5)
    np.testing.assert_allclose(pdist(Y), pdist(X), rtol=0, atol=1e-10)


@pytest.mark.parametrize("cls", [PCA, SVD, DCT])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_truncated_reductions_only_shrink_distances(cls, k):
    X = block()
    Y = sent_data(cls(k=k), X)
    assert Y.shape == (300, k)
    assert (pdist(Y) <= pdist(X) + 1e-12).all()
    assert pdist(Y).sum() < pdist(X).sum()


def test_svd_sends_u_k_s_k_without_centring():
    X = block() + 3.0  # an offset PCA would remove and SVD keeps
    method = SVD(k=2)
    Y = sent_data(method, X)
    U, S, _ = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(np.abs(Y), np.abs(U[:, :2] * S[:2]), atol=1e-10)
    np.testing.assert_allclose(Y, X @ method.components_.T, atol=1e-10)
    assert (np.diff(method.singular_values_) <= 0).all()
    assert abs(Y[:, 0].mean()) > 1  # the offset is still there


def test_dct_is_the_orthonormal_dct_ii():
    """000 §2.6.4's F_n with Lambda on the output index n (which makes the transform orthonormal)."""
    X = block(m=20)
    d = X.shape[1]
    n, j = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    C = np.sqrt(2 / d) * np.cos(np.pi * n * (2 * j + 1) / (2 * d))
    C[0] /= np.sqrt(2)
    np.testing.assert_allclose(C @ C.T, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(sent_data(DCT(k=3), X), X @ C[:3].T, atol=1e-12)


def test_reductions_refuse_more_components_than_records():
    with pytest.raises(ValueError, match=r"^k = 3 is larger than the party's 2 records$"):
        PCA(k=3).disguise(block(m=2), list("abcde"))
    with pytest.raises(ValueError, match=r"^k = 3 is larger than the party's 2 records$"):
        SVD(k=3).disguise(block(m=2), list("abcde"))


@pytest.mark.parametrize("name", sorted(NEW))
def test_every_new_method_sends_float64_rows_of_the_party_records(name):
    X = block(m=50)
    sent = method_class(name)(random_state=0, **REQUIRED.get(name, {})).disguise(X, list("abcde"))
    assert sent == [Sent("data", sent[0].array, Layout.ROWS)]
    assert sent[0].array.shape == (50, REQUIRED.get(name, {}).get("k", 5))
    assert np.isfinite(sent[0].array).all()


# --------------------------------------------------------------------------------------------
# end to end: a mixed feature consortium through the real CLI


def test_mixed_feature_consortium_runs_through_the_cli(tmp_path):
    scenario = write_scenario(tmp_path, scenario_toml(
        "wine-more-methods", [party_table("lab", WINE[:5], "rotation"),
                              party_table("winery", WINE[5:9], "geometric", sigma=0), party_table("shop", SHOP, "pca", k=2)],
        seed=5, data=WINE_LABELLED, clustering=kmeans(3)))
    out = tmp_path / "out"
    proc = run_ppc("run", scenario, "--out", out, "--quiet", timeout=180)
    assert proc.returncode == 0, proc.stderr
    report = read_report(out)
    assert report["state"] == "done"
    parties = {p["name"]: p for p in report["parties"]}
    assert {n: p["method"] for n, p in parties.items()} == {"lab": "rotation", "winery": "geometric", "shop": "pca"}
    assert parties["winery"]["params"] == {"sigma": 0, "optimize": 0, "weights": None, "phi": 0.2, "sample": 1000,
                                           "release": 0.0}  # its defaults filled in: one draw, as 002 eq. 1
    assert parties["shop"]["params"] == {"k": 2} and "own_check" not in parties["winery"]
    dims = {"lab": 5, "winery": 4, "shop": 2}
    assert {n: p["output_dims"] for n, p in parties.items()} == dims
    for name, p in parties.items():
        assert p["sends"] == "features" and p["rows"] == 178
        assert p["bytes"]["payload"] == p["bytes"]["predicted"] == 178 * dims[name] * 8
    # what arrived keeps each party's distances (rotation, rotation + translation) exactly
    wine = load_wine()
    for name in ("lab", "winery"):
        cols = [wine.feature_names.index(c) for c in parties[name]["columns"]]
        sent = np.load(out / "sent" / f"{name}.npz")["data"]
        np.testing.assert_allclose(pdist(sent), pdist(normalize(wine.data[:, cols], "zscore")), atol=1e-10)
