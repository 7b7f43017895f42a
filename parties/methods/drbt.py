"""``drbt``: dimensionality reduction by random projection (004 §2.3, §5)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows


class DRBT(Reduction):
    """Project the party's d columns to k with a private random matrix (004 eq. 7).

    ``projection="gaussian"`` is RP1: entries i.i.d. N(0, 1), each column of R
    normalised to unit length; the block is scaled by sqrt(d/k) (eq. 8).
    ``projection="sparse"`` is RP2 (Achlioptas, eq. 9): entries
    sqrt(3) * {+1, 0, -1} with probabilities 1/6, 2/3, 1/6 (unit variance);
    the block is scaled by 1/sqrt(k). Either way the squared distances of the
    sent block estimate the block's original squared distances without bias,
    so parties with different d_j/k_j weigh equally once the coordinator
    concatenates the blocks.

    Attributes
    ----------
    components_ : ndarray of shape (d, k)
        The private matrix R (never sent).
    scale_ : float
        The factor applied to ``X @ R``.
    """

    name = "drbt"
    randomised = True
    params = {
        "k": Param(int, required=True, minimum=1, doc="the number of output dimensions"),
        "projection": Param(str, default="gaussian", choices=("gaussian", "sparse")),
    }

    def random_matrix(self, d: int) -> np.ndarray:
        """Draw R (d x k) from the seeded generator: RP1 or RP2."""
        rng = np.random.default_rng(self.random_state)
        if self.projection == "gaussian":
            R = rng.standard_normal((d, self.k))
            return R / np.linalg.norm(R, axis=0)
        signs = rng.choice(np.array([1.0, 0.0, -1.0]), size=(d, self.k), p=[1 / 6, 2 / 3, 1 / 6])
        return np.sqrt(3.0) * signs

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        d = X.shape[1]
        self.components_ = self.random_matrix(d)
        self.scale_ = np.sqrt(d / self.k) if self.projection == "gaussian" else 1.0 / np.sqrt(self.k)
        return [rows("data", (X @ self.components_) * self.scale_)]
