"""Privacy of a party's block against an attacker's estimate (002 §6.1.1, 001 eq. 2.7)."""

from __future__ import annotations

import numpy as np

from parties.attacks import check_pair as _pair
from parties.attacks import (
    column_privacy,  # noqa: F401 (importable from here, as before)
    weighted_privacy,
)


def column_privacy_002(original, estimate) -> np.ndarray:
    """002's unified column privacy as §6.1.1 defines it: half the RMSE on the standardised column.

    ``Priv = (1 / (2 sigma)) sqrt(mean_i ((y_i - mu) / sigma - yhat_i)^2)`` with
    both the original and the estimate standardised by the original column's
    mean ``mu`` and (population) standard deviation ``sigma``: ``r / 2`` where
    ``r`` is the RMSE in units of sigma, the range mu ± 2 sigma standing for
    the column's value range. Unlike :func:`column_privacy` (the spread of
    the error on [0, 1]-scaled columns, which 002 uses in its experiments,
    §6.2.2) it counts a constant bias as protection, and it is on a
    different scale: guessing every value as the column's mean scores
    exactly 0.5 here (and about 0.29 there for a uniform column). A constant
    column is divided by 1 instead of its zero deviation.

    Parameters
    ----------
    original : ndarray of shape (m, d)
    estimate : ndarray of shape (m, d)
        The attacker's estimate, in the original units.

    Returns
    -------
    ndarray of shape (d,)
        ``Priv`` per column; 0 is full disclosure.
    """
    original, estimate = _pair(original, estimate)
    sigma = original.std(axis=0)
    sigma = np.where(sigma > 0, sigma, 1.0)
    return np.sqrt(np.mean(((original - estimate) / sigma) ** 2, axis=0)) / 2.0


def summary(p) -> dict[str, float]:
    """002 §6.1: minimum privacy guarantee Phi1 = min_j p_j and average Phi2 = mean_j p_j.

    All column weights ``w_j`` are 1.

    Parameters
    ----------
    p : array-like of shape (d,)
        Column privacy values, as :func:`column_privacy` returns.

    Returns
    -------
    dict
        ``{"min": Phi1, "mean": Phi2}``.
    """
    return weighted_privacy(p)  # every weight 1


def vd(original, estimate) -> float:
    """Value difference ``||A - A~||_F / ||A||_F`` (001 eq. 2.7).

    Parameters
    ----------
    original : ndarray of shape (m, d)
        ``A``.
    estimate : ndarray of shape (m, d)
        ``A~``, the distorted or estimated block.

    Returns
    -------
    float
        The relative distortion. When ``A`` is all zeros the ratio is
        undefined: 0.0 if ``A~`` is all zeros too (nothing changed), else
        ``inf`` (any change is infinitely large relative to nothing).
    """
    original, estimate = _pair(original, estimate)
    difference = float(np.linalg.norm(original - estimate))
    norm = float(np.linalg.norm(original))
    if norm == 0.0:
        return 0.0 if difference == 0.0 else float("inf")
    return difference / norm
