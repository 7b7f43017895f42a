"""parties.distances.pdist gives the same bits as scipy's pdist, which it stands in for in a party process."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist as scipy_pdist

from parties.distances import OWN_ROWS, pdist


def arrays():
    """Shapes from 1 record to past one block, 0 to 40 columns; values of very different scales and 0/1 columns,
    where a different order of additions would change the last bits."""
    rng = np.random.default_rng(7)
    for trial in range(120):
        m, d = int(rng.integers(1, 200)), int(rng.integers(0, 40))
        X = [rng.standard_normal((m, d)),
             rng.standard_normal((m, d)) * 10.0 ** rng.integers(-8, 8, size=d),
             rng.integers(0, 2, (m, d)).astype(float),
             rng.uniform(-1e3, 1e3, (m, d)) * np.where(np.arange(d) % 2, 1.0, 1e-5)][trial % 4]
        yield np.asfortranarray(X) if trial % 5 == 0 else X


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
def test_the_distances_are_scipys_to_the_last_bit(metric):
    for X in arrays():
        ours, theirs = pdist(X, metric), scipy_pdist(X, metric)
        assert ours.shape == theirs.shape and ours.dtype == np.float64
        assert np.array_equal(ours.view(np.uint64), theirs.view(np.uint64)), (X.shape, metric)


def test_large_sets_and_other_metrics_go_to_scipy():
    X = np.random.default_rng(1).integers(0, 3, (OWN_ROWS + 1, 2)).astype(float)
    assert np.array_equal(pdist(X, "sqeuclidean"), scipy_pdist(X, "sqeuclidean"))
    assert np.array_equal(pdist(X[:50], "hamming"), scipy_pdist(X[:50], "hamming"))
    with pytest.raises(ValueError, match="2-dimensional"):
        pdist(np.zeros(3))
