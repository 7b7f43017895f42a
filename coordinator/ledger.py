"""The byte ledger: every message of a session, in either direction, counted once.

Each entry has the party, the RPC, the direction, the array bytes it carried
(``payload``) and the size of the serialised protobuf message
(``serialized``). The paper's prediction sits beside the totals (004 §4.5,
§5.5): DRBT sends m * k_j * l bytes, OSBR m(m-1)/2 * l bytes per array.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass

UP, DOWN = "up", "down"
#: Bytes one ledger entry is counted as in a session's memory budget.
ENTRY_BYTES = 200
#: The most ledger entries one GetStatus reply carries (the latest ones): about 50 bytes each on the wire with
#: short party names, so that a reply stays below gRPC's 4 MiB message limit however long the session runs;
#: the whole ledger is in the report.
STATUS_ENTRIES = 4096


@dataclass(frozen=True)
class Entry:
    party: str
    rpc: str
    direction: str
    payload: int
    serialized: int
    time: float


class Ledger:
    """Thread-safe list of the messages that crossed the wire for one session."""

    def __init__(self, budget=None) -> None:
        """``budget``: a coordinator.limits.Budget each entry takes ENTRY_BYTES from (None: not counted)."""
        self.budget = budget
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._entries: list[Entry] = []

    def record(self, party: str, rpc: str, direction: str, size: int, payload: int = 0) -> None:
        """Count one message of ``size`` bytes on the wire (as it arrived, or as serialised to be sent) carrying
        ``payload`` array bytes. Called by coordinator.handlers.count only, the one place bytes are counted."""
        if self.budget is not None:
            self.budget.take(ENTRY_BYTES, f"the ledger entry of a {rpc} message from '{party}'")
        entry = Entry(party, rpc, direction, payload, size, time.monotonic() - self._start)
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries)

    def recent(self, n: int | None = None) -> list[Entry]:
        """The last ``n`` entries (STATUS_ENTRIES unless given), as GetStatus sends them."""
        n = STATUS_ENTRIES if n is None else n
        with self._lock:
            return self._entries[-n:] if n else []

    def totals(self) -> dict[str, dict[str, dict[str, int]]]:
        """``{party: {direction: {"messages", "payload", "serialized"}}}``."""
        out: dict = defaultdict(lambda: {d: {"messages": 0, "payload": 0, "serialized": 0} for d in (UP, DOWN)})
        for e in self.entries():
            t = out[e.party][e.direction]
            t["messages"] += 1
            t["payload"] += e.payload
            t["serialized"] += e.serialized
        return dict(out)

    def as_dicts(self) -> list[dict]:
        return [asdict(e) for e in self.entries()]


def predicted_payload(m: int, shapes: list[tuple[int, ...]], itemsize: int) -> int:
    """The paper's communication cost of one party's upload, in bytes.

    Rows of k_j features (DRBT and every feature method): m * k_j * l
    (004 §5.5). Condensed dissimilarities (OSBR): m(m-1)/2 * l for each array
    sent (004 §4.5). l is the element size. ``shapes`` are the announced
    shapes: 2-D for rows, 1-D for condensed arrays.
    """
    return sum((m * shape[1] if len(shape) == 2 else m * (m - 1) // 2) for shape in shapes) * itemsize
