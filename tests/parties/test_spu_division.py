"""The SPU k-means program's division (parties/spu_kmeans.py: ``divide``), checked in floating point with numpy
in place of jax: the steps SPU runs on shares, so that a wrong table, look-up or scaling fails here in a second."""

from __future__ import annotations

import numpy as np
import pytest

from parties.spu_kmeans import divide, division_table, scale_bits, smallest_factor_bits

FRAC = 16  # the fractional bits of ppc-sim's default fixed-point type (mpc_frac)


def fixed(values: np.ndarray, frac: int = FRAC) -> np.ndarray:
    """``values`` as SPU encodes a public constant: rounded to ``frac`` fractional bits."""
    return np.round(np.asarray(values) * 2.0**frac) / 2.0**frac


@pytest.mark.parametrize("m", [1, 7, 1000, 16_383, 16_384, 32_767, 32_768, 100_000])
def test_divide_gives_every_mean_to_the_fixed_points_precision(m):
    rng = np.random.default_rng(m)
    counts = np.unique(np.concatenate([[1, m], 2 ** np.arange(m.bit_length()), rng.integers(1, m + 1, 200)]))
    counts = counts[(counts >= 1) & (counts <= m)].astype(float)
    D = 3
    means = rng.normal(size=(len(counts), D)) * 5
    E = np.hstack([means * counts[:, None], counts[:, None]])
    table = fixed(division_table(m, FRAC))  # as the program's public input is encoded
    error = np.max(np.abs(divide(np, E, np.zeros((len(counts), D)), table, m, FRAC) - means) / np.abs(means))
    assert error <= 2.0 ** -(FRAC + 1)  # R(n) in (1, 2] rounded to 2^-17 at most: a relative 2^-17


@pytest.mark.parametrize("m", [1, 1000, 16_383, 16_384, 65_536, 100_000, 2**24])
def test_every_scale_factor_is_one_spu_takes(m):
    # a count of bit length e is scaled by 2^(L-e): the smallest factor, 2^(L-T), is one SPU multiplies by at
    # FRAC bits (2^-14 at 16; 2^-15 made SPU 0.9.5 refuse the concatenation after it)
    T, L = scale_bits(m, FRAC)
    assert 2 ** (T - 1) <= m < 2**T and L >= 0 and T - L <= smallest_factor_bits(FRAC) == FRAC - 2
    assert L == 0 or T - L == FRAC - 2  # no larger than it must be


@pytest.mark.parametrize("m", [1, 5, 1000, 70_000])
def test_the_table_holds_each_counts_two_factors_of_its_reciprocal(m):
    T, L = scale_bits(m, FRAC)
    table = np.asarray(division_table(m, FRAC))
    assert table.shape == (m + 1, 3)
    n = np.arange(1, m + 1)
    F, R = table[:m, 0], table[:m, 1]
    assert np.allclose(F * R * 2.0**-L, 1 / n, rtol=1e-15)
    assert np.all((R > 1) | (n & (n - 1) == 0)) and np.all(R <= 2) and np.all(R >= 1)
    assert np.array_equal(np.log2(F), np.round(np.log2(F)))  # powers of two: exact in the fixed point
    assert F.min() >= 2.0 ** -smallest_factor_bits(FRAC)
    assert table[m].tolist() == [0.0, 0.0, 1.0] and not table[:m, 2].any()


def test_an_empty_cluster_keeps_its_centre_and_the_others_move():
    C = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    E = np.array([[0.0, 0.0, 0.0], [6.0, 9.0, 3.0], [0.0, 0.0, 0.0]])  # clusters 0 and 2 empty, 1 has 3 records
    out = divide(np, E, C, np.asarray(division_table(10, FRAC)), 10, FRAC)
    assert np.array_equal(out[[0, 2]], C[[0, 2]])
    assert np.allclose(out[1], [2.0, 3.0], rtol=1e-12)


def test_a_count_is_looked_up_in_its_own_row():
    # a table one row short (as if m were 14) has no row for a count of 15: the cluster would read as empty
    E = np.array([[15.0, 15.0], [24.0, 8.0]])
    C = np.array([[7.0], [7.0]])
    assert np.allclose(divide(np, E, C, np.asarray(division_table(15, FRAC)), 15, FRAC), [[1.0], [3.0]], rtol=1e-12)
    assert not np.allclose(divide(np, E, C, np.asarray(division_table(14, FRAC)), 14, FRAC), [[1.0], [3.0]])
