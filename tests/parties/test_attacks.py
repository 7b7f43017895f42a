"""The attacks a data owner runs on its own disguise (parties.attacks): the observer's own code, and 002 §6.1's
weighted guarantees."""

from __future__ import annotations

import numpy as np
import pytest

import parties.attacks as owner
import ppcsim.evaluate.attacks as observer
import ppcsim.evaluate.privacy as privacy


def test_the_owner_and_the_observer_run_the_same_attacks():
    assert observer.ica_attack is owner.ica_attack and observer.known_io_002 is owner.known_io_002
    assert privacy.column_privacy is owner.column_privacy


def test_weighted_privacy_divides_by_weights_scaled_to_a_mean_of_one():
    """002 §6.1: Phi1 = min p_i / w_i, Phi2 = mean p_i / w_i; equal weights give the unweighted figures."""
    p = np.array([0.1, 0.2, 0.3])
    assert owner.weighted_privacy(p) == {"min": 0.1, "mean": pytest.approx(0.2)}
    assert owner.weighted_privacy(p, [5, 5, 5]) == owner.weighted_privacy(p)
    w = np.array([1.0, 3.0, 2.0]) / 2.0  # mean 1
    assert owner.weighted_privacy(p, [1, 3, 2]) == {"min": pytest.approx((p / w).min()),
                                                    "mean": pytest.approx((p / w).mean())}
    assert owner.weighted_privacy(p, [1, 3, 2])["min"] == pytest.approx(0.2 / 1.5)


@pytest.mark.parametrize("weights", [[1, 2], [1, 0, 1], [1, -1, 1], [1, np.inf, 1]])
def test_weights_must_be_one_positive_number_per_column(weights):
    with pytest.raises(ValueError, match="weights must be 3 positive finite numbers, one per column"):
        owner.weighted_privacy([0.1, 0.2, 0.3], weights)
