"""Run a scenario in one process, without gRPC, through the same party and coordinator code.

Each party's disguise, its key agreement and pseudonyms, the upload messages,
the coordinator's handlers, the join, the combination and the clustering are
the ones a real run uses; only the sockets and processes are left out. The
ledger therefore counts the same messages with the same sizes, and every
number but the timings equals the real run's for the same seed
(tests/test_sweep.py checks this). For sweeps, where a point costs seconds of
process start-up otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator import handlers
from coordinator.session import Session
from coordinator.upload import Received
from parties.client import agree_pseudonym_key
from parties.keys import KeyPair, pseudonyms
from parties.run import Disguised, disguise
from ppcsim.scenario import Scenario
from protos.ppcsim.v1 import session_pb2


@dataclass
class _Direct:
    """What parties.client.CoordinatorClient offers for the key agreement, calling the handlers directly."""

    coordinator: Session
    session: str  # its name, as a client knows it
    party: str

    def peers(self, timeout: float) -> list[session_pb2.PeerKey]:
        request = session_pb2.PeersRequest(session=self.session, party=self.party)
        return list(handlers.peers(self.coordinator, request).peers)

    def post_sealed(self, keys: list[session_pb2.SealedKey], timeout: float) -> None:
        request = session_pb2.SealedKeys(session=self.session, party=self.party, keys=keys)
        handlers.post_sealed(self.coordinator, request)

    def sealed_key(self, timeout: float) -> session_pb2.SealedKey:
        request = session_pb2.SealedKeyRequest(session=self.session, party=self.party)
        return handlers.sealed_key(self.coordinator, request)


def simulate(scenario: Scenario) -> tuple[Session, dict[str, Disguised]]:
    """The finished session (done or failed) and each party's disguise. ``scenario`` carries every party's seed
    (as the observer loads it)."""
    session = Session(scenario.session_spec())
    own: dict[str, Disguised] = {}
    pairs: dict[str, KeyPair] = {}
    replies: dict[str, session_pb2.JoinReply] = {}
    for cfg in scenario.parties:
        own[cfg.name] = disguise(cfg)
        pairs[cfg.name] = KeyPair.generate(cfg.seed)
        request = session_pb2.JoinRequest(session=scenario.name, party=cfg.name, public_key=pairs[cfg.name].public)
        replies[cfg.name] = handlers.join(session, request)
    for cfg in scenario.parties:  # the key leader first: the others then find its sealed key waiting
        reply, ids = replies[cfg.name], None
        if reply.ids == session_pb2.IDS_PSEUDONYMOUS:
            key = agree_pseudonym_key(_Direct(session, scenario.name, cfg.name), reply, pairs[cfg.name], cfg.seed,
                                      None, 0.0)
            ids = pseudonyms(key, own[cfg.name].data.ids)
        messages = Received.stream(own[cfg.name].upload(scenario.name, cfg.name, reply.chunk_bytes, ids))
        handlers.upload(session, next(messages), messages)
    for cfg in scenario.parties:
        for _ in handlers.result(session, session_pb2.ResultRequest(session=scenario.name, party=cfg.name)):
            pass
    return session, own
