"""The interface every disguise method implements, and the declarative table of its parameters."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np

from protos.schema import Param, unknown
from protos.serde import Layout

__all__ = ["EUCLIDEAN", "Disguise", "Param", "Sent"]

#: The combination form of squared Euclidean distances (004 eq. 3), the one feature rows can join.
EUCLIDEAN = "euclidean"


class Sent(NamedTuple):
    """One array a method sends: its name on the wire, the data, and where its rows are."""

    name: str
    array: np.ndarray
    layout: Layout  # Layout.ROWS or Layout.CONDENSED


class Disguise(ABC):
    """A disguise applied by one party to its own normalised columns.

    Subclasses declare ``name`` (the scenario's ``method``) and ``params``;
    ``__init__`` only stores, :meth:`disguise` computes and returns the arrays
    that go over the wire. Learned private state ends in an underscore.

    What a method sends, and so how the coordinator combines it, is declared
    here rather than read off its name: by default rows of features
    (:meth:`form` is None), which the coordinator concatenates column-wise. A
    method that sends condensed dissimilarities names their combination form
    (a form registered at the coordinator, ``coordinator.forms``; it travels as
    the public ``metric`` parameter), and one that wants the coordinator to
    embed the joined dissimilarities names the embedding (:meth:`embedding`,
    the public ``embed`` parameter). ``ppcsim.run.conformance`` checks that what a
    method sends matches what it declares.
    """

    name: ClassVar[str]
    params: ClassVar[dict[str, Param]] = {}
    #: Whether the party's ``normalize`` setting applies before this method.
    normalizes: ClassVar[bool] = True
    #: Whether the method takes non-negative data only (NMF): the party must not z-score its columns.
    nonnegative: ClassVar[bool] = False
    #: Whether the output depends on ``random_state`` (a private random draw): two seeds, two outputs.
    randomised: ClassVar[bool] = False
    #: A few words on what the method sends, for ``ppc --help`` and the report page.
    summary: ClassVar[str] = ""
    #: Where the method comes from (paper and section or equation), for the report page.
    source: ClassVar[str] = ""

    def __init__(self, *, random_state: int | Sequence[int] | None = None, **params: Any):
        """``random_state`` seeds ``numpy.random.default_rng``: an integer, or a sequence of them (a seed and a draw)."""
        self.random_state = random_state
        for key, spec in self.params.items():
            setattr(self, key, params.get(key, spec.default))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[str]:
        """Every problem with ``params`` (unknown, missing or invalid), as messages."""
        errors = [
            (unknown(key, tuple(cls.params)).replace(" (known:", f" for method '{cls.name}' (it takes", 1)
             if cls.params else f"unknown field '{key}' for method '{cls.name}' (it takes no parameters)")
            for key in params
            if key not in cls.params
        ]
        for key, spec in cls.params.items():
            if key in params:
                problem = spec.check(key, params[key])
                if problem:
                    errors.append(f"{problem} (method '{cls.name}')")
            elif spec.required:
                errors.append(f"method '{cls.name}' needs '{key}' ({spec.doc})")
        return errors

    @classmethod
    def check_columns(cls, params: dict[str, Any], columns: list[str]) -> list[str]:
        """Problems of ``params`` with the party's ``columns`` that need no data (e.g. k > d)."""
        return []

    # -- capabilities: what the method sends and what the coordinator does with it ---------------

    def form(self) -> str | None:
        """The combination form of the condensed dissimilarities this method sends (a name registered in
        ``coordinator.forms.FORMS``, sent as the public ``metric``), or None when it sends rows of features.

        Fixed by the method's parameters alone (the coordinator expects it before any data is seen)."""
        return None

    def sends_dissimilarities(self) -> bool:
        """Whether the method sends condensed pairwise dissimilarities (combined in its :meth:`form`), not rows."""
        return self.form() is not None

    def sends_euclidean_distances(self) -> bool:
        """Whether it sends squared Euclidean distances between its records (the form ``euclidean``): what
        an attacker at the coordinator can locate records from (000 §4.4, multilateration)."""
        return self.form() == EUCLIDEAN

    def embedding(self) -> str | None:
        """The embedding the coordinator computes of the joined dissimilarities before clustering (a name
        registered in ``coordinator.embed.EMBEDDINGS``, sent as the public ``embed``), or None for none."""
        return None

    @classmethod
    def undisguised(cls, params: dict[str, Any]) -> Disguise:
        """The method that computes, for one party holding every joined column, the undisguised combination of
        what this method's parties send: the observer's reference for utility when the joined columns do not
        stand for it (a form other than Euclidean).

        ``params`` are a party's parameters with each column list merged over the parties (names prefixed by
        the party's). By default the method itself, right for one whose dissimilarities are exact (osbr); a
        method that perturbs them returns its exact counterpart."""
        return cls(**params)

    def public_params(self) -> dict[str, str]:
        """Parameters the coordinator needs to combine contributions; never secrets. By default the
        combination form (``metric``) and embedding (``embed``) declared, if any."""
        form, embedding = self.form(), self.embedding()
        return {**({"metric": form} if form else {}), **({"embed": embedding} if embedding else {})}

    @classmethod
    def declared_params(cls, params: dict[str, Any]) -> dict[str, str]:
        """The public parameters a scenario's ``params`` fix before any data is seen: what the coordinator
        expects in this method's upload header (a subset of ``public_params`` once fitted). By default the
        declared form and embedding."""
        return Disguise.public_params(cls(**params))

    def facts(self) -> dict[str, Any]:
        """What the party measured of its own disguise once fitted (e.g. ``drbt``'s local stress, 004 §5.2
        step 3), for its own report; never sent. Empty by default."""
        return {}

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:  # noqa: B027 - a hook: most methods take any data
        """Raise ValueError when the data do not suit the method (e.g. k > d)."""

    def fitted(self) -> dict[str, Any]:
        """What the party measured of its own disguise while fitting it (e.g. an optimisation's trace), for the
        ``trace`` of the report's ``parties[].own_check``; never sent. By default nothing."""
        return {}

    def own_check(self) -> dict[str, Any]:
        """The party's check of its own disguise, the report's ``parties[].own_check`` (never sent): what it
        measured once fitted (:meth:`facts`) and, when the fit kept one, its trace (:meth:`fitted`) under
        ``trace``. Empty when the method measures nothing."""
        facts, trace = self.facts(), self.fitted()
        return {**facts, **({"trace": trace} if trace else {})}

    @abstractmethod
    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        """Disguise ``X`` (m x d, normalised) and return the arrays to send."""


class Reduction(Disguise):
    """A disguise that sends ``k`` dimensions per record, ``k`` at most the party's column count.

    Subclasses declare ``k`` in ``params``; decompositions that cannot have
    more components than records set ``k_at_most_records``.
    """

    k_at_most_records: ClassVar[bool] = False
    #: the number of dimensions sent, set from ``params`` by Disguise.__init__
    k: int

    @classmethod
    def check_columns(cls, params: dict[str, Any], columns: list[str]) -> list[str]:
        k = params.get("k")
        if isinstance(k, int) and not isinstance(k, bool) and k > len(columns):
            return [f"k = {k} is larger than the party's {len(columns)} columns"]
        return []

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:
        m, d = X.shape
        if self.k > d:
            raise ValueError(f"k = {self.k} is larger than the party's {d} columns")
        if self.k_at_most_records and self.k > m:
            raise ValueError(f"k = {self.k} is larger than the party's {m} records")


def rows(name: str, array: np.ndarray) -> Sent:
    return Sent(name, np.ascontiguousarray(array, dtype=np.float64), Layout.ROWS)


def condensed(name: str, array: np.ndarray) -> Sent:
    return Sent(name, np.ascontiguousarray(array, dtype=np.float64), Layout.CONDENSED)
