"""An MPC in the report: each party's traffic, sealed and relayed (measured only), and the relay's section."""

from __future__ import annotations

from coordinator.summary import SessionSummary
from ppcsim.report.model import Mpc, Party, Report
from ppcsim.report.protocols.base import ProtocolReport
from ppcsim.scenario.load import Scenario
from protos.clustering import MPC_FIELDS
from protos.vocabulary import MPC

#: What the coordinator of an MPC session learns beside the ids (coordinator.protocols.mpc).
MPC_COORDINATOR_LEARNS = [
    "the size, timing and direction of every frame of the parties' MPC traffic, which it relays sealed under "
    "pair keys it cannot compute: no share, no value, no distance, no centre",
    "the labels every party opened at the end (the session's result), and so the cluster sizes",
    "which joined records start the centres (positions it drew with the scenario seed), not their values",
    "each party's X25519 public key, which it relays; not the secrets agreed from them",
]


def sequential(mpc: Mpc, summaries: dict[str, dict]) -> None:
    """Each round's ``sequential``: the most MPyC messages in sequence any data party's tunnel counted in it
    (its summary's ``mpc_turns``), where every data party's summary has them."""
    from ppcsim.report.model import ABSENT

    turns: list[dict] = [s["mpc_turns"] for s in summaries.values() if s.get("mpc_turns") is not None]
    if not turns or len(turns) < len(summaries) or mpc.per_round is ABSENT:
        return
    for r in mpc.per_round:
        r.sequential = max(int(t.get(str(r.round), 0)) for t in turns)


class MpcReport(ProtocolReport):
    """k-means as an MPC (coordinator.protocols.mpc)."""

    def party(self, party: Party, summary: SessionSummary, own: dict) -> None:
        party.method, party.sends = MPC, "its MPC traffic, sealed per peer and relayed"
        party.bytes.predicted = None  # measured only: MPyC's traffic has no closed form here
        party.rounds = own.get("rounds")

    def sections(self, report: Report, summary: SessionSummary, summaries: dict[str, dict]) -> None:
        report.mpc = Mpc.from_json(summary.sections["mpc"], "mpc")
        sequential(report.mpc, summaries)

    def settings_used(self, spec):
        """Its rounds (``max_iter``, ``init``) and the MPC's fields."""
        return {"max_iter", "init", *MPC_FIELDS}

    def learns(self, scenario: Scenario, ids: str, active: str) -> list[str]:
        return [ids, *MPC_COORDINATOR_LEARNS, active
                + ("; in an MPC session the pair keys seal every share it relays, so relaying keys of its own (and "
                   "forging the parties' confirmations, which those keys also make) lets it open every share and so "
                   "read every party's columns (measured)" if not scenario.security.mutual else "")]
