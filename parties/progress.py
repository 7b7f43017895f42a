"""What a waiting party says every few seconds: which coordinator it cannot reach, who has joined, which round.

A party spends most of its life blocked in a call (Join waits for the
coordinator to come up, GetPeers for the other parties, GetResult for the
clustering, GetLabels for a round). ``Progress`` runs beside those calls on a
daemon thread and, every ``every`` seconds of one wait, prints one line:

- ``coordinator unreachable at HOST:PORT, retrying (12 s so far, 588 s left)``;
- ``joined session 's'; 2 of 3 parties present (waiting for c)``;
- ``uploaded; 2 of 3 parties' uploads in (waiting for c)``;
- ``secure aggregation: waiting for the labels of round 4``.

Who has joined or uploaded comes from the coordinator's ``GetStatus`` (asked
only when a wait has lasted ``every`` seconds, so a quick session never asks);
``ppc run`` turns the lines off for the parties it starts (their waits are
its own to report, and a status call would add to the byte ledger).
"""

from __future__ import annotations

import threading
import time

import grpc

from parties.serde import Status
from parties.text import escaped


class Progress:
    """Says what the party ``name`` (talking to ``address`` through ``client``) waits for, every ``every`` s.

    ``wait(step)`` starts a wait: ``"join"``, ``"peers"``, ``"key"``,
    ``"result"`` or any text (said as it is). ``every`` = 0 says nothing.
    Use as a context manager; leaving it stops the thread.
    """

    def __init__(self, name: str, address: str, client, session: str, log, every: float = 5.0,
                 left=lambda: 0.0):
        self.name, self.address, self.client, self.session, self.log = name, address, client, session, log
        self.every, self.left = every, left
        self.step, self.since = "join", time.monotonic()
        self.connectivity: grpc.ChannelConnectivity | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"progress-{name}", daemon=True)

    def start(self) -> None:
        if self.every > 0:
            self.client.channel.subscribe(self._connectivity, try_to_connect=False)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
            self.client.channel.unsubscribe(self._connectivity)

    def _connectivity(self, state: grpc.ChannelConnectivity) -> None:
        self.connectivity = state

    def wait(self, step: str) -> None:
        """A new wait begins: its first line comes ``every`` seconds from now."""
        with self._lock:
            self.step, self.since = step, time.monotonic()

    def _run(self) -> None:
        said = 0.0
        while not self._stop.wait(0.25):
            with self._lock:
                step, since = self.step, self.since
            now = time.monotonic()
            if now - since >= self.every and now - max(said, since) >= self.every:
                line = self.describe(step, now - since)
                if line and not self._stop.is_set():
                    print(f"party {self.name}: {escaped(line)}", file=self.log, flush=True)
                said = now

    def _status(self) -> Status | None:
        try:
            return self.client.status(timeout=2.0)
        except grpc.RpcError:
            return None

    def describe(self, step: str, waited: float) -> str:
        """One line on the wait ``step``, which has lasted ``waited`` seconds."""
        timing = f"{waited:.0f} s so far, {self.left():.0f} s left"
        if step == "join":
            if self.connectivity in (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN):
                return f"coordinator unreachable at {self.address}, retrying ({timing})"
            if self.connectivity == grpc.ChannelConnectivity.READY:
                return f"connected to the coordinator at {self.address}; waiting for it to answer Join ({timing})"
            return f"connecting to the coordinator at {self.address} ({timing})"
        if step in ("peers", "key", "result"):
            status = self._status()
            if status is None or not status.parties:
                words = {"peers": "waiting for the other parties to join", "key": "waiting for the pseudonym key",
                         "result": "waiting for the clustering"}
                return f"{words[step]} ({timing})"
            joined = [p.party for p in status.parties if p.joined]
            uploaded = [p.party for p in status.parties if p.uploaded]
            n = len(status.parties)
            if step == "result" and status.state == "clustering":
                return f"all {n} uploads in; the coordinator is clustering ({timing})"
            if step == "result":
                missing = [p.party for p in status.parties if not p.uploaded]
                return (f"uploaded; {len(uploaded)} of {n} parties' uploads in (waiting for {', '.join(missing)}) "
                        f"({timing})")
            missing = [p.party for p in status.parties if not p.joined]
            if step == "key" or not missing:
                return f"joined session '{self.session}'; all {n} parties present; waiting for the key ({timing})"
            return (f"joined session '{self.session}'; {len(joined)} of {n} parties present (waiting for "
                    f"{', '.join(missing)}) ({timing})")
        return f"{step} ({timing})"
