"""One party's whole run: load its columns, normalise, disguise, upload, receive the result."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import numpy as np

from parties.client import ClientSecurity, CoordinatorClient, upload_messages
from parties.config import PartyConfig
from parties.data import PartyData, load_party_data
from parties.errors import PartyError
from parties.methods import Disguise, Sent, method_class
from parties.normalize import normalize
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

    def upload(self, session: str, party: str, chunk_bytes: int):
        """The Upload stream that carries these arrays (see parties.client.upload_messages)."""
        return upload_messages(
            session, party, self.method.name, self.method.public_params(),
            self.data.ids, self.arrays, len(self.data.columns), min(chunk_bytes or CHUNK_BYTES, CHUNK_BYTES),
            self.dtype,
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


def run_party(
    cfg: PartyConfig,
    coordinator: str,
    session: str,
    *,
    timeout: float = 600.0,
    labels_out: Path | None = None,
    summary_out: Path | None = None,
    security: ClientSecurity | None = None,
    tls: bool = True,
    log=sys.stderr,
) -> dict:
    """Run party ``cfg`` against ``coordinator`` (HOST:PORT) in ``session``; return its summary.

    Raises PartyError for bad input and grpc.RpcError when the coordinator
    refuses or the session fails.
    """
    deadline = time.monotonic() + timeout
    done = disguise(cfg)
    data, method, arrays, timing = done.data, done.method, done.arrays, done.timing
    print(
        f"party {cfg.name}: {len(data.ids)} rows x {len(data.columns)} columns -> "
        f"{cfg.method} {', '.join(f'{s.name}{list(s.array.shape)}' for s in arrays)}",
        file=log,
        flush=True,
    )
    client = CoordinatorClient(coordinator, session, cfg.name, security, tls=tls)
    try:
        t = time.perf_counter()
        reply = client.join(timeout=max(deadline - time.monotonic(), 0.1))
        client.upload(done.upload(session, cfg.name, reply.chunk_bytes), timeout=max(deadline - time.monotonic(), 0.1))
        timing["upload"] = time.perf_counter() - t
        t = time.perf_counter()
        result = client.result(timeout=max(deadline - time.monotonic(), 0.1))
        timing["wait_result"] = time.perf_counter() - t
    finally:
        client.close()

    header = result.header
    print(
        f"party {cfg.name}: {header.n_joined} of {len(data.ids)} records clustered into "
        f"{header.n_clusters} clusters, sizes {list(header.sizes)}",
        file=log,
        flush=True,
    )
    if labels_out:
        write_labels(labels_out, data.ids, result.labels)
    summary = {
        "name": cfg.name,
        "seed": cfg.seed,
        "rows": len(data.ids),
        "columns": data.columns,
        "method": cfg.method,
        "params": cfg.params,
        "normalize": cfg.normalize if method.normalizes else "none",
        "dtype": cfg.dtype,
        "arrays": {s.name: list(s.array.shape) for s in arrays},
        "n_joined": header.n_joined,
        "timing": timing,
        "peak_rss": peak_rss(),
    }
    if summary_out:
        summary_out.write_text(json.dumps(summary, indent=2))
    return summary


def peak_rss() -> int | None:
    """This process's peak resident memory so far, in bytes; None where it cannot be read (Windows).

    VmHWM, which starts afresh at exec: getrusage's ru_maxrss would instead
    carry over the launcher's peak from before the fork.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import resource  # Unix only: imported here so that a party also starts where it is missing
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def write_labels(path: Path, ids: np.ndarray, labels: np.ndarray) -> None:
    """``id,cluster`` for the party's joined ids (noise as -1), in its own row order."""
    keep = labels != -2
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id,cluster\n")
        fh.writelines(f"{i},{c}\n" for i, c in zip(ids[keep].tolist(), labels[keep].tolist()))


def rpc_message(exc: grpc.RpcError) -> str:
    """The coordinator's explanation of a failed call, in one line."""
    code = exc.code() if hasattr(exc, "code") else None
    detail = exc.details() if hasattr(exc, "details") else str(exc)
    if code == grpc.StatusCode.UNAVAILABLE:
        return f"coordinator unreachable or its certificate not trusted ({detail})"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "the session's deadline passed before it finished"
    return detail or str(code)
