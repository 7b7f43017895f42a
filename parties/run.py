"""One party's whole run: load its columns, normalise, disguise, upload, receive the result."""

from __future__ import annotations

import json
import secrets
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
import numpy as np

from parties.client import (
    ClientSecurity,
    CoordinatorClient,
    agree_pseudonym_key,
    checked_peers,
    key_signature,
    upload_messages,
)
from parties.config import PartyConfig
from parties.data import PartyData
from parties.errors import PartyError
from parties.files import write_private
from parties.keys import KeyPair
from parties.methods import Disguise, Sent, method_class
from parties.normalize import normalize
from parties.progress import Progress
from parties.pseudonyms import pseudonyms
from parties.secagg import check_result
from parties.sources import load_party_data
from protos.ids import packed_size
from protos.ppcsim.v1 import session_pb2
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

    def upload(self, session: str, party: str, chunk_bytes: int, ids: np.ndarray | None = None):
        """The Upload stream that carries these arrays (see parties.client.upload_messages), with ``ids`` (the
        party's pseudonyms, in its row order) in place of its own ids when given."""
        return upload_messages(
            session, party, self.method.name, self.method.public_params(),
            self.data.ids if ids is None else ids, self.arrays, len(self.data.columns),
            min(chunk_bytes or CHUNK_BYTES, CHUNK_BYTES), self.dtype,
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


#: Times ``ppc party`` tries a call again after its connection dropped, and the first wait (doubled each time).
RETRIES, BACKOFF = 3, 1.0


def run_party(
    cfg: PartyConfig,
    coordinator: str,
    session: str,
    *,
    timeout: float = 600.0,
    timeout_name: str = "timeout",
    labels_out: Path | None = None,
    summary_out: Path | None = None,
    security: ClientSecurity | None = None,
    tls: bool = True,
    mutual: bool = False,
    secure_only: bool = False,
    ids_mode: str | None = None,
    log=sys.stderr,
    progress: float = 0.0,
) -> dict:
    """Run party ``cfg`` against ``coordinator`` (HOST:PORT) in ``session``; return its summary.

    ``cfg.seed`` seeds the disguise and the pseudonym key; None draws a seed
    from this process's entropy (the default for a deployed party: nothing
    the coordinator holds can regenerate it). A dropped connection is retried
    up to RETRIES times with backoff, joining again and uploading from scratch.
    ``timeout_name`` names the timer ``timeout`` comes from, for the message
    when it runs out. ``secure_only``: the party's table names no method, so
    it refuses any session but a secure-aggregation one before sending data.
    ``ids_mode``: the scenario's [security] ids; a party whose file says
    "pseudonymous" refuses a coordinator that asks for plain ids (an active
    coordinator would so read every raw id, mutual TLS or not).
    ``progress`` > 0: every that many seconds of a wait, say on ``log`` what
    the party waits for (``parties.progress``).

    Raises PartyError for bad input or a timeout, and grpc.RpcError when the
    coordinator refuses or the session fails.
    """
    if cfg.seed is None:
        cfg = replace(cfg, seed=secrets.randbits(128))
    deadline = time.monotonic() + timeout
    done = disguise(cfg)
    data, method, arrays, timing = done.data, done.method, done.arrays, done.timing
    print(
        f"party {cfg.name}: {len(data.ids)} rows x {len(data.columns)} columns -> "
        f"{cfg.method} {', '.join(f'{s.name}{list(s.array.shape)}' for s in arrays)}",
        file=log,
        flush=True,
    )
    pair = KeyPair.generate(cfg.seed)
    signature = key_signature(security, session, cfg.name, pair, mutual)
    client = CoordinatorClient(coordinator, session, cfg.name, security, tls=tls)
    step = "joining"

    def left() -> float:
        return max(deadline - time.monotonic(), 0.1)

    watch = Progress(cfg.name, coordinator, client, session, log, progress, left)

    def retried(what: str, call):
        for attempt in range(RETRIES + 1):
            try:
                return call()
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE or attempt == RETRIES or left() <= BACKOFF * 2**attempt:
                    raise
                wait = BACKOFF * 2**attempt
                print(f"party {cfg.name}: {what}: connection lost ({exc.details()}); trying again in {wait:g} s "
                      f"(retry {attempt + 1} of {RETRIES})", file=log, flush=True)
                time.sleep(wait)

    try:
        watch.start()
        t = time.perf_counter()
        reply = retried("Join", lambda: client.join(left(), pair.public, signature))
        mpc = reply.protocol == session_pb2.PROTOCOL_MPC
        rounds = reply.protocol == session_pb2.PROTOCOL_SECURE_AGGREGATION or mpc
        if ids_mode == "pseudonymous" and reply.ids != session_pb2.IDS_PSEUDONYMOUS:
            raise PartyError(f"this party's scenario says [security] ids = \"pseudonymous\", but the coordinator of "
                             f"session '{session}' asks for plain ids: refusing to send a raw id")
        if secure_only and not rounds:
            raise PartyError(f"this party's table names no 'method', so it keeps its columns at home and can take "
                             f"part in a secure-aggregation session only; session '{session}' expects an upload of "
                             "disguised data: give the table the method the session expects")
        ids, secure = None, None
        peers: list[session_pb2.PeerKey] = []
        if reply.ids == session_pb2.IDS_PSEUDONYMOUS or rounds:
            # fetched and checked once: the pseudonym key and the masks use the very same keys
            step = ("agreeing the pseudonym key with the other parties" if reply.ids == session_pb2.IDS_PSEUDONYMOUS
                    else "exchanging keys with the other parties")
            watch.wait("peers")
            peers = retried("key agreement", lambda: checked_peers(client, reply, pair, security, left(), mutual))
        if reply.ids == session_pb2.IDS_PSEUDONYMOUS:
            watch.wait("key")
            key = retried("key agreement", lambda: agree_pseudonym_key(client, reply, pair, cfg.seed, security, left(),
                                                                         mutual, peers))
            ids = pseudonyms(key, data.ids)
        if mpc:
            step = "running the MPC k-means"
            secure = mpc_rounds(cfg, client, reply, done, pair, ids, peers, left, deadline, log)
            timing.update(secure.timing)
        elif rounds:
            step = "running the secure-aggregation rounds"
            secure = secure_rounds(cfg, client, reply, done, pair, ids, peers, left, log, watch)
            timing.update(secure.timing)
        step = "uploading"
        if secure is None:  # nothing reads the party's own columns again: give them back before the upload
            done.X = done.data.X = np.empty((0, done.data.X.shape[1]))  # not a view: that would keep X

        tries: list[int] = []

        def upload():
            if tries:  # again, after a dropped connection: the coordinator discarded that upload
                client.join(left(), pair.public, signature)
            tries.append(1)
            return client.upload(done.upload(session, cfg.name, reply.chunk_bytes, ids), timeout=left())

        if secure is None:
            watch.wait("uploading")
            retried("Upload", upload)
        timing["upload"] = time.perf_counter() - t
        step = "waiting for the clustering"
        watch.wait("result")
        t = time.perf_counter()
        result = retried("GetResult", lambda: client.result(timeout=left()))
        timing["wait_result"] = time.perf_counter() - t
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED and time.monotonic() >= deadline - 0.5:
            raise PartyError(f"this party's {timeout_name} of {timeout:g} s ran out while {step}") from None
        raise
    finally:
        watch.stop()
        client.close()

    header = result.header
    check_result(result.labels, len(data.ids), secure, header.n_clusters)
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
        # what the ids would have cost in the smallest plain encoding, beside the pseudonyms sent (the ledger's)
        "plain_id_bytes": packed_size(data.ids),
        "timing": timing,
        "peak_rss": peak_rss(),
    }
    if secure is not None:
        summary.update(method="mpc" if mpc else "secure_aggregation", arrays={}, rounds=secure.rounds)
        if mpc:  # per round, the MPyC messages in sequence on this party's path (parties.mpc.Tunnel.turns)
            summary["mpc_turns"] = {str(r): n for r, n in sorted(secure.turns.items())}
    if summary_out:  # it holds the party's master seed: 0600, never through a symbolic link
        write_private(summary_out, json.dumps(summary, indent=2).encode())
    return summary


def secure_rounds(cfg: PartyConfig, client: CoordinatorClient, reply, done: Disguised, pair: KeyPair,
                  ids: np.ndarray | None, peers: list, left, log, watch: Progress | None = None):
    """The secure-aggregation exchange (parties.secagg) on the party's normalised columns, over ``client``, with
    the ``peers`` keys ``checked_peers`` returned."""
    from parties.secagg import GrpcLink, secure_party

    if cfg.method != "none" or cfg.params:
        raise PartyError(f"party '{cfg.name}': the coordinator runs this session by secure aggregation, where a "
                         f"party keeps its columns at home; this party is configured to disguise them with "
                         f"'{cfg.method}'")
    upload = lambda messages: client.upload(messages, timeout=left())  # noqa: E731
    class Watched(GrpcLink):  # says which round's labels it waits for, numbered as the report numbers them
        def labels(self, round_, seeding=False):
            if watch is not None:
                watch.wait(f"secure aggregation: waiting for the labels of {'seeding step' if seeding else 'round'} "
                           f"{round_}")
            return super().labels(round_, seeding)

    result = secure_party(Watched(client, left), upload, peers, pair, done.X, done.data.ids if ids is None else ids,
                          client.session, cfg.name, len(done.data.columns),
                          min(reply.chunk_bytes or CHUNK_BYTES, CHUNK_BYTES), parties=list(reply.parties), log=log)
    print(f"party {cfg.name}: {result.rounds} rounds of secure aggregation", file=log, flush=True)
    return result


def mpc_rounds(cfg: PartyConfig, client: CoordinatorClient, reply, done: Disguised, pair: KeyPair,
               ids: np.ndarray | None, peers: list, left, deadline: float, log):
    """MPC k-means (parties.mpc) on the party's normalised columns: its ids-only upload, the alignment, then
    its MPyC program with every link relayed over ``client``'s Relay stream."""
    from parties.mpc import METHOD, confirm_mpc, run_mpc
    from parties.secagg import GrpcLink

    if cfg.method != "none" or cfg.params:
        raise PartyError(f"party '{cfg.name}': the coordinator runs this session as an MPC, where a party keeps "
                         f"its columns at home; this party is configured to disguise them with '{cfg.method}'")
    keys = {p.party: p.public_key for p in peers}
    if keys.get(cfg.name) != pair.public:
        raise PartyError("the coordinator relayed a public key for this party that is not its own")
    chunk = min(reply.chunk_bytes or CHUNK_BYTES, CHUNK_BYTES)
    t = time.perf_counter()
    client.upload(upload_messages(client.session, cfg.name, METHOD, {"columns": str(len(done.data.columns))},
                                  done.data.ids if ids is None else ids, [], len(done.data.columns), chunk),
                  timeout=left())
    t_upload = time.perf_counter() - t
    link = GrpcLink(client, left)
    header, positions = link.alignment()
    if header.mpc_helper:  # the coordinator's share-holder with no data: its key comes with the alignment
        if header.mpc_helper in keys or len(header.mpc_helper_key) != 32:
            raise PartyError(f"the coordinator names a helper '{header.mpc_helper}' that is a party of the session "
                             "or gives it no 32-byte key")
        keys[header.mpc_helper] = header.mpc_helper_key
    confirm_mpc(link, header, positions, done.data.ids if ids is None else ids, len(done.X), pair, keys,
                client.session, cfg.name)
    X = np.ascontiguousarray(done.X[positions.astype(np.intp)], dtype=np.float64)
    relay = lambda requests: client.stub.Relay(requests, timeout=left(), metadata=client.metadata)  # noqa: E731
    result = run_mpc(relay, header, X, pair, keys, client.session, cfg.name, deadline, log=log)
    result.timing["upload_ids"] = t_upload
    result.positions = positions
    print(f"party {cfg.name}: {result.rounds} Lloyd rounds as an MPC over {len(header.mpc_parties)} parties",
          file=log, flush=True)
    return result


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
        return f"a call to the coordinator ran out of time ({detail})"
    return detail or str(code)
