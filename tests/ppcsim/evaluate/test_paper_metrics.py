"""The metrics named in the papers: NP and CC (000 eqs. 5.21-5.23), RP/RM/CP/CK (001 eqs. 2.8-2.11),
002's own column privacy (§6.1.1) and its known input-output estimator (§6.2.4)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.neighbors import NearestNeighbors

from parties.methods.rotation import haar_orthogonal
from ppcsim.evaluate.attacks import known_io, known_io_002, known_io_forward
from ppcsim.evaluate.distortion import distortion
from ppcsim.evaluate.neighbours import class_compactness, neighbourhood_preservation, profile
from ppcsim.evaluate.privacy import column_privacy, column_privacy_002


def _sklearn_neighbours(X, k):
    return NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X, return_distance=False)[:, 1:]


def test_np_equals_a_direct_count_with_sklearn_neighbours():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    Y = X @ rng.normal(size=(5, 3))
    for k in (3, 4, 10):
        a, b = _sklearn_neighbours(X, k), _sklearn_neighbours(Y, k)
        expected = np.mean([len(set(a[i]) & set(b[i])) / k for i in range(60)])
        assert neighbourhood_preservation(pdist(X), pdist(Y), k) == pytest.approx(expected, abs=1e-12)
    assert neighbourhood_preservation(pdist(X), pdist(2 * X), 5) == 1.0


def test_cc_equals_a_direct_count_with_sklearn_neighbours():
    rng = np.random.default_rng(1)
    labels = np.repeat([0, 1, 2], [10, 20, 30])
    X = rng.normal(size=(60, 4)) + labels[:, None] * 0.8
    for k in (3, 7):
        nn = _sklearn_neighbours(X, k)
        per_class = [np.mean([np.mean(labels[nn[i]] == c) for i in np.flatnonzero(labels == c)]) for c in (0, 1, 2)]
        assert class_compactness(pdist(X), labels, k) == pytest.approx(np.mean(per_class), abs=1e-12)
    far = np.repeat(np.eye(3) * 100, 10, axis=0) + rng.normal(size=(30, 3))
    assert class_compactness(pdist(far), np.repeat([0, 1, 2], 10), 5) == 1.0


def test_profile_averages_k_3_to_10_and_skips_what_does_not_fit():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    noisy = X + 0.3 * rng.normal(size=X.shape)
    labels = np.arange(40) % 2
    out = profile(pdist(X), pdist(noisy), labels)
    assert list(out["np"]["by_k"]) == [str(k) for k in range(3, 11)]
    assert out["np"]["mean"] == pytest.approx(np.mean(list(out["np"]["by_k"].values())))
    for k in (3, 4, 10):  # one sort at k = 10 gives what each k alone gives
        assert out["np"]["by_k"][str(k)] == pytest.approx(neighbourhood_preservation(pdist(X), pdist(noisy), k))
        assert out["cc"]["by_k"][str(k)] == pytest.approx(class_compactness(pdist(noisy), labels, k))
        assert out["cc_original"]["by_k"][str(k)] == pytest.approx(class_compactness(pdist(X), labels, k))
    assert set(out) == {"np", "cc", "cc_original"}
    assert list(profile(pdist(X[:6]), pdist(X[:6]))["np"]["by_k"]) == ["3", "4", "5"]
    assert profile(pdist(X[:3]), pdist(X[:3])) == {}


def test_rank_metrics_by_hand():
    A = np.array([[1.0, 10.0], [2.0, 20.0], [6.0, 30.0]])  # range-normalised means 0.4 and 0.5
    flipped = np.array([[6.0, 10.0], [2.0, 20.0], [1.0, 30.0]])  # column 0 reversed, column 1 kept
    d = distortion(A, flipped)
    assert d["rp"] == pytest.approx(4 / 6) and d["rm"] == pytest.approx(4 / 6)  # eqs. 2.8, 2.9
    assert d["cp"] == 0.0 and d["ck"] == 1.0  # range-normalised column means keep their order
    swapped = np.array([[30.0, 1.0], [20.0, 2.0], [10.0, 6.0]])  # means 0.5 and 0.4
    d = distortion(A, swapped)
    assert d["cp"] == 1.0 and d["ck"] == 0.0  # eqs. 2.10, 2.11: the two attributes trade ranks
    assert d["vd"] == pytest.approx(np.linalg.norm(A - swapped) / np.linalg.norm(A))
    assert distortion(A, A) == {"vd": 0.0, "rp": 0.0, "rm": 1.0, "cp": 0.0, "ck": 1.0}


def test_column_privacy_002_is_half_the_standardised_rmse():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 5, size=(500, 2))
    mean_guess = np.broadcast_to(X.mean(axis=0), X.shape)
    np.testing.assert_allclose(column_privacy_002(X, mean_guess), [0.5, 0.5], rtol=1e-12)  # r = 1 sigma
    shifted = X + X.std(axis=0)  # a constant bias of one sigma: 002 counts it, ours does not
    np.testing.assert_allclose(column_privacy_002(X, shifted), [0.5, 0.5], rtol=1e-12)
    np.testing.assert_allclose(column_privacy(X, shifted), [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(column_privacy_002(X, X), [0.0, 0.0], atol=0)


def test_known_io_estimators_agree_without_noise_and_differ_with_it():
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(400, 4))
    R, t = haar_orthogonal(4, rng), rng.uniform(size=4)
    Y = X @ R.T + t
    known = rng.choice(400, size=20, replace=False)
    np.testing.assert_allclose(known_io_forward(X, Y, known), X, atol=1e-9)
    np.testing.assert_allclose(known_io(X, Y, known), X, atol=1e-9)
    # with noise, regressing X on Y (ours) errs less than inverting the fitted forward map (002 §6.2.4)
    ours, theirs = [], []
    for seed in range(30):
        r = np.random.default_rng(seed)
        noisy = Y + r.normal(scale=0.3, size=Y.shape)
        known = r.choice(400, size=20, replace=False)
        ours.append(column_privacy_002(X, known_io(X, noisy, known)).mean())
        theirs.append(column_privacy_002(X, known_io_forward(X, noisy, known)).mean())
    assert np.mean(ours) < np.mean(theirs)


def test_known_record_draws_shrink_with_the_records_but_not_below_ten():
    from ppcsim.evaluate.settings import Settings
    from ppcsim.run.observer import known_draws

    assert known_draws(Settings(), 178) == 100
    assert known_draws(Settings(), 20000) == 20
    assert known_draws(Settings(), 10**6) == 10
    assert known_draws(Settings(known_draws=5), 20000) == 5
    assert known_draws(Settings(known_draws=500), 178) == 500


def _cp_ck_by_hand(A: np.ndarray, B: np.ndarray) -> tuple[float, float]:
    """001 eqs. 2.10-2.11 on range-normalised blocks (eq. 2.1), the means summed exactly."""
    import math

    from scipy.stats import rankdata

    def ranks(block):
        scaled = (block - block.min(axis=0)) / (block.max(axis=0) - block.min(axis=0))
        return rankdata([math.fsum(col) / len(col) for col in scaled.T])

    ra, rb = ranks(A), ranks(B)
    return float(np.mean(np.abs(ra - rb))), float(np.mean(ra == rb))


def test_cp_ck_rank_range_normalised_means_whatever_the_summation_order():
    """001 applies CP and CK to range-normalised data: on a z-scored block they must not follow rounding noise."""
    from parties.normalize import normalize

    rng = np.random.default_rng(11)
    raw = np.column_stack([rng.exponential(size=300), rng.uniform(size=300), -rng.exponential(size=300),
                           rng.normal(size=300), rng.beta(5, 1, size=300)]) * [3, 50, 2, 7, 100] + 1000
    A = normalize(raw, "zscore")  # every column mean ~1e-16: ranks of plain means are noise
    B = A + rng.normal(scale=0.6, size=A.shape)
    expected = _cp_ck_by_hand(raw, B)
    d = distortion(A, B)
    assert (d["cp"], d["ck"]) == pytest.approx(expected, abs=1e-12)
    assert 0 < d["cp"] and d["ck"] < 1  # the noise does reorder these columns' means
    backwards = distortion(A[::-1], B[::-1])  # a different summation order must not change the ranks
    assert (backwards["cp"], backwards["ck"]) == (d["cp"], d["ck"])
    assert (distortion(raw, B)["cp"], distortion(raw, B)["ck"]) == (d["cp"], d["ck"])  # normalisation-free


def test_cp_ck_are_not_meaningful_without_a_rank_order():
    A = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 5.0], [0.5, 0.5, 2.0]])  # columns 0 and 1 tie on average
    d = distortion(A, A + 0.01)
    assert d["cp"] is None and d["ck"] is None and d["vd"] > 0


def _estimator_002_by_hand(X: np.ndarray, Y: np.ndarray, known: np.ndarray) -> np.ndarray:
    """002 §6.2.4 steps 1-3 as printed, in its column convention (points are columns, O = R X + Psi + Delta)."""
    d = X.shape[1]
    x, o = X[known].T, Y[known].T  # d x q and k x q
    ref = d  # x_{d+1}, 0-based
    rest = [i for i in range(len(known)) if i != ref]
    X_bar, O_bar = x[:, rest] - x[:, [ref]], o[:, rest] - o[:, [ref]]
    R_hat = O_bar @ X_bar.T @ np.linalg.inv(X_bar @ X_bar.T)  # R^ = O_bar X_bar' (X_bar X_bar')^-1
    t_hat = np.mean(o - R_hat @ x, axis=1, keepdims=True)  # (1/(d+1)) sum (o_i - R^ x_i)
    return (np.linalg.inv(R_hat) @ (Y.T - t_hat)).T  # X^ = R^-1 (O - Psi^)


def test_known_io_002_is_002_s_estimator_and_the_intercept_fit_a_variant():
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(300, 4))
    R, t = haar_orthogonal(4, rng), rng.uniform(size=4)
    noisy = X @ R.T + t + rng.normal(scale=0.2, size=X.shape)
    exact = rng.choice(300, size=5, replace=False)  # q = d + 1: 002's setting
    np.testing.assert_allclose(known_io_002(X, noisy, exact), _estimator_002_by_hand(X, noisy, exact), atol=1e-9)
    np.testing.assert_allclose(known_io_forward(X, noisy, exact), known_io_002(X, noisy, exact), atol=1e-9)
    more = rng.choice(300, size=15, replace=False)  # q > d + 1: differences against the (d+1)-th known point
    np.testing.assert_allclose(known_io_002(X, noisy, more), _estimator_002_by_hand(X, noisy, more), atol=1e-9)
    assert np.abs(known_io_forward(X, noisy, more) - known_io_002(X, noisy, more)).max() > 1e-3


def test_average_reports_median_and_interquartile_range_beside_the_mean():
    from ppcsim.evaluate.scores import average, scores

    rng = np.random.default_rng(8)
    X = rng.uniform(size=(50, 3))
    draws = [scores(X, X + rng.standard_t(2, size=X.shape) * s, ["a", "b", "c"], first_draw=i == 0)
             for i, s in enumerate([0.01, 0.02, 0.03, 0.05, 0.5])]  # heavy-tailed: the mean is pulled up
    out = average(draws)
    means = sorted(d["mean"] for d in draws)
    assert out["mean"] == pytest.approx(sum(means) / 5)
    assert out["median"]["mean"] == means[2]
    assert out["iqr"]["mean"] == pytest.approx(means[3] - means[1])  # linear quartiles at positions 1 and 3 of 0..4
    mins = sorted(d["min"] for d in draws)
    assert out["median"]["min"] == mins[2] and out["iqr"]["min"] == pytest.approx(mins[3] - mins[1])
    assert out["privacy_002"]["median"]["mean"] == sorted(d["privacy_002"]["mean"] for d in draws)[2]
