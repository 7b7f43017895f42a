"""Run a scenario in one process, without gRPC, through the same party and coordinator code.

Each party's disguise, the upload messages, the coordinator's handlers, the
join, the combination and the clustering are the ones a real run uses; only
the sockets and processes are left out. The ledger therefore counts the same
messages with the same sizes, and every number but the timings equals the
real run's for the same seed (tests/test_sweep.py checks this). For sweeps,
where a point costs seconds of process start-up otherwise.
"""

from __future__ import annotations

from coordinator import handlers
from coordinator.session import Session
from coordinator.upload import Received
from parties.run import Disguised, disguise
from ppcsim.scenario import Scenario
from protos.ppcsim.v1 import session_pb2


def simulate(scenario: Scenario) -> tuple[Session, dict[str, Disguised]]:
    """The finished session (done or failed) and each party's disguise."""
    session = Session(scenario.session_spec())
    own: dict[str, Disguised] = {}
    for cfg in scenario.parties:
        own[cfg.name] = disguise(cfg)
        reply = handlers.join(session, session_pb2.JoinRequest(session=scenario.name, party=cfg.name))
        messages = Received.stream(own[cfg.name].upload(scenario.name, cfg.name, reply.chunk_bytes))
        handlers.upload(session, next(messages), messages)
    for cfg in scenario.parties:
        for _ in handlers.result(session, session_pb2.ResultRequest(session=scenario.name, party=cfg.name)):
            pass
    return session, own
