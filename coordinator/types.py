"""The values that pass between the coordinator's stages: an upload as held, what is clustered, the outcome.

They sit below every stage (upload decoding, combine, embed, clustering,
the pipeline, the session), so that imports go one way: down to here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from coordinator.join import Join


@dataclass
class Contribution:
    """One party's upload as the coordinator holds it."""

    party: str
    method: str
    params: dict[str, str]
    ids: np.ndarray
    arrays: dict[str, np.ndarray]
    #: True when the arrays are condensed pairwise matrices, False when they are rows of features.
    is_dissimilarity: bool = False
    #: Names of the arrays sent (``arrays`` may hold none of them when the coordinator only summed them).
    names: tuple[str, ...] = ()
    #: Gives back the buffers ``arrays`` view (the upload's), once nothing reads them; None when they own them.
    release: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.names = self.names or tuple(self.arrays)


@dataclass
class Combined:
    """Either ``features`` (n x k) or a condensed ``dissimilarity`` over the joined records."""

    features: np.ndarray | None = None
    dissimilarity: np.ndarray | None = None
    description: str = ""
    #: Set when the coordinator embedded the dissimilarities (e.g. nmds): what it computed.
    embedding: dict | None = None

    def require_dissimilarity(self) -> np.ndarray:
        """The condensed ``dissimilarity`` of a combination that holds no ``features``."""
        if self.dissimilarity is None:
            raise ValueError("the combination holds neither features nor dissimilarities")
        return self.dissimilarity


@dataclass
class Outcome:
    """The shared result: joined ids, their labels, and each party's labels in its own row order."""

    join: Join
    combined: Combined
    labels: np.ndarray
    by_party: dict[str, np.ndarray]
    #: Seconds each stage took: ``join_seconds`` (join, combine, embed) and ``cluster_seconds``.
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def sizes(self) -> list[int]:
        n = int(self.labels.max()) + 1 if (self.labels >= 0).any() else 0
        return np.bincount(self.labels[self.labels >= 0], minlength=n).tolist()

    @property
    def noise(self) -> int:
        return int((self.labels == -1).sum())
