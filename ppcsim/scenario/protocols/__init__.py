"""A protocol's own checks of a scenario, beside the ``[clustering]`` schema (protos.clustering): who may take
part, what must be installed. ``protocol_problems`` asks the checks of the scenario's protocol."""

from __future__ import annotations

from collections.abc import Callable

from ppcsim.scenario.protocols.mpc import mpc_parties, relayed_problems
from protos.clustering import ClusteringSpec
from protos.vocabulary import MPC, SECURE

#: Each protocol's checks of a scenario: ``check(clustering, consortium)`` -> messages naming the field.
CHECKS: dict[str, Callable[[ClusteringSpec, tuple[str, ...]], list[str]]] = {
    SECURE: relayed_problems,  # opening the labels only, its argmin is an MPC
    MPC: relayed_problems,
}


def protocol_problems(clustering: ClusteringSpec, consortium: tuple[str, ...]) -> list[str]:
    """What the scenario's protocol finds wrong with it (none registered: nothing)."""
    check = CHECKS.get(clustering.protocol)
    return check(clustering, consortium) if check is not None else []


__all__ = ["CHECKS", "mpc_parties", "protocol_problems", "relayed_problems"]
