"""``geometric``: geometric data perturbation, rotation + translation + noise (002 eq. 1)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Disguise, Param, Sent, rows
from parties.methods.rotation import haar_orthogonal


class Geometric(Disguise):
    """Perturb the party's normalised block: ``Y = X @ R.T + psi + Delta`` (002 eq. 1).

    002 writes ``G(X) = R X + Psi + Delta`` with records as columns. R is a
    Haar-random orthogonal matrix (the same draw as ``rotation`` with the
    same seed), ``psi`` one translation vector added to every record, entries
    uniform on [0, 1) (the range of min-max normalised data), and ``Delta``
    i.i.d. N(0, sigma^2) noise, one draw per entry. R and psi keep distances
    exactly (002 Thm 6); the noise adds ``2 d sigma^2`` to every squared
    distance in expectation and is what resists the distance-inference
    attacks that break a plain rotation (002 §4, §6).

    Parameters
    ----------
    sigma : float, default=0.1
        Standard deviation of the noise (002 uses 0.1); 0 leaves rotation
        plus translation.

    Attributes
    ----------
    R_ : ndarray of shape (d, d)
        The private orthogonal matrix.
    psi_ : ndarray of shape (d,)
        The private translation.

    References
    ----------
    Chen & Liu, *Geometric Data Perturbation* (seed 002), §4, eq. 1.
    """

    name = "geometric"
    summary = "rotation, translation and noise"
    source = "002 eq. 1"
    randomised = True
    # set from ``params`` by Disguise.__init__
    sigma: float

    params = {"sigma": Param(float, default=0.1, minimum=0, doc="noise standard deviation")}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        m, d = X.shape
        rng = np.random.default_rng(self.random_state)
        self.R_ = haar_orthogonal(d, rng)
        self.psi_ = rng.random(d)
        noise = rng.normal(0.0, float(self.sigma), size=(m, d))
        return [rows("data", X @ self.R_.T + self.psi_ + noise)]
