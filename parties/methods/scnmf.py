"""``scnmf``: sparsified constrained NMF, CNMF with its factor's small entries set to 0 (001 §4.4, Algorithm 3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parties.methods.base import Param, Sent, rows
from parties.methods.cnmf import CNMF


class SCNMF(CNMF):
    """Sparsified constrained NMF (001 §4.4, Algorithm 3): :class:`~parties.methods.cnmf.CNMF`, then every entry of
    H at most ``threshold`` in magnitude set to 0.

    Algorithm 3's first phase is Algorithm 2's factorisation (001 eqs.
    3.24-3.25, the constraint C from the party's own k-means clusters); its
    second phase is the sparsification ``h_ij = 0 if |h_ij| <= delta``
    (§4.4 writes the kept entries as ``|h_ij| >= delta``; Algorithm 3 zeroes
    ``|h_ij| <= stol``, which is followed). CNMF pulls each record's row of H
    towards one large entry and small others; the small ones are the noise
    the sparsification removes (001 §4.9.3, Table 4.3: delta = 0.03 and 0.06).
    It sends the sparsified H (m x k) and keeps W.

    Parameters
    ----------
    threshold : float, default=0.03
        delta (Algorithm 3's stol); 001 uses 0.03 and 0.06.
    k, alpha, beta, max_iter, tol, hide, change, main_iter
        As for ``cnmf``.

    Attributes
    ----------
    zeroed_ : int
        Entries of H set to 0.

    References
    ----------
    Thapa, PhD thesis (seed 001), §4.4, §4.7 Algorithm 3, §4.9.3.
    """

    name = "scnmf"
    summary = "sparsified constrained NMF factor"
    source = "001 §4.4, Algorithm 3"
    # set from ``params`` by Disguise.__init__
    threshold: float

    params = {**CNMF.params,
              "threshold": Param(float, default=0.03, minimum=0, doc="sparsification threshold delta (001 §4.4)")}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        rng = np.random.default_rng(self.random_state)
        H, self.components_ = self.factorise(X, rng)
        small = np.abs(H) <= float(self.threshold)  # Algorithm 3's sparsification phase
        H[small] = 0.0
        self.zeroed_ = int(small.sum())
        return [rows("data", H)]

    def fitted(self) -> dict[str, Any]:
        """CNMF's, and the entries of H set to 0."""
        out = super().fitted()
        return {**out, "zeroed": self.zeroed_} if out else out
