"""What a party computes and sends: its columns loaded, normalised and disguised (``disguise``), and the
arrays as they travel (``Disguised``).

The party process (``parties.run``) and everything that replays a party's
disguise (the observer, the attackers, the in-process simulation, the
benchmarks) read it here: none of them needs the party's gRPC orchestration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from parties.config import PartyConfig
from parties.data import PartyData
from parties.errors import PartyError
from parties.methods import Disguise, Sent, method_class
from parties.normalize import normalize
from parties.serde import upload_messages
from parties.sources import load_party_data
from protos.serde import CHUNK_BYTES


@dataclass
class Disguised:
    """A party's records before and after its disguise."""

    data: PartyData  # as loaded, but X normalised in place where the method normalises (nothing reads it raw)
    X: np.ndarray  # the method's input: normalised where the method normalises
    method: Disguise  # fitted: holds the party's private state
    arrays: list[Sent]  # what goes over the wire, as computed
    timing: dict[str, float]
    dtype: str = "float64"  # what the arrays travel as

    def wire_arrays(self) -> dict[str, np.ndarray]:
        """The arrays exactly as the coordinator receives them (converted to ``dtype``)."""
        return {s.name: s.array.astype(self.dtype, copy=False) if s.array.dtype.kind == "f" else s.array
                for s in self.arrays}

    def upload(self, session: str, party: str, chunk_bytes: int, ids: np.ndarray | None = None,
               serialised: bool = False):
        """The Upload stream that carries these arrays (see parties.client.upload_messages), with ``ids`` (the
        party's pseudonyms, in its row order) in place of its own ids when given; with ``serialised``, each
        message's bytes, as sent."""
        return upload_messages(
            session, party, self.method.name, self.method.public_params(),
            self.data.ids if ids is None else ids, self.arrays, len(self.data.columns),
            min(chunk_bytes or CHUNK_BYTES, CHUNK_BYTES), self.dtype, serialised,
        )


def disguise(cfg: PartyConfig) -> Disguised:
    """Load, normalise and disguise the party's columns."""
    timing = {}
    t = time.perf_counter()
    data = load_party_data(cfg)
    timing["load"] = time.perf_counter() - t

    method = method_class(cfg.method)(random_state=cfg.seed, **cfg.params)
    t = time.perf_counter()
    # in place: a party holds its columns once, not raw and normalised (200 MB each at 1M x 25)
    X = normalize(data.X, cfg.normalize, out=data.X) if method.normalizes else data.X
    try:
        arrays = method.disguise(X, data.columns)
    except ValueError as exc:
        raise PartyError(f"method '{cfg.method}': {exc}") from None
    timing["disguise"] = time.perf_counter() - t
    return Disguised(data, X, method, arrays, timing, cfg.dtype)
