"""``none``: the normalised columns themselves, the no-privacy baseline."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Disguise, Sent, rows


class Plain(Disguise):
    """Send the party's normalised columns unchanged (no privacy; utility reference)."""

    name = "none"
    summary = "its columns as they are, undisguised"
    source = "the no-privacy baseline"

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        return [rows("data", X)]
