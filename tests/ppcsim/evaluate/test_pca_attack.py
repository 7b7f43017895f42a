"""000's PCA-based attack (§4.5, Algorithm 4.3) and the matching distances (eqs. 4.25-4.26)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import ortho_group
from sklearn.datasets import load_wine

from ppcsim.evaluate.pca_attack import _ks_statistic, distance_error, md_eigenvalues, md_eigenvectors, pad, pca_attack
from ppcsim.evaluate.privacy import column_privacy

X = load_wine().data
Z = (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.mark.parametrize("exhaustive", [True, False])
def test_the_whole_distribution_undoes_a_rotation(exhaustive):
    A = Z[:, :7]
    out = pca_attack(A, A @ ortho_group.rvs(7, random_state=1), exhaustive=exhaustive)
    assert out["exhaustive"] is exhaustive
    assert column_privacy(A, out["estimate"]).max() < 1e-9 and distance_error(A, out["estimate"]) < 1e-9
    assert out["pvalue"] > 0.9


def test_a_sample_recovers_less_and_more_sample_recovers_more():
    """000 Fig. 4.17(b): the larger the known sample, the smaller the distance error (averaged over draws)."""
    A, R = Z[:, :7], ortho_group.rvs(7, random_state=2)
    error = {}
    for share in (0.1, 0.3, 1.0):
        found = []
        for seed in range(6):
            known = np.random.default_rng(seed).choice(178, size=int(share * 178), replace=False)
            found.append(distance_error(A, pca_attack(A[known], A @ R, random_state=seed)["estimate"]))
        error[share] = np.mean(found)
    assert error[1.0] < 1e-9 < error[0.3] < error[0.1]


def test_the_exhaustive_search_tests_every_mirror_image_and_keeps_the_best():
    A = Z[:, 7:]
    Y = A @ ortho_group.rvs(6, random_state=3)
    known = np.random.default_rng(0).choice(178, size=53, replace=False)
    best = pca_attack(A[known], Y, exhaustive=True, random_state=4)
    # no other mirror image fits the sample better by the criterion of the search (the worst column's KS statistic)
    P = (Y - Y.mean(axis=0)) @ best["vectors_disguised"]
    S = A[known]

    def worst(signs):
        recovered = (P * signs) @ best["vectors_sample"].T + S.mean(axis=0)
        return max(_ks_statistic(recovered[:, j], S[:, j]) for j in range(6))

    # 178 and 53 records, fewer than SEARCH_ROWS: the search compared every record, as this does
    scores = {signs: worst(np.array(signs)) for signs in itertools.product((1.0, -1.0), repeat=6)}
    assert worst(best["signs"]) == pytest.approx(min(scores.values()))


def test_padding_refuses_a_wider_block():
    assert pad(np.ones((3, 2)), 4).tolist() == [[1, 1, 0, 0]] * 3
    with pytest.raises(ValueError, match="more than the original's 2"):
        pad(np.ones((3, 3)), 2)


def test_matching_distances_of_eqs_4_25_and_4_26():
    # eigenvalues as shares of their sum: (0.5, 0.3, 0.2) against (0.6, 0.3, 0.1) differ by at most 0.1
    assert md_eigenvalues(np.array([5.0, 3, 2]), np.array([6.0, 3, 1])) == pytest.approx(0.1)
    assert md_eigenvalues(np.array([5.0, 3, 2]), np.array([1.0, 3, 6]) * 7) == pytest.approx(0.1)  # any order, scale
    U = ortho_group.rvs(4, random_state=0)
    assert md_eigenvectors(U, -U[:, ::-1]) == pytest.approx(0.0, abs=1e-7)  # a permutation and signs: no change
    c, s = np.cos(0.3), np.sin(0.3)
    turned = U.copy()
    turned[:, :2] = U[:, :2] @ np.array([[c, -s], [s, c]])  # two axes turned by 0.3 rad within their plane
    assert md_eigenvectors(U, turned) == pytest.approx(0.3)
