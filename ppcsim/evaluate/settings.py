"""What the observer measures after a run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Settings:
    """What the observer does: attacks on or off, the known-record share of known_io, and how many draws of them.

    ``known_draws`` is how many times each known-record attack (known_io, its
    forward form, multilateration) is repeated with a fresh draw of the known
    records; the report gives the mean over the draws and their spread. 002
    §7.5 averages 500. To bound the cost, draws x records stays within
    ``DRAW_BUDGET`` (at least 10 draws) and multilateration, the costliest,
    takes at most ``MULTILATERATION_DRAWS`` (both in ``ppcsim.evaluate.attackers.base``).
    """

    attacks: bool = True
    known_fraction: float = 0.05
    known_draws: int = 100


@dataclass(frozen=True)
class Knowledge:
    """What the attacker knows, from the scenario's ``[attacks]`` table (a sweep can vary it like any other key).

    ``known_extra`` is 000's j: the distance-based attack (multilateration,
    000 §4.4) knows n + 1 + j records, n the party's columns (000 Figs.
    4.12-4.13 vary it). ``known_sample`` is the share of records whose
    original values the PCA attack (000 §4.5, Algorithm 4.3) holds as its
    sample of the original distribution (30% by default, §4.5.4).
    """

    known_extra: int = 0
    known_sample: float = 0.3


def knowledge(scenario) -> Knowledge:
    """The scenario's ``[attacks]`` settings (defaults for a scenario that has none)."""
    return getattr(scenario, "attacks", None) or Knowledge()
