"""``rotation``: a private Haar-random rotation of the party's columns (002 §4, eq. 1 with R only)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Disguise, Sent, rows


def haar_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """A d x d orthogonal matrix drawn from the Haar distribution.

    QR of a standard Gaussian matrix, with each column of Q multiplied by the
    sign of the matching diagonal entry of the triangular factor (without
    that fix Q is not Haar-distributed; Mezzadri 2007).
    """
    Q, T = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(T))


class Rotation(Disguise):
    """Rotate the party's normalised block: ``Y = X @ R.T`` (002 eq. 1, ``G(X) = RX``).

    002 stores records as columns (d x N); with records as rows the same
    transform is ``X @ R.T``. R is orthogonal, so every pairwise distance is
    kept exactly and distance-based clustering is unchanged (002 Thm 6). The
    price is the distance-inference attacks of 002 §6: q = d + 1
    known records recover R. A one-column block can only be flipped in sign
    (R = +1 or -1): it gets no protection.

    Attributes
    ----------
    R_ : ndarray of shape (d, d)
        The private orthogonal matrix (never sent).

    References
    ----------
    Chen & Liu, *Geometric Data Perturbation* (seed 002), §4.
    """

    name = "rotation"
    summary = "random rotation"
    source = "002 eq. 1, Theorem 6"
    randomised = True

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        rng = np.random.default_rng(self.random_state)
        self.R_ = haar_orthogonal(X.shape[1], rng)
        return [rows("data", X @ self.R_.T)]
