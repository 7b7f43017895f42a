"""A party's side of secure aggregation that opens the labels only: the argmin of its rounds as an MPC.

In a secure-aggregation session with ``[clustering] reveal = "labels"`` (the
default) nobody sees a distance. Each round every party computes, in the
clear, the partial squared distances of the m joined records to its own
block of every centre (its own columns; the centres follow from the
previous round's public labels), exactly as in the distances mode
(parties.secagg); but instead of posting them masked to an arbiter that
reads their sum, it secret-shares them among the parties (Shamir, MPyC;
parties.secagg_argmin is the program; or with ``engine = "spu"`` ABY3 on
SPU, parties/spu_argmin.py), and the parties compute each
record's nearest centre on the shares of the sum and open only that: the
round's labels. Sums of shares are local and the argmin needs comparisons
only, no product of two secrets, which is why it costs a fraction of the
full MPC's k-means (parties.mpc_kmeans, whose centres are secret too).

This is the approach of Vaidya and Clifton ("Privacy-preserving k-means
clustering over vertically partitioned data", KDD 2003: partial distances
in the clear, the closest cluster found by secure comparisons so that only
the assignment is learnt), on the secret-sharing engine and relay the
project already runs for the full MPC (parties.mpc: every link sealed per
pair with AES-GCM and tunnelled through the coordinator). Two data parties
need the coordinator's helper as a third share-holder (threshold t = 1),
as in the full MPC.

The party checks the alignment alone and confirms it with every other
party before any share exists (parties.mpc.confirm_mpc, plus the field
``reveal``), so a coordinator that tells one party "labels" and another
"distances" is caught before anything is sent.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from parties.errors import PartyError
from parties.keys import KeyPair
from parties.mpc import MpcResult, mpc_fields, run_mpc
from parties.protocols.terms import Terms
from parties.secagg import METHOD, RoundsResult, check_alignment, confirm_alignment, run_rounds
from parties.serde import AlignmentHeader, upload_messages
from parties.spu_run import ARGMIN, refuse_unless_ready, run_spu
from protos.extras import missing

#: What the session opens each round (AlignmentHeader.reveal): the labels only, or the summed distances.
LABELS, DISTANCES = "labels", "distances"
#: The MPyC program of the argmin (run by parties.mpc.run_mpc as ``python -m PROGRAM``).
PROGRAM = "parties.secagg_argmin"


def labels_fields(header: AlignmentHeader, positions: np.ndarray, ids: np.ndarray) -> dict[str, bytes]:
    """The fields the parties confirm to each other: the MPC's (parties.mpc.mpc_fields: secure aggregation's and
    the share-holders', their columns, the fixed-point type, the helper) and ``reveal`` (UTF-8)."""
    return {**mpc_fields(header, positions, ids), "reveal": header.reveal.encode()}


def labels_rounds(link, header: AlignmentHeader, positions: np.ndarray, X: np.ndarray, ids: np.ndarray, pair: KeyPair,
                  peers: dict[str, bytes], session: str, me: str, deadline: float, *,
                  parties: list[str] | None = None, terms: Terms | None = None, log=sys.stderr) -> MpcResult:
    """This party's rounds when only the labels are opened: check and confirm the alignment (against this party's
    own ``terms`` too, when given: parties.protocols.terms), then run the argmin's MPC (parties.secagg_argmin) on its joined
    rows with every link relayed over ``link.relay``. The labels of every round come out of the MPC itself, so an
    arbiter cannot choose them (no least-cluster check is needed), and the share-holders must be at least three
    (threshold t >= 1), as in any MPC.

    ``X``: the party's normalised columns, its rows in its upload's order; ``peers``: every party's public key as
    relayed (the helper's is added from the alignment). Returns what the MPC opened: the last round's labels.
    """
    keys = dict(peers)
    order = list(header.parties)
    try:
        check_alignment(header, positions, len(X), me, parties)
        if set(order) != set(peers):
            raise PartyError(f"refusing the coordinator's alignment: its parties {order} are not those whose keys it "
                             f"relayed ({sorted(peers)}); this party posts nothing")
        if header.seeding_steps:
            raise PartyError("refusing the coordinator's alignment: k-means++ seeding steps in a session that opens "
                             "the labels only (seeding would open distances); this party sends nothing")
        helper = header.mpc_helper
        expected = [*order, helper] if helper else order
        if list(header.mpc_parties) != expected or len(header.mpc_columns) != len(expected):
            raise PartyError(f"refusing the coordinator's alignment: the argmin's share-holders {list(header.mpc_parties)}"
                             f" are not the session's parties {order}" + (f" and the helper '{helper}'" if helper else "")
                             + "; this party sends nothing")
        if (len(expected) - 1) // 2 < 1:
            raise PartyError(f"refusing the coordinator's alignment: the argmin's share-holders {expected} give "
                             f"threshold t = {(len(expected) - 1) // 2}, and with t = 0 each share is the value "
                             "itself; this party sends nothing")
        if terms is not None:
            terms.check_alignment(header)
        if int(header.mpc_columns[expected.index(me)]) != X.shape[1]:
            raise PartyError(f"refusing the coordinator's alignment: it says this party inputs "
                             f"{header.mpc_columns[expected.index(me)]} columns; it has {X.shape[1]}")
        if helper:
            if helper in keys or len(header.mpc_helper_key) != 32:
                raise PartyError(f"refusing the coordinator's alignment: it names a helper '{helper}' that is a party "
                                 "of the session or gives it no 32-byte key")
            keys[helper] = header.mpc_helper_key
    except PartyError as exc:
        link.refuse(str(exc))
        raise
    # once its terms hold, whether its engine can run here: before any share of the data leaves
    refuse_unless_ready(link, header)  # SPU's environment
    if (header.mpc_engine != "spu"
            and (problem := missing("mpc", 'secure aggregation opening the labels only')) is not None):
        link.refuse(problem)  # this argmin runs on MPyC
        raise PartyError(problem)
    def confirm() -> None:
        confirm_alignment(link, pair, peers, order, session, me, labels_fields(header, positions, ids))

    Xj = np.ascontiguousarray(X[positions.astype(np.intp)], dtype=np.float64)
    if header.mpc_engine == "spu":  # its program starts (jax, compilation) while the parties confirm
        result = run_spu(link.relay, header, Xj, pair, keys, session, me, deadline, log=log, program=ARGMIN,
                         confirm=confirm)
    else:
        confirm()
        result = run_mpc(link.relay, header, Xj, pair, keys, session, me, deadline, log=log, program=PROGRAM)
    result.positions, result.protocol = positions, METHOD
    return result


def secure_session(link, upload, peers: list, pair: KeyPair, X: np.ndarray, ids: np.ndarray, session: str, me: str,
                   n_columns: int, chunk_bytes: int, deadline: float, *, parties: list[str] | None = None,
                   reveal: str | None = None, terms: Terms | None = None,
                   log=sys.stderr) -> RoundsResult | MpcResult:
    """A joined party's whole secure-aggregation exchange after Join (and the pseudonym key, if any), in either
    mode: its ids-only upload (naming its columns, which the argmin's MPC needs), the alignment, then the rounds
    the alignment's ``reveal`` asks for: ``labels_rounds``, or the masked partial distances of
    parties.secagg.run_rounds. ``reveal``: what this party's own scenario says the session opens, if it says; a
    coordinator announcing another mode is refused before anything but the ids is sent.
    """
    keys = {p.party: p.public_key for p in peers}
    if keys.get(me) != pair.public:
        raise PartyError("the coordinator relayed a public key for this party that is not its own")
    t = time.perf_counter()
    upload(upload_messages(session, me, METHOD, {"columns": str(n_columns)}, ids, [], n_columns, chunk_bytes))
    t_upload = time.perf_counter() - t
    t = time.perf_counter()
    header, positions = link.alignment()
    t_alignment = time.perf_counter() - t
    mode = header.reveal or DISTANCES
    if reveal is not None and mode != reveal:
        why = (f"refusing the coordinator's alignment: it runs the session opening the {mode} each round, but this "
               f"party's scenario says [clustering] reveal = \"{reveal}\"; this party sends nothing more")
        link.refuse(why)
        raise PartyError(why)
    result: RoundsResult | MpcResult
    if mode == LABELS:
        result = labels_rounds(link, header, positions, X, ids, pair, keys, session, me, deadline, parties=parties,
                               terms=terms, log=log)
    elif mode == DISTANCES:
        result = run_rounds(link, X, pair, keys, session, me, chunk_bytes, ids=ids, parties=parties, terms=terms,
                            log=log, given=(header, positions))
    else:
        why = f"refusing the coordinator's alignment: reveal = {mode!r} is neither \"{LABELS}\" nor \"{DISTANCES}\""
        link.refuse(why)
        raise PartyError(why)
    result.timing.update(upload_ids=t_upload, alignment=t_alignment)
    return result
