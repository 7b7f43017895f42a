"""One party's whole run, in steps: load and disguise its columns, join, agree keys, upload or run rounds (secure
aggregation or MPC), receive the labels, summarise.

``run_party`` reads top to bottom; each step is a method of ``Steps``, every
call that may be tried again goes through one policy (``parties.retry``), and
the wire is decoded at the edge (``parties.client``, ``parties.serde``): the
steps read plain values.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import numpy as np

from parties.client import (
    ClientSecurity,
    CoordinatorClient,
    GrpcLink,
    Result,
    agree_pseudonym_key,
    checked_peers,
    key_signature,
)
from parties.config import PartyConfig
from parties.disguise import Disguised, disguise
from parties.errors import PartyError
from parties.files import write_private
from parties.keys import KeyPair
from parties.metrics import peak_rss
from parties.progress import Progress
from parties.protocols import party_protocol
from parties.protocols.terms import Terms
from parties.pseudonyms import pseudonyms
from parties.retry import Retry
from parties.secagg import RoundsResult, check_result
from parties.serde import Joined, Peer, upload_messages
from parties.text import escaped
from protos.extras import missing
from protos.ids import packed_size
from protos.serde import CHUNK_BYTES

if TYPE_CHECKING:
    from parties.mpc import MpcResult
    from parties.spu_run import Warm

# The MPC and labels-only modules (parties.mpc, parties.secagg_labels, parties.spu_run) are imported by the steps
# that run them: a party of the plain protocol, most parties, starts without them.


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
    no_method: bool = False,
    ids_mode: str | None = None,
    reveal: str | None = None,
    terms: Terms | None = None,
    log=sys.stderr,
    progress: float = 0.0,
) -> dict:
    """Run party ``cfg`` against ``coordinator`` (HOST:PORT) in ``session``; return its summary.

    ``cfg.seed`` seeds the disguise and the pseudonym key; None draws a seed
    from this process's entropy (the default for a deployed party: nothing
    the coordinator holds can regenerate it). Calls are retried as
    ``parties.retry`` says (a dropped connection, up to three times; an
    upload tried again joins again and starts from scratch).
    ``timeout_name`` names the timer ``timeout`` comes from, for the message
    when it runs out. ``no_method``: the party's table names no method, so
    it refuses any session whose protocol expects a disguise (ProtocolTerms.columns_at_home) before sending data.
    ``ids_mode``: the scenario's [security] ids; a party whose file says
    "pseudonymous" refuses a coordinator that asks for plain ids (an active
    coordinator would so read every raw id, mutual TLS or not). ``reveal``: the
    scenario's [clustering] reveal of a secure-aggregation session; the party
    refuses a coordinator that runs the session in the other mode (one that
    announces "distances" would read every summed distance).
    ``terms``: what the party's own scenario file consents to (parties.protocols.terms);
    a session whose terms differ is refused before the party sends what they
    bound.
    ``progress`` > 0: every that many seconds of a wait, say on ``log`` what
    the party waits for (``parties.progress``).

    Raises PartyError for bad input or a timeout, and grpc.RpcError when the
    coordinator refuses or the session fails.
    """
    if cfg.seed is None:
        cfg = replace(cfg, seed=secrets.randbits(128))
    deadline = time.monotonic() + timeout
    done = disguise(cfg)
    say(cfg.name, f"{len(done.data.ids)} rows x {len(done.data.columns)} columns -> {cfg.method} "
                  + ", ".join(f"{s.name}{list(s.array.shape)}" for s in done.arrays), log)
    pair = KeyPair.generate(cfg.seed, session)
    client = CoordinatorClient(coordinator, session, cfg.name, security, tls=tls)
    steps = Steps(cfg, client, pair, key_signature(security, session, cfg.name, pair, mutual), security, mutual,
                  deadline, log, progress, terms)
    steps.reveal = reveal
    try:
        joined = steps.join(ids_mode, no_method)
        peers, ids = steps.agree_keys(joined, done)
        secure: RoundsResult | MpcResult | None = party_protocol(joined.protocol).run(steps, joined, done, peers, ids)
        result = steps.receive()
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED and time.monotonic() >= steps.deadline - 0.5:
            if steps.session_deadline:
                raise PartyError(f"the session's deadline ran out while {steps.step} (the coordinator gave "
                                 f"{steps.session_deadline:.0f} s left when this party joined)") from None
            raise PartyError(f"this party's {timeout_name} of {timeout:g} s ran out while {steps.step}") from None
        raise
    finally:
        steps.close()
    check_result(result.labels, len(done.data.ids), secure, result.header.clusters_found)
    return summarise(cfg, done, result, secure, steps.timing, labels_out, summary_out, log)


#: Seconds a party waits past its session's deadline before it gives up itself: the coordinator's own word of
#: the session's end should reach it first.
GRACE = 2.0


def say(name: str, text: str, log) -> None:
    print(f"party {name}: {escaped(text)}", file=log, flush=True)


class Steps:
    """The steps of one party's run after its disguise, in the order ``run_party`` takes them; ``step`` says
    what the party is doing (for the message when its time runs out), ``timing`` what each step took."""

    def __init__(self, cfg: PartyConfig, client: CoordinatorClient, pair: KeyPair, signature: bytes,
                 security: ClientSecurity | None, mutual: bool, deadline: float, log, progress: float,
                 terms: Terms | None = None):
        self.cfg, self.client, self.pair, self.signature, self.terms = cfg, client, pair, signature, terms
        self.security, self.mutual, self.deadline, self.log = security, mutual, deadline, log
        self.step, self.timing = "joining", {}  # type: tuple[str, dict[str, float]]
        #: The seconds the coordinator said its session had left at Join, when they end before the party's own timer.
        self.session_deadline = 0.0
        #: The party's own [clustering] reveal of a secure-aggregation session (``run_party``'s ``reveal``).
        self.reveal: str | None = None
        self.retry = Retry(cfg.name, self.left, log)
        self.watch = Progress(cfg.name, client.address, client, client.session, log, progress, self.left)
        self.watch.start()
        self.started = time.perf_counter()

    def left(self) -> float:
        """Seconds to the party's deadline (at least 0.1: a call is never given none)."""
        return max(self.deadline - time.monotonic(), 0.1)

    def close(self) -> None:
        self.watch.stop()
        self.client.close()

    def _join(self) -> Joined:
        return self.client.join(self.left(), self.pair.public, self.signature)

    def join(self, ids_mode: str | None, no_method: bool) -> Joined:
        """Join; refuse a session this party's own file rules out before anything is sent."""
        joined = self.retry("Join", self._join)
        session = self.client.session
        protocol = party_protocol(joined.protocol)  # one this party does not know: refused before anything is sent
        if ids_mode == "pseudonymous" and joined.ids != "pseudonymous":
            raise PartyError(f"this party's scenario says [security] ids = \"pseudonymous\", but the coordinator of "
                             f"session '{session}' asks for plain ids: refusing to send a raw id")
        if no_method and not protocol.terms.columns_at_home:
            raise PartyError(f"this party's table names no 'method', so it keeps its columns at home and can take "
                             f"part in a secure-aggregation session only; session '{session}' expects an upload of "
                             "disguised data: give the table the method the session expects")
        if self.terms is not None:
            self.terms.check_join(joined.protocol, list(joined.parties), joined.clustering)
        # the session's real time left, when it ends before this party's own timer: what the progress lines count
        # down, and when the party gives up (a little after the coordinator, whose reason then arrives first)
        if 0 < joined.seconds_left and time.monotonic() + joined.seconds_left + GRACE < self.deadline:
            self.deadline = time.monotonic() + joined.seconds_left + GRACE
            self.session_deadline = joined.seconds_left
        return joined

    def agree_keys(self, joined: Joined, done: Disguised) -> tuple[list[Peer], np.ndarray | None]:
        """Every party's checked public key (pseudonymous ids or rounds), and the party's pseudonyms (pseudonymous
        ids; else None: its own ids travel)."""
        pseudonymous = joined.ids == "pseudonymous"
        if not (pseudonymous or joined.rounds):
            return [], None
        # fetched and checked once: the pseudonym key and the masks use the very same keys
        self.step = ("agreeing the pseudonym key with the other parties" if pseudonymous
                     else "exchanging keys with the other parties")
        self.watch.wait("peers")
        peers = self.retry("key agreement", lambda: checked_peers(self.client, joined, self.pair, self.security,
                                                                  self.left(), self.mutual))
        if not pseudonymous:
            return peers, None
        self.watch.wait("key")
        key = self.retry("key agreement", lambda: agree_pseudonym_key(
            self.client, joined, self.pair, self.cfg.seed, self.security, self.left(), self.mutual, peers))
        return peers, pseudonyms(key, done.data.ids)

    def upload(self, joined: Joined, done: Disguised, ids: np.ndarray | None) -> None:
        """Upload the disguised arrays (again from scratch, after joining again, when the connection drops)."""
        self.step = "uploading"
        # nothing reads the party's own columns again: give them back before the upload
        done.X = done.data.X = np.empty((0, done.data.X.shape[1]))  # not a view: that would keep X
        self.watch.wait("uploading")
        self.retry("Upload", lambda: self.client.upload(done.upload(self.client.session, self.cfg.name,
                                                                    joined.chunk_bytes, ids, serialised=True),
                                                        timeout=self.left()),
                   again=lambda: self.retry("Join", self._join))
        self.timing["upload"] = time.perf_counter() - self.started

    def _keep_columns(self, joined: Joined) -> None:
        if self.cfg.method != "none" or self.cfg.params:
            what = party_protocol(joined.protocol).doing
            raise PartyError(f"party '{self.cfg.name}': the coordinator runs this session {what}, where a party "
                             f"keeps its columns at home; this party is configured to disguise them with "
                             f"'{self.cfg.method}'")

    def secure_rounds(self, joined: Joined, done: Disguised, peers: list[Peer],
                      ids: np.ndarray | None, reveal: str | None = None) -> RoundsResult | MpcResult:
        """The secure-aggregation exchange on the party's normalised columns: the labels-only argmin
        (parties.secagg_labels) or the masked partial distances (parties.secagg), as the alignment says."""
        from parties.mpc import MpcResult
        from parties.secagg_labels import secure_session

        self.step = "running the secure-aggregation rounds"
        self._keep_columns(joined)
        watch = self.watch

        class Watched(GrpcLink):  # says which round's labels it waits for, numbered as the report numbers them
            def labels(self, round_, seeding=False):
                watch.wait(f"secure aggregation: waiting for the labels of {'seeding step' if seeding else 'round'} "
                           f"{round_}")
                return super().labels(round_, seeding)

        result = secure_session(Watched(self.client, self.left, self.retry),
                                lambda messages: self.client.upload(messages, timeout=self.left()), peers, self.pair,
                                done.X, done.data.ids if ids is None else ids, self.client.session, self.cfg.name,
                                len(done.data.columns), min(joined.chunk_bytes or CHUNK_BYTES, CHUNK_BYTES),
                                self.deadline, parties=list(joined.parties), reveal=reveal, terms=self.terms,
                                log=self.log)
        say(self.cfg.name, f"{result.rounds} rounds of secure aggregation"
                           + (", opening the labels only" if isinstance(result, MpcResult) else ""), self.log)
        self.timing.update(result.timing)
        self.timing["upload"] = time.perf_counter() - self.started
        return result

    def mpc_rounds(self, joined: Joined, done: Disguised, peers: list[Peer], ids: np.ndarray | None) -> MpcResult:
        """MPC k-means (parties.mpc) on the party's normalised columns: its ids-only upload, the alignment, then
        its MPC program (MPyC's, or SPU's: parties.spu_run) with every link relayed over the client's Relay
        stream."""
        from parties.spu_run import warm

        self.step = "running the MPC k-means"
        self._keep_columns(joined)
        keys = {p.party: p.public_key for p in peers}
        if keys.get(self.cfg.name) != self.pair.public:
            raise PartyError("the coordinator relayed a public key for this party that is not its own")
        # SPU's program loads while the ids go up and the coordinator joins them, if this party's terms run the MPC
        # on SPU (they refuse any other engine): after the alignment every share-holder would wait for the slowest
        started = warm(self.terms.engine if self.terms is not None else "")
        try:
            result = self._mpc(joined, done, ids, keys, started)
        finally:
            if started is not None:
                started.close()
        self.timing.update(result.timing)
        self.timing["upload"] = time.perf_counter() - self.started
        return result

    def _mpc(self, joined: Joined, done: Disguised, ids: np.ndarray | None, keys: dict[str, bytes],
             started: Warm | None) -> MpcResult:
        """``mpc_rounds`` from the ids' upload to the MPC's result (``started``: SPU's program, started already,
        or None)."""
        from parties.mpc import METHOD as MPC_METHOD
        from parties.mpc import check_mpc, confirm_mpc, run_mpc
        from parties.spu_run import refuse_unless_ready, run_spu

        client, name = self.client, self.cfg.name
        chunk = min(joined.chunk_bytes or CHUNK_BYTES, CHUNK_BYTES)
        t = time.perf_counter()
        client.upload(upload_messages(client.session, name, MPC_METHOD, {"columns": str(len(done.data.columns))},
                                      done.data.ids if ids is None else ids, [], len(done.data.columns), chunk),
                      timeout=self.left())
        t_upload = time.perf_counter() - t
        link = GrpcLink(client, self.left, self.retry)
        header, positions = link.alignment()
        if header.mpc_helper:  # the coordinator's share-holder with no data: its key comes with the alignment
            if header.mpc_helper in keys or len(header.mpc_helper_key) != 32:
                raise PartyError(f"the coordinator names a helper '{header.mpc_helper}' that is a party of the "
                                 "session or gives it no 32-byte key")
            keys[header.mpc_helper] = header.mpc_helper_key
        # this party's terms first (the engine among them), then whether that engine can run here
        check_mpc(link, header, positions, len(done.X), name, self.terms)
        refuse_unless_ready(link, header)
        if header.mpc_engine != "spu" and (problem := missing("mpc")) is not None:  # told before any share exists
            link.refuse(problem)
            raise PartyError(problem)
        def confirm() -> None:
            confirm_mpc(link, header, positions, done.data.ids if ids is None else ids, self.pair, keys,
                        client.session, name)

        X = np.ascontiguousarray(done.X[positions.astype(np.intp)], dtype=np.float64)
        relay = lambda items: client.relay(items, timeout=self.left())  # noqa: E731
        if header.mpc_engine == "spu":  # its program starts (jax, compilation) while the parties confirm
            result = run_spu(relay, header, X, self.pair, keys, client.session, name, self.deadline, log=self.log,
                             confirm=confirm, started=started)
        else:
            confirm()
            result = run_mpc(relay, header, X, self.pair, keys, client.session, name, self.deadline, log=self.log)
        result.timing["upload_ids"] = t_upload
        result.positions = positions
        say(name, f"{result.rounds} Lloyd rounds as an MPC over {len(header.mpc_parties)} parties", self.log)
        return result

    def receive(self) -> Result:
        """Wait for the clustering and take this party's labels."""
        self.step = "waiting for the clustering"
        self.watch.wait("result")
        t = time.perf_counter()
        result = self.retry("GetResult", lambda: self.client.result(timeout=self.left()))
        self.timing["wait_result"] = time.perf_counter() - t
        return result


def summarise(cfg: PartyConfig, done: Disguised, result: Result, secure: RoundsResult | MpcResult | None,
              timing: dict[str, float], labels_out: Path | None, summary_out: Path | None, log) -> dict:
    """Say what came back, write the labels (``labels_out``) and the party's summary (``summary_out``, 0600: it
    holds the party's master seed); return the summary."""
    header, data = result.header, done.data
    say(cfg.name, f"{header.n_joined} of {len(data.ids)} records clustered into {header.clusters_found} clusters, "
                  f"sizes {list(header.sizes)}", log)
    if labels_out:
        write_labels(labels_out, data.ids, result.labels)
    summary = {
        "name": cfg.name,
        "seed": cfg.seed,
        "rows": len(data.ids),
        "columns": data.columns,
        "method": cfg.method,
        "params": cfg.params,
        "normalize": cfg.normalize if done.method.normalizes else "none",
        "dtype": cfg.dtype,
        "arrays": {s.name: list(s.array.shape) for s in done.arrays},
        "n_joined": header.n_joined,
        # what the ids would have cost in the smallest plain encoding, beside the pseudonyms sent (the ledger's)
        "plain_id_bytes": packed_size(data.ids),
        "timing": {**done.timing, **timing},
        "peak_rss": peak_rss(),
    }
    if check := done.method.own_check():  # what the party measured of its own disguise (004 §5.2 step 3, 002 Alg. 6.1)
        summary["own_check"] = check
    if isinstance(secure, RoundsResult):
        summary.update(method="secure_aggregation", arrays={}, rounds=secure.rounds)
    elif secure is not None:  # an MpcResult (parties.mpc)
        summary.update(method=secure.protocol, arrays={}, rounds=secure.rounds)
        # per round, the MPyC messages in sequence on this party's path
        summary["mpc_turns"] = {str(r): n for r, n in sorted(secure.turns.items())}
    if summary_out:  # it holds the party's master seed: 0600, never through a symbolic link
        write_private(summary_out, json.dumps(summary, indent=2).encode())
    return summary


def write_labels(path: Path, ids: np.ndarray, labels: np.ndarray, block: int = 1 << 16) -> None:
    """``id,cluster`` for the party's joined ids (noise as -1), in its own row order.

    Formatted ``block`` lines at a time with one ``%`` over the block (a third
    of the time of a formatted string per line), the same text: ``%d`` of an
    integer and ``%s`` of a string are what ``str`` gives.
    """
    keep = labels != -2
    ids, labels = ids[keep], labels[keep]
    line = "%d,%d\n" if ids.dtype.kind in "iu" else "%s,%d\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id,cluster\n")
        for start in range(0, len(ids), block):
            pairs = zip(ids[start : start + block].tolist(), labels[start : start + block].tolist())
            values = tuple(chain.from_iterable(pairs))
            fh.write(line * (len(values) // 2) % values)
