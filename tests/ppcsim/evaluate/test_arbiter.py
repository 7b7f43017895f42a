"""The secure-aggregation arbiter's own attack (ppcsim.evaluate.arbiter) on the sums it reads in round 0."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_wine

from ppcsim.evaluate.arbiter import classical_scaling, multilaterate, place_from_round0, placement_error


def wine(columns: int) -> np.ndarray:
    X = load_wine().data[:, :columns]
    return (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)


def round0(X: np.ndarray, init: np.ndarray, scale_bits: int = 32) -> np.ndarray:
    """What the arbiter reads in round 0: every record's squared distance to each initial record, in fixed point."""
    exact = ((X[:, None, :] - X[init][None, :, :]) ** 2).sum(axis=2)
    return np.rint(exact * 2.0**scale_bits) / 2.0**scale_bits


def test_classical_scaling_places_points_up_to_a_rigid_motion():
    rng = np.random.default_rng(1)
    P = rng.normal(size=(8, 3))
    squared = ((P[:, None] - P[None]) ** 2).sum(axis=2)
    Q = classical_scaling(squared)
    assert Q.shape == (8, 3)
    assert np.allclose(((Q[:, None] - Q[None]) ** 2).sum(axis=2), squared)
    assert placement_error(Q, P) < 1e-12


def test_multilateration_from_exact_anchors_is_exact():
    rng = np.random.default_rng(2)
    anchors, X = rng.normal(size=(5, 3)), rng.normal(size=(30, 3))
    squared = ((X[:, None] - anchors[None]) ** 2).sum(axis=2)
    assert np.allclose(multilaterate(anchors, squared), X)


def test_with_more_centres_than_columns_round_0_places_every_joined_record():
    """wine's 9 first columns, 10 centres: the issue's measurement (relative error 7.2e-10) from round 0 alone."""
    X = wine(9)
    init = np.random.default_rng(7).choice(len(X), 10, replace=False)
    error = placement_error(place_from_round0(round0(X, init), init), X)
    assert error < 1e-6


def test_with_fewer_centres_round_0_gives_a_projection_only():
    X = wine(9)
    init = np.random.default_rng(7).choice(len(X), 3, replace=False)
    estimate = place_from_round0(round0(X, init), init)
    assert estimate.shape == (len(X), 2)  # k - 1 dimensions
    assert 0.5 < placement_error(estimate, X) < 1.0


def test_the_error_is_one_for_an_estimate_that_places_nothing_and_ignores_rotation_and_shift():
    X = wine(4)
    assert placement_error(np.zeros((len(X), 4)), X) == 1.0
    rotation, _ = np.linalg.qr(np.random.default_rng(3).normal(size=(4, 4)))
    assert placement_error(X @ rotation + 5.0, X) < 1e-12
