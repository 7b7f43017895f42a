"""parties.normalize: z-score (ddof=1), min-max, none, constant columns, bad method."""

from __future__ import annotations

import numpy as np
import pytest

from parties.normalize import NORMALIZATIONS, normalize


@pytest.fixture
def X():
    rng = np.random.default_rng(11)
    return rng.normal(loc=[3.0, -5.0, 100.0], scale=[1.0, 0.2, 40.0], size=(25, 3))


def test_zscore_uses_sample_standard_deviation(X):
    out = normalize(X, "zscore")
    expected = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    # ddof=1 is what makes each column's sample std exactly 1 (ddof=0 would give sqrt((n-1)/n)).
    np.testing.assert_allclose(out.std(axis=0, ddof=1), np.ones(3), rtol=1e-12)
    np.testing.assert_allclose(out.mean(axis=0), np.zeros(3), atol=1e-12)


def test_zscore_small_hand_example():
    # column [1, 2, 3]: mean 2, sample std 1 -> [-1, 0, 1]; ddof=0 would give +-1.2247
    out = normalize(np.array([[1.0], [2.0], [3.0]]), "zscore")
    np.testing.assert_allclose(out[:, 0], [-1.0, 0.0, 1.0], rtol=0, atol=1e-15)


def test_minmax_maps_to_unit_interval_exactly(X):
    out = normalize(X, "minmax")
    np.testing.assert_array_equal(out.min(axis=0), np.zeros(3))
    np.testing.assert_array_equal(out.max(axis=0), np.ones(3))
    expected = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-15)
    # the extreme rows are where the input's extremes are
    np.testing.assert_array_equal(out.argmin(axis=0), X.argmin(axis=0))
    np.testing.assert_array_equal(out.argmax(axis=0), X.argmax(axis=0))


def test_minmax_small_hand_example():
    out = normalize(np.array([[2.0, -1.0], [4.0, 1.0], [10.0, 0.0]]), "minmax")
    np.testing.assert_allclose(out, [[0.0, 0.0], [0.25, 1.0], [1.0, 0.5]], rtol=0, atol=1e-15)


def test_none_returns_equal_copy(X):
    out = normalize(X, "none")
    assert out is not X
    assert not np.shares_memory(out, X)
    np.testing.assert_array_equal(out, X)
    out[0, 0] = 12345.0
    assert X[0, 0] != 12345.0


def test_none_converts_integers_to_float64():
    out = normalize(np.array([[1, 2], [3, 4]]), "none")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("how", ["zscore", "minmax"])
@pytest.mark.parametrize("value", [0.0, 7.0, 0.1])
def test_constant_column_gives_zeros_not_nan(how, value):
    # 0.1 repeated: its mean is not exactly 0.1 in floating point and its std is not
    # exactly 0, so a naive (x - mean) / std would give large garbage or NaN.
    X = np.column_stack([np.full(7, value), np.arange(7.0)])
    out = normalize(X, how)
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(out[:, 0], np.zeros(7))
    # the other column is normalised as usual
    col = np.arange(7.0)
    expected = (col - col.mean()) / col.std(ddof=1) if how == "zscore" else col / 6.0
    np.testing.assert_allclose(out[:, 1], expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("how", ["zscore", "minmax"])
def test_single_row_gives_zeros(how):
    out = normalize(np.array([[1.5, -2.0, 0.1]]), how)
    np.testing.assert_array_equal(out, np.zeros((1, 3)))


def test_input_is_not_modified(X):
    before = X.copy()
    for how in NORMALIZATIONS:
        normalize(X, how)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("how", ["l2", "", "ZSCORE"])
def test_unknown_method_raises(how):
    with pytest.raises(ValueError, match=r"normalize must be one of zscore, minmax, none, got '" + how + "'"):
        normalize(np.ones((3, 2)), how)
