"""The sessions one coordinator serves, by name, and what their credentials admit: shared by the gRPC servicer
(coordinator.servicer), its interceptor (coordinator.gate) and whoever creates sessions (``ppc run``, ``ppc
coordinator``)."""

from __future__ import annotations

import hashlib
import hmac
import threading

import grpc

from coordinator.clock import REAL, Clock
from coordinator.errors import SessionError
from coordinator.limits import Budget, physical_memory
from coordinator.security import Refused
from coordinator.session import Session, SessionSpec
from coordinator.text import shown


class Registry:
    """The sessions one coordinator serves, by name."""

    def __init__(self, clock: Clock | None = None, memory: int = 0) -> None:
        """``memory``: bytes all sessions together may hold (0: half this machine's memory)."""
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        #: The coordinator's memory budget, which every session's draws on (coordinator.limits).
        self.budget = Budget("the coordinator", memory or physical_memory() // 2)
        #: The clock of every session created here and of the servicer's header timeout (coordinator.clock).
        self.clock: Clock = clock if clock is not None else REAL

    def create(self, spec: SessionSpec) -> Session:
        with self._lock:
            if spec.name in self._sessions:
                raise SessionError(f"a session named '{spec.name}' exists already")
            session = self._sessions[spec.name] = Session(spec, self.clock, self.budget)
            return session

    def admits(self, token: str | None, common_name: str | None) -> bool:
        """Whether the credentials prove a party of some session here (a session's token, or a client
        certificate the TLS handshake verified); Refused (UNAUTHENTICATED) unless they could be a party's at all:
        a token is one of a session's, or some session takes calls without one."""
        with self._lock:
            sessions = list(self._sessions.values())
        if token is None and common_name is None and sessions and all(
                s.spec.tokens is not None or s.spec.mutual for s in sessions):
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "no token (authorization: Bearer ...)")
        if token is not None and all(s.spec.tokens is not None for s in sessions):
            digest = hashlib.sha256(token.encode()).hexdigest()
            if not any(hmac.compare_digest(d, digest) for s in sessions for d in (s.spec.tokens or {}).values()):
                raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the token is not valid for any session here")
        if common_name is not None:
            return True
        if token is None:
            return False
        digest = hashlib.sha256(token.encode()).hexdigest()
        return any(hmac.compare_digest(d, digest) for s in sessions for d in (s.spec.tokens or {}).values())

    def owners(self, digest: str) -> list[tuple[str, str]]:
        """The (session, party) pairs whose token has the SHA-256 hex ``digest`` (coordinator.gate)."""
        with self._lock:
            sessions = list(self._sessions.values())
        return [(s.spec.name, p) for s in sessions for p, d in (s.spec.tokens or {}).items()
                if hmac.compare_digest(d, digest)]

    def mutual(self, name: str) -> bool:
        """Whether the session called ``name`` is served under mutual TLS (False: no such session)."""
        with self._lock:
            session = self._sessions.get(name)
        return session is not None and session.spec.mutual

    def get(self, name: str) -> Session:
        with self._lock:
            try:
                return self._sessions[name]
            except KeyError:
                raise SessionError(f"no session named '{shown(name)}' on this coordinator") from None
