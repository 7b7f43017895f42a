"""What the observer measures after a run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Settings:
    """What the observer does: attacks on or off, and the known-record share of known_io."""

    attacks: bool = True
    known_fraction: float = 0.05
