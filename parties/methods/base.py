"""The interface every disguise method implements, and the declarative table of its parameters."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np

from protos.schema import Param, unknown
from protos.serde import Layout

__all__ = ["Disguise", "Param", "Sent"]


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
    """

    name: ClassVar[str]
    params: ClassVar[dict[str, Param]] = {}
    #: Whether the party's ``normalize`` setting applies before this method.
    normalizes: ClassVar[bool] = True
    #: Whether the output depends on ``random_state`` (a private random draw): two seeds, two outputs.
    randomised: ClassVar[bool] = False

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

    def public_params(self) -> dict[str, str]:
        """Parameters the coordinator needs to combine contributions; never secrets."""
        return {}

    @classmethod
    def declared_params(cls, params: dict[str, Any]) -> dict[str, str]:
        """The public parameters a scenario's ``params`` fix before any data is seen: what the coordinator
        expects in this method's upload header (a subset of ``public_params`` once fitted)."""
        return {}

    def check_data(self, X: np.ndarray, columns: list[str]) -> None:  # noqa: B027 - a hook: most methods take any data
        """Raise ValueError when the data do not suit the method (e.g. k > d)."""

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
