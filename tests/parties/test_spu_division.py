"""The SPU k-means program's division (parties/spu_kmeans.py: ``divide``), checked in floating point with numpy
in place of jax: the steps SPU runs on shares, so that a wrong normalisation or step fails here in a second."""

from __future__ import annotations

import numpy as np
import pytest

from parties.spu_kmeans import DIVISION_STEPS, divide, scale_bits, smallest_factor_bits

FRAC = 16  # the fractional bits of ppc-sim's default fixed-point type (mpc_frac)


@pytest.mark.parametrize("m", [1, 7, 1000, 65_535, 100_000, 1_000_000])
def test_divide_gives_every_mean_to_goldschmidts_bound(m):
    rng = np.random.default_rng(m)
    counts = np.unique(np.concatenate([[1, m], 2 ** np.arange(m.bit_length()), rng.integers(1, m + 1, 200)]))
    counts = counts[(counts >= 1) & (counts <= m)].astype(float)
    D = 3
    means = rng.normal(size=(len(counts), D)) * 5
    E = np.hstack([means * counts[:, None], counts[:, None]])
    error = np.max(np.abs(divide(np, E, np.zeros((len(counts), D)), m, FRAC) - means) / np.abs(means))
    bound = (1 / 17) ** (2 ** DIVISION_STEPS)  # 1.4e-10 for three steps
    assert bound / 100 < error <= bound * 1.0001  # the steps the constant says, not more: the bound is tight


@pytest.mark.parametrize("m", [1, 1000, 16_383, 16_384, 65_536, 100_000, 2**24])
def test_every_scale_factor_is_one_spu_takes(m):
    # a count with highest bit h is scaled by 2^(L-h-1): the smallest factor, 2^(L-T), is one SPU multiplies
    # by at FRAC bits (2^-14 at 16; 2^-15 made SPU 0.9.5 refuse the concatenation after it)
    T, L = scale_bits(m, FRAC)
    assert 2 ** (T - 1) <= m < 2**T and L >= 0 and T - L <= smallest_factor_bits(FRAC) == FRAC - 2
    assert L == 0 or T - L == FRAC - 2  # no larger than it must be


def test_an_empty_cluster_keeps_its_centre_and_the_others_move():
    C = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    E = np.array([[0.0, 0.0, 0.0], [6.0, 9.0, 3.0], [0.0, 0.0, 0.0]])  # clusters 0 and 2 empty, 1 has 3 records
    out = divide(np, E, C, 10, FRAC)
    assert np.array_equal(out[[0, 2]], C[[0, 2]])
    assert np.allclose(out[1], [2.0, 3.0], rtol=1e-9)


def test_the_largest_count_is_normalised_by_its_own_highest_bit():
    # m = 15: a count of 15 has its highest bit at 2^3 and scales by 2^-4 into [1/2, 1)
    E = np.array([[15.0, 15.0], [24.0, 8.0]])
    assert np.allclose(divide(np, E, np.zeros((2, 1)), 15, FRAC), [[1.0], [3.0]], rtol=1e-9)
    # a bound one bit short (as if m were 7) leaves 15 at 15/8, where the steps diverge: the bound matters
    assert not np.allclose(divide(np, E, np.zeros((2, 1)), 7, FRAC), [[1.0], [3.0]], rtol=1e-2)
