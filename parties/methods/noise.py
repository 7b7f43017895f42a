"""``noise``: additive random noise on the party's columns (002 §4 Delta alone; 004 §7)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Disguise, Param, Sent, rows


class Noise(Disguise):
    """Add i.i.d. zero-mean noise to every value: ``Y = X + E``.

    ``distribution="gaussian"``: E ~ N(0, sigma^2). ``"uniform"``:
    E ~ U(-a, a) with ``a = sigma * sqrt(3)``, whose standard deviation is
    sigma too, so both distort equally on average (every squared distance
    grows by ``2 d sigma^2`` in expectation). It is the Delta term of 002
    eq. 1 without the rotation and translation; noise this weak can be
    filtered out (002 §4, 004 §7), so it is a baseline rather than a defence.

    Parameters
    ----------
    distribution : {"gaussian", "uniform"}, default="gaussian"
        The noise distribution.
    sigma : float, default=0.1
        The noise standard deviation.

    References
    ----------
    Chen & Liu, *Geometric Data Perturbation* (seed 002), §4.
    """

    name = "noise"
    summary = "added random noise"
    source = "002 §4"
    randomised = True
    # set from ``params`` by Disguise.__init__
    distribution: str
    sigma: float

    params = {
        "distribution": Param(str, default="gaussian", choices=("gaussian", "uniform")),
        "sigma": Param(float, default=0.1, minimum=0, doc="noise standard deviation"),
    }

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        rng = np.random.default_rng(self.random_state)
        sigma = float(self.sigma)
        if self.distribution == "gaussian":
            E = rng.normal(0.0, sigma, size=X.shape)
        else:
            a = sigma * np.sqrt(3.0)
            E = rng.uniform(-a, a, size=X.shape)
        return [rows("data", X + E)]
