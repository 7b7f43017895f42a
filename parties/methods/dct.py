"""``dct``: the first k coefficients of each record's orthonormal DCT-II (000 §2.6.4)."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Param, Reduction, Sent, rows


class DCT(Reduction):
    """Send ``Y = C(x)[:k]`` per record, with C the orthonormal DCT-II (000 §2.6.4).

    ``F_n = sqrt(2/d) * Lambda(n) * sum_j x_j cos(pi n (2j + 1) / (2d))`` with
    ``Lambda(0) = 1/sqrt(2)``, else 1 (the factor on the output index, which
    makes C orthonormal; 000 prints it on the input index). C is orthonormal
    (Parseval), so k = d keeps every distance and dropping coefficients can
    only shrink them. The transform is public and data-independent: at k = d
    anyone can invert it, so the protection is only in what is dropped. We
    keep the first (lowest-frequency) k coefficients; 000 keeps the k of
    highest energy.

    Parameters
    ----------
    k : int
        The number of coefficients kept, 1 <= k <= d.

    References
    ----------
    Alotaibi, PhD thesis (seed 000), §2.6.4.
    """

    name = "dct"
    summary = "first discrete cosine transform coefficients"
    source = "000 §2.6.4"
    params = {"k": Param(int, required=True, minimum=1, doc="the number of DCT coefficients kept")}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        from scipy.fft import dct  # imported when used: a party process loads every method's module

        return [rows("data", dct(X, type=2, norm="ortho", axis=1)[:, : self.k])]
