"""The attacks the observer runs on each party after a run, registered by name.

``privacy()`` (:mod:`ppcsim.run.observer`) runs, for each party, every
attack of ``ATTACKS`` that applies to what it sent, in this order; the
report's ``privacy.<party>.attacks`` holds their records by these names,
the sweep's CSV their columns (``privacy_<name>_mean`` ...), and the report
page their names, sources and glossary entries. A new attack is one file
defining an :class:`Attack` and one line here (or, from outside,
``ATTACKS["name"] = Attack(...)``).
"""

from __future__ import annotations

from ppcsim.evaluate.attackers.base import Attack, Target
from ppcsim.evaluate.attackers.ica import ICA
from ppcsim.evaluate.attackers.known_io import KNOWN_IO, KNOWN_IO_002, KNOWN_IO_FORWARD
from ppcsim.evaluate.attackers.multilateration import MULTILATERATION, MULTILATERATION_NMDS
from ppcsim.evaluate.attackers.naive import NAIVE
from ppcsim.evaluate.attackers.pca_known_sample import PCA_KNOWN_SAMPLE

#: The attacks by the name the report gives them, in the order they run (and draw from the party's generator).
ATTACKS: dict[str, Attack] = {
    "known_io": KNOWN_IO,
    "known_io_forward": KNOWN_IO_FORWARD,
    "ica": ICA,
    "multilateration": MULTILATERATION,
    "multilateration_nmds": MULTILATERATION_NMDS,
    "known_io_002": KNOWN_IO_002,
    "naive": NAIVE,
    "pca_known_sample": PCA_KNOWN_SAMPLE,
}

__all__ = ["ATTACKS", "Attack", "Target"]
