"""``drbt``: dimensionality reduction by random projection (004 §2.3, §5; 000 §2.6.1)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows
from parties.methods.rotation import haar_orthogonal

#: The random matrices ``projection`` names, and the scale each block gets.
PROJECTIONS = ("gaussian", "sparse", "sparse-unit", "orthonormal")


def achlioptas_signs(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    """{+1, 0, -1} with probabilities 1/6, 2/3, 1/6, shape (d, k): eq. 9 without its sqrt(3)."""
    return rng.choice(np.array([1.0, 0.0, -1.0]), size=(d, k), p=[1 / 6, 2 / 3, 1 / 6])


def unit_columns(R: np.ndarray) -> np.ndarray:
    """R with every column divided by its Euclidean length (an all-zero column stays zero)."""
    norm = np.linalg.norm(R, axis=0)
    return R / np.where(norm > 0, norm, 1.0)


def haar_frame(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    """k orthonormal columns in R^d, Haar-distributed: the first k columns of a Haar orthogonal matrix."""
    return haar_orthogonal(d, rng)[:, :k]


class DRBT(Reduction):
    """Project the party's d columns to k with a private random matrix (004 eq. 7).

    ``projection`` picks R:

    - ``"gaussian"`` (default) is 004's RP1: entries i.i.d. N(0, 1), each column
      of R normalised to unit length; the block is scaled by sqrt(d/k) (eq. 8).
    - ``"sparse"`` is RP2 as Achlioptas defines it (eq. 9): entries
      sqrt(3) * {+1, 0, -1} with probabilities 1/6, 2/3, 1/6 (unit variance),
      the block scaled by 1/sqrt(k). Squared distances are then unbiased with
      no other step.
    - ``"sparse-unit"`` is RP2 as 004 built it: eq. 9's entries with every
      column normalised to unit length, like RP1. 004's Table 3 RP2 block is
      exactly Table 1 times such a matrix (``tests/parties/test_disguise_methods.py`` checks
      it). An all-zero column cannot be normalised, so it is drawn again. The
      block is scaled by sqrt(d/k), eq. 8, as for RP1 (Table 3 prints D·R
      before that scale; a scale does not change the disguise, only the
      weight of the block when the coordinator concatenates it).
    - ``"orthonormal"`` is the random projection of Alotaibi's thesis (000
      eq. 2.18: "each column is orthogonal"): the first k columns of a
      Haar-random orthogonal matrix, scaled by sqrt(d/k). With k = d it is a
      rotation and keeps every distance.

    ``"sparse"`` stays the meaning of RP2 here (and ``"gaussian"`` the
    default) so that scenarios written before ``"sparse-unit"`` existed give
    the same numbers; both RP2 variants estimate distances without bias once
    scaled, and they differ only in which columns weigh more.

    Attributes
    ----------
    components_ : ndarray of shape (d, k)
        The private matrix R (never sent).
    scale_ : float
        The factor applied to ``X @ R``.
    """

    name = "drbt"
    summary = "random projection"
    source = "004 §2.3, §5, eqs. 7-9 (DRBT)"
    randomised = True
    # set from ``params`` by Disguise.__init__
    projection: str

    params = {
        "k": Param(int, required=True, minimum=1, doc="the number of output dimensions"),
        "projection": Param(str, default="gaussian", choices=PROJECTIONS),
    }

    def random_matrix(self, d: int) -> np.ndarray:
        """Draw R (d x k) from the seeded generator, as ``projection`` names it."""
        rng = np.random.default_rng(self.random_state)
        if self.projection == "gaussian":
            return unit_columns(rng.standard_normal((d, self.k)))
        if self.projection == "orthonormal":
            return haar_frame(rng, d, self.k)
        signs = achlioptas_signs(rng, d, self.k)
        if self.projection == "sparse":
            return np.sqrt(3.0) * signs
        empty = ~signs.any(axis=0)
        while empty.any():  # "sparse-unit": a zero column has no unit length; draw it again
            signs[:, empty] = achlioptas_signs(rng, d, int(empty.sum()))
            empty = ~signs.any(axis=0)
        return unit_columns(np.sqrt(3.0) * signs)

    def scale(self, d: int) -> float:
        """The factor of eq. 8 that makes projected squared distances unbiased: sqrt(d/k), or 1/sqrt(k) for RP2."""
        return 1.0 / np.sqrt(self.k) if self.projection == "sparse" else float(np.sqrt(d / self.k))

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        d = X.shape[1]
        self.components_ = self.random_matrix(d)
        self.scale_ = self.scale(d)
        return [rows("data", (X @ self.components_) * self.scale_)]
