"""``osbr-nmds``: OSBR's squared distances, embedded by non-metric MDS at the coordinator (000 ch. 3 run centrally).

This is not the papers' NMDS perturbation, which the data owner runs on its
own records and releases as a configuration (``nmds``, ``parties.methods.nmds``):
here the party sends the distances themselves, from which the coordinator
(or anyone who knows a few records) can recover the data (000 §4.4).
"""

from __future__ import annotations

import numpy as np

from parties.methods.base import EUCLIDEAN, Param, Sent
from parties.methods.osbr import OSBR


class OSBRNMDS(OSBR):
    """Send squared Euclidean distances (as ``osbr``) and ask the coordinator to embed them.

    Non-metric MDS of the *joined* records needs every pairwise
    dissimilarity of them, which no single party holds in the vertical
    setting. So the party sends what OSBR sends (m(m-1)/2 values), and the
    coordinator, once it has added every party's
    squared distances (reference §4), embeds the joined dissimilarities in
    ``dims`` dimensions preserving their rank order (Kruskal's stress-1, 000
    eq. 3.12), and clusters the embedding. Every party of the session must
    ask for the same embedding. What protects the records is OSBR's, no more:
    the coordinator holds the distances and could recover the data from them
    as well as from any embedding of them. The owner-side perturbation of
    000 ch. 3 and 003 is ``nmds``.

    Parameters
    ----------
    dims : int
        Output dimensions p of the embedding.
    init : {"classical", "random"}, default="classical"
        Where SMACOF starts: the classical (Torgerson) scaling of the
        dissimilarities, as 000 §5.2.3.1 does, or ``n_init`` seeded random
        configurations. Random starts often stop in a poor local minimum
        (wine, 12 dims: stress-1 0.03 against 0.004 from the classical start).
    n_init : int, default=4
        Random starts with ``init = "random"`` (the least stress wins); unused otherwise.
    max_iter : int, default=3000
        SMACOF iterations at most; it stops earlier once the stress stops falling.
    """

    name = "osbr-nmds"
    summary = "pairwise dissimilarities, embedded by non-metric MDS at the coordinator"
    source = "004 §2.2 (OSBR); 000 ch. 3 run at the coordinator"
    # set from ``params`` by Disguise.__init__
    dims: int
    init: str
    n_init: int
    max_iter: int

    params = {
        "dims": Param(int, required=True, minimum=1, doc="the embedding's dimensions"),
        "init": Param(str, default="classical", choices=("classical", "random"),
                      doc="the start: classical scaling or random configurations"),
        "n_init": Param(int, default=4, minimum=1),
        "max_iter": Param(int, default=3000, minimum=1),
    }

    def __init__(self, **params):
        super().__init__(**params)
        self.metric, self.categorical, self.binary = EUCLIDEAN, [], []

    @classmethod
    def declared_params(cls, params: dict) -> dict[str, str]:
        return cls(**params).public_params()

    def embedding(self) -> str:
        return "nmds"

    def public_params(self) -> dict[str, str]:
        return {"metric": self.form(), "embed": self.embedding(), "dims": str(self.dims), "n_init": str(self.n_init),
                "init": self.init, "max_iter": str(self.max_iter)}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        return super().disguise(X, columns)
