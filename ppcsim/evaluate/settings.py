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
