"""The coordinator's helper: a third MPC share-holder with no data, for MPC sessions of two parties.

With two parties Shamir secret sharing has threshold t = 0: either party
alone could open every share. ``[clustering] helper = true`` adds a third
share-holder that inputs nothing, run by the coordinator's process
(``ppc run`` and ``ppc coordinator`` start it beside the session): threshold
t = 1, so no single share-holder learns anything, on the assumption that the
helper does not collude with either party (honest majority). It runs the same
MPyC program as the parties (parties.mpc_kmeans) with no columns, under a key
pair made from this process's entropy for the session, and its links go
through the same relay (coordinator.protocols.mpc) as in-process streams, sealed and
counted like every other link. The report names it as ``helper``; the shares
it holds stay in its MPC process and are in no file the coordinator writes.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np

from coordinator.errors import SessionError
from coordinator.handlers import relay
from coordinator.protocols.mpc import HELPER, set_helper_key
from coordinator.protocols.secagg import mpc_fields, rounds_of
from parties.errors import PartyError
from parties.keys import KeyPair
from parties.mpc import PROGRAM as MPC_PROGRAM
from parties.mpc import run_mpc
from parties.secagg_labels import PROGRAM
from parties.serde import alignment_from_proto, relay_frames, relay_requests
from parties.spu_run import ARGMIN, run_spu
from parties.spu_run import PROGRAM as SPU_PROGRAM
from protos.ppcsim.v1 import session_pb2
from protos.vocabulary import MPC, SECURE, SPU

#: The program the helper runs, by protocol, on each engine: secure aggregation's labels-only argmin, or an MPC's
#: whole k-means (parties.secagg_labels, parties.mpc, parties.spu_run).
MPYC_PROGRAMS = {SECURE: PROGRAM, MPC: MPC_PROGRAM}
SPU_PROGRAMS = {SECURE: ARGMIN, MPC: SPU_PROGRAM}


def start(session, log=sys.stderr) -> threading.Thread | None:
    """Start the helper of ``session`` in a thread if its ``[clustering]`` asks for one; else None."""
    spec = session.spec.clustering
    if not spec.relayed or not spec.helper:
        return None
    thread = threading.Thread(target=run, args=(session, log), name=f"helper-{session.spec.name}", daemon=True)
    thread.start()
    return thread


def run(session, log=sys.stderr) -> None:
    """Wait for the alignment, then take part in the MPC with no data; a failure fails the session."""
    try:
        arbiter = rounds_of(session, timeout=session.seconds_left() + 1.0)
        pair = KeyPair.generate()  # this process's entropy: nothing in any report can regenerate it
        hub = arbiter.hub
        set_helper_key(session, hub, pair.public)  # the parties' GetAlignment waits for it (secagg.helper_key)
        peers = {p: session.keys[p].public_key for p in session.spec.parties} | {HELPER: pair.public}
        spec = session.spec.clustering
        header = session_pb2.AlignmentHeader(n_joined=arbiter.m, n_clusters=arbiter.k, init=arbiter.init.tolist(),
                                             max_iter=spec.max_iter, parties=session.spec.parties,
                                             **mpc_fields(session))

        def stream(items):
            requests = relay_requests(session.spec.name, HELPER, items)
            return relay_frames(relay(session, next(requests), requests, helper=True))

        # what the helper's program may hold unasked-for: the session's budget (else the coordinator's)
        budget = session.budget.limit or (session.budget.parent.limit if session.budget.parent else 0)
        if spec.engine == SPU:
            run_spu(stream, alignment_from_proto(header), np.zeros((arbiter.m, 0)), pair, peers, session.spec.name,
                    HELPER, time.monotonic() + session.seconds_left(), log=log, program=SPU_PROGRAMS[spec.protocol])
        else:
            run_mpc(stream, alignment_from_proto(header), np.zeros((arbiter.m, 0)), pair, peers, session.spec.name,
                    HELPER, time.monotonic() + session.seconds_left(), log=log,
                    program=MPYC_PROGRAMS[spec.protocol],
                    inbox=budget or (1 << 30),
                    written=lambda peer: hub.consumed(HELPER, peer))
    except (SessionError, PartyError) as exc:
        session.fail(f"the coordinator's helper: {exc}")
