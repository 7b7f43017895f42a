"""parties.data.load_blobs and parties.normalize.normalize against their plain reference formulas."""

from __future__ import annotations

import numpy as np
import pytest

from parties.data import blob_labels, load_blobs
from parties.normalize import normalize

OPTIONS = {"rows": 1000, "columns": 10, "clusters": 5, "seed": 7}


def blobs_reference(options: dict, wanted: list[str]) -> np.ndarray:
    """The straightforward column-by-column construction."""
    rows, clusters, seed = options["rows"], options["clusters"], options["seed"]
    std = options.get("cluster_std", 1.0)
    labels = blob_labels(rows, clusters, seed)
    out = np.empty((rows, len(wanted)))
    for i, name in enumerate(wanted):
        rng = np.random.default_rng([seed, 1, int(name[1:])])
        centres = rng.uniform(-10.0, 10.0, size=clusters)
        out[:, i] = centres[labels] + std * rng.standard_normal(rows)
    return out


def normalize_reference(X: np.ndarray, how: str) -> np.ndarray:
    """The textbook formulas, with full-size temporaries."""
    X = np.asarray(X, dtype=np.float64)
    if how == "none":
        return X.copy()
    if how == "zscore":
        center = X.mean(axis=0)
        scale = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    else:
        center = X.min(axis=0)
        scale = X.max(axis=0) - center
    constant = np.ptp(X, axis=0) == 0
    out = (X - center) / np.where(constant, 1.0, scale)
    out[:, constant] = 0.0
    return out


@pytest.mark.parametrize("block", [16384, 128, 1])
@pytest.mark.parametrize("std", [1.0, 2.5])
def test_load_blobs_equals_column_by_column_reference(block, std):
    # 1000 rows in blocks of 128: seven full blocks and a partial one
    options = {**OPTIONS, "cluster_std": std}
    wanted = ["x3", "x0", "x7"]
    out = load_blobs(options, wanted, block=block)
    assert out.shape == (1000, 3) and out.dtype == np.float64
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, blobs_reference(options, wanted))


def test_load_blobs_column_depends_only_on_its_index():
    both = load_blobs(OPTIONS, ["x3", "x0", "x7"])
    np.testing.assert_array_equal(load_blobs(OPTIONS, ["x7"])[:, 0], both[:, 2])
    np.testing.assert_array_equal(load_blobs(OPTIONS, ["x0", "x3"]), both[:, [1, 0]])


def test_load_blobs_no_rows_or_no_columns():
    assert load_blobs({**OPTIONS, "rows": 0}, ["x1"]).shape == (0, 1)
    assert load_blobs(OPTIONS, []).shape == (1000, 0)


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(loc=[3.0, -5.0, 100.0, 0.0], scale=[1.0, 0.2, 40.0, 1.0], size=(500, 4))
    X[:, 3] = 0.1  # constant; its float mean is not exactly 0.1
    return X


@pytest.mark.parametrize("how", ["zscore", "minmax", "none"])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_normalize_equals_reference(data, how, layout):
    X = np.asarray(data, order=layout)
    before = X.copy(order="K")
    expected = normalize_reference(X, how)  # same layout, so numpy sums in the same order
    out = normalize(X, how)
    if how == "zscore":
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=0)
    else:
        np.testing.assert_array_equal(out, expected)
    if how != "none":
        np.testing.assert_array_equal(out[:, 3], np.zeros(len(X)))
    assert not np.shares_memory(out, X)
    np.testing.assert_array_equal(X, before)  # the input is left alone


@pytest.mark.parametrize("how", ["zscore", "minmax"])
def test_normalize_first_equals_last_is_not_constant(data, how):
    # a column whose first and last values agree still needs the full constancy check
    X = data.copy()
    X[-1, 0] = X[0, 0]
    out = normalize(X, how)
    np.testing.assert_allclose(out, normalize_reference(X, how), rtol=1e-12, atol=0)
    assert np.ptp(out[:, 0]) > 0


@pytest.mark.parametrize("how", ["zscore", "minmax"])
def test_normalize_one_row_and_integer_columns(how):
    np.testing.assert_array_equal(normalize(np.array([[1.5, -2.0, 0.1]]), how), np.zeros((1, 3)))
    X = np.array([[0, 1, 5], [1, 1, 7], [0, 1, 9], [1, 1, 4]])  # 0/1 codes and a constant column
    np.testing.assert_allclose(normalize(X, how), normalize_reference(X, how), rtol=1e-12, atol=0)


@pytest.mark.parametrize("how", ["zscore", "minmax", "none"])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_normalize_in_place_gives_the_same_bits(data, how, layout):
    X = np.asarray(data, order=layout).copy(order=layout)
    expected = normalize(X, how)
    got = normalize(X, how, out=X)
    assert got is X
    np.testing.assert_array_equal(X, expected)


def test_a_party_normalises_its_own_columns_in_place():
    from parties.config import PartyConfig
    from parties.disguise import disguise

    cfg = PartyConfig(name="a", source="synthetic:blobs", columns=("x0", "x2"), method="drbt",
                      params={"k": 1}, seed=1, source_options=OPTIONS)
    done = disguise(cfg)
    assert done.X is done.data.X
    raw = load_blobs(OPTIONS, ["x0", "x2"])
    np.testing.assert_array_equal(done.X, normalize(raw, "zscore"))
