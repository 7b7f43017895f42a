"""``nmds``: non-metric MDS of the joined dissimilarities (000 ch. 3; 003), run at the coordinator."""

from __future__ import annotations

import numpy as np

from parties.methods.base import Param, Sent
from parties.methods.osbr import OSBR


class NMDS(OSBR):
    """Send squared Euclidean distances (as ``osbr``) and ask the coordinator to embed them.

    Non-metric MDS needs every pairwise dissimilarity of the joined records,
    which no single party holds in the vertical setting. So the party sends
    what OSBR sends, and the coordinator, once it has added every party's
    squared distances (reference §4), embeds the joined dissimilarities in
    ``dims`` dimensions preserving their rank order (Kruskal's stress-1, 000
    eq. 3.12), from ``n_init`` seeded random starts, and clusters the
    embedding. Every party of the session must ask for the same embedding.

    Parameters
    ----------
    dims : int
        Output dimensions p of the embedding (000 uses p = n - 1 mostly).
    n_init : int, default=4
        Random starts; the embedding with the least stress wins.
    """

    name = "nmds"
    params = {
        "dims": Param(int, required=True, minimum=1, doc="the embedding's dimensions"),
        "n_init": Param(int, default=4, minimum=1),
    }

    def __init__(self, **params):
        super().__init__(**params)
        self.metric, self.categorical, self.binary = "euclidean", [], []

    @classmethod
    def declared_params(cls, params: dict) -> dict[str, str]:
        return cls(**params).public_params()

    def public_params(self) -> dict[str, str]:
        return {"metric": "euclidean", "embed": "nmds", "dims": str(self.dims), "n_init": str(self.n_init)}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        return super().disguise(X, columns)
