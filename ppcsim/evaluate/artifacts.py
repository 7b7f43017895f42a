"""The arrays behind a run's numbers, which the report does not hold: what the observer, the attacks and the
run fill in and the pictures (``report.html``) and the Python API (``ppcsim.api.Run``) read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from coordinator.types import Outcome
    from parties.disguise import Disguised


@dataclass
class RunArtifacts:
    """What a run leaves beside its report, filled in as it goes; asked for by passing one in (``ppc run
    --html``, ``ppcsim.simulate``), else not kept.

    Attributes
    ----------
    own : dict of str to Disguised, or None
        Each party's disguise (its original normalised columns and what it
        sent), by party.
    outcome : Outcome or None
        What the coordinator reached: the join, what it clustered, the labels.
    joined : ndarray or None
        The original joined normalised columns of every party, side by side,
        in the join's order: the observer's reference, which nobody in the
        protocol holds.
    original_labels : ndarray or None
        The same clustering of ``joined`` (no disguise): what the labels are
        compared with for utility.
    attacks : dict of str to dict of str to dict
        ``attacks[party][attack]``: ``original`` (the true values of the
        records the attacker did not know), ``estimate`` (its reconstruction,
        same shape) and ``columns``; one draw of the known records, drawn
        apart from the measured ones.
    """

    own: dict[str, Disguised] | None = None
    outcome: Outcome | None = None
    joined: np.ndarray | None = None
    original_labels: np.ndarray | None = None
    attacks: dict[str, dict[str, dict]] = field(default_factory=dict)

    @property
    def filled(self) -> bool:
        """Whether the run put anything in (a run that failed before its evaluation may not have)."""
        return bool(self.own) or self.outcome is not None or self.joined is not None or bool(self.attacks)

    def keep_attack(self, party: str, attack: str, original: np.ndarray, estimate: np.ndarray,
                    columns: list[str]) -> None:
        """Keep one attack's reconstruction of ``party``'s records beside the truth it is scored against."""
        self.attacks.setdefault(party, {})[attack] = {"original": original, "estimate": estimate, "columns": columns}
