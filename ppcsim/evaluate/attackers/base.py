"""What an attack declares, and what it is given: one party's view of a finished run.

An :class:`Attack` names what it applies to (a predicate over a
:class:`Target`: what the party sent and what the attacker may know), what
the attacker knows in words, how it estimates, its source, its names for
pages, and a ``run`` that returns the score record of
:func:`ppcsim.evaluate.scores.scores` (averaged over draws by
:func:`ppcsim.evaluate.scores.average` for a known-record attack).

Seeds: the attacks on one party draw from one generator,
``np.random.default_rng([scenario seed, 2, party index])``, in the
registry's order (after the records are sampled), so that every figure is
reproducible; an attack added at the end of the registry leaves the others'
figures as they were.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from coordinator.types import Outcome
from parties.config import PartyConfig
from parties.disguise import Disguised
from parties.methods.base import Disguise
from ppcsim.errors import RunError
from ppcsim.evaluate.artifacts import RunArtifacts
from ppcsim.evaluate.settings import Settings
from protos.serde import Layout

#: Records an attack is evaluated on at most (seeded sample), to bound its cost.
ATTACK_ROWS = 20000
#: Draws of the reference records for multilateration at most (each locates every record).
MULTILATERATION_DRAWS = 10
#: Known-record draws are capped so that draws x records stays within this (at least 10 draws):
#: 100 draws up to 4,000 records, 20 at 20,000.
DRAW_BUDGET = 400_000


def known_draws(settings: Settings, records: int) -> int:
    """How many draws of the known records an attack on ``records`` records gets (``DRAW_BUDGET``)."""
    return max(1, min(settings.known_draws, max(10, DRAW_BUDGET // max(records, 1))))


# -- what a party sent, as attacks ask it: the disguises' declared capabilities (parties.methods.base)

def dissimilarity_metric(method: Disguise) -> str:
    """The combination form (the public ``metric``) of the dissimilarities a method sends (condensed arrays)."""
    form = method.form()
    if form is None:
        raise RunError(f"method '{method.name}' sends dissimilarities but names no metric")
    return form


def sends_rows(own: Disguised) -> bool:
    """The party sent one row per record (a disguised feature block)."""
    return own.arrays[0].layout == Layout.ROWS


def sends_euclidean_distances(own: Disguised) -> bool:
    """The party sent its (squared) Euclidean distances between records."""
    return own.method.sends_euclidean_distances()


def embedded_at_coordinator(own: Disguised) -> bool:
    """The party's dissimilarities are embedded by the coordinator (e.g. non-metric MDS, 000 ch. 3)."""
    return own.method.embedding() is not None


class ScenarioView(Protocol):
    """What the attacks read of the scenario (a ``ppcsim.scenario.load.Scenario`` is one): its seed and its
    parties, in order."""

    @property
    def seed(self) -> int: ...

    @property
    def parties(self) -> list[PartyConfig]: ...


@dataclass
class Target:
    """One party of a finished run, as the attacks see it.

    ``rows`` are the records the attacks are scored on (at most
    ``ATTACK_ROWS``, sampled with ``rng``), ``rng`` the party's generator
    that its attacks share in the registry's order, ``draws`` how many draws
    of the known records a known-record attack makes. ``everyone`` holds
    every party's disguise (for attacks on what the coordinator built from
    them all), ``cache`` is shared by all parties of one evaluation, and
    ``artifacts``, when not None, collects arrays for pictures (see
    :meth:`keep`).
    """

    scenario: ScenarioView
    index: int
    party: PartyConfig
    own: Disguised
    rows: np.ndarray
    rng: np.random.Generator
    draws: int
    settings: Settings
    outcome: Outcome | None
    everyone: dict[str, Disguised]
    cache: dict = field(default_factory=dict)
    artifacts: RunArtifacts | None = None
    _known: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.party.name

    @property
    def method(self) -> Disguise:
        return self.own.method

    @property
    def columns(self) -> list[str]:
        return self.own.data.columns

    @cached_property
    def X(self) -> np.ndarray:
        """The party's original (normalised) block on the sampled records."""
        return self.own.X[self.rows]

    @cached_property
    def sent(self) -> dict[str, np.ndarray]:
        """What crossed the wire, exactly as the coordinator received it (all records)."""
        return self.own.wire_arrays()

    @property
    def known_count(self) -> int:
        """How many records a known-record attacker knows: ``known_fraction`` of them, at least d + 1."""
        n, d = len(self.rows), self.own.X.shape[1]
        return min(max(math.ceil(self.settings.known_fraction * n), d + 1), n)

    def known_records(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The ``draws`` draws of the known records, each ``(known, unknown)`` (positions in ``rows``).

        Drawn from ``rng`` by the first attack that asks, the same for every
        attack after it (so that the known-record attacks are compared on the
        same records); ``unknown`` is every record when all are known.
        """
        if not self._known:
            n = len(self.rows)
            for _ in range(self.draws):
                known = self.rng.choice(n, size=self.known_count, replace=False)
                unknown = np.setdiff1d(np.arange(n), known)
                self._known.append((known, unknown if unknown.size else np.arange(n)))
        return self._known

    def picture_rng(self) -> np.random.Generator:
        """A generator for a picture's draw, apart from ``rng``: the figures stay as measured."""
        return np.random.default_rng([self.scenario.seed, 4, self.index])

    def keep(self, attack: str, original, estimate) -> None:
        """Keep an attack's reconstruction beside the truth it is scored against, when pictures are asked for."""
        if self.artifacts is not None:
            self.artifacts.keep_attack(self.name, attack, original, estimate, list(self.columns))


@dataclass(frozen=True)
class Attack:
    """An attack on a party's disguised block, as registered in ``ppcsim.evaluate.attackers.ATTACKS``.

    Attributes
    ----------
    applies : callable
        ``applies(target) -> bool``: whether what the party sent (and what
        the attacker may know) lets the attack run.
    run : callable
        ``run(target) -> dict``: the score record (``scores`` or ``average``
        of :mod:`ppcsim.evaluate.scores`, with any figures of its own).
    knowledge : callable
        ``knowledge(target) -> str``: what the attacker knows, in words
        (the record's ``knowledge``).
    estimator : str
        How it estimates the original, in words.
    source : str
        Where it comes from (paper and section; HTML).
    plain : str
        Its name on the report page.
    short : str, default=""
        Its name in figure legends (``plain`` when empty).
    term, meaning : str, default=""
        Its glossary entry on the report page; none when ``term`` is empty.
    missing : str, default=""
        Why a sweep point has no ``privacy_<name>_mean`` (figure captions);
        "<plain> does not apply to what they send" when empty.
    skipped : callable, default: never
        ``skipped(target) -> str | None``: when no attack applies to a
        party, the reason this one does not, reported as ``{"skipped": ...}``.
    report_estimator : bool, default=False
        Write ``estimator`` into the record too.
    """

    applies: Callable[[Target], bool]
    run: Callable[[Target], dict]
    knowledge: Callable[[Target], str]
    estimator: str
    source: str
    plain: str
    short: str = ""
    term: str = ""
    meaning: str = ""
    missing: str = ""
    skipped: Callable[[Target], str | None] = lambda target: None
    report_estimator: bool = False

    @property
    def legend(self) -> str:
        return self.short or self.plain

    @property
    def why_missing(self) -> str:
        return self.missing or f"{self.plain} does not apply to what they send"

    def record(self, target: Target) -> dict:
        """The report's entry for this attack on ``target``: what the attacker knows, then its scores."""
        head = {"knowledge": self.knowledge(target)}
        if self.report_estimator:
            head["estimator"] = self.estimator
        return {**head, **self.run(target)}
