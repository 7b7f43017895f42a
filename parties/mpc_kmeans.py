"""Lloyd's k-means as a secure multiparty computation on MPyC: the program each MPC party runs.

Run as its own process, one per MPC party (MPyC keeps one runtime per
process, configured from the command line at import)::

    python -m parties.mpc_kmeans --data IN.npz --result OUT.npz -P host:port ... -I i

MPyC's own options (``-P`` once per party, in the MPC's order, this party's
own entry with an empty host; ``-I`` its index) set up the runtime: Shamir
secret sharing over a prime field with threshold t = (n - 1) // 2 for n
parties (honest majority: any t parties together learn nothing beyond the
opened output). ``parties.mpc`` starts this program with ``-P`` pointing at
its local tunnel ports, so that every byte between the parties passes through
the coordinator encrypted; ``bench/mpc_relay.py`` runs the same program with
direct sockets.

The computation (reference.md §13; Lloyd's algorithm on secret shares):

1. every party inputs its own normalised columns of the m joined records
   (``mpc.input(x, senders=i)``, a secure fixed-point array
   ``SecFxp(l, f)``), a party with no columns (the helper) none; the blocks
   are stacked into the secret m x D matrix X;
2. the k initial centres are rows ``init`` of X (public positions, drawn by
   the coordinator with the scenario seed: which records start the centres is
   public, their values are not);
3. for round r = 0 .. max_iter: the squared distances up to the per-record
   constant ``||x_i||^2``, ``D[i, j] = ||c_j||^2 - 2 x_i . c_j`` (one secure
   matrix product), and each record's nearest centre as a secret unit vector
   (``mpc.np_argmin(D, axis=1, arg_unary=True)``: secure comparisons, the
   first centre on a tie); unless r = max_iter, every centre moves to the
   mean of its records, ``c_j = sum_i U[i, j] x_i / sum_i U[i, j]`` (a secure
   division), an empty cluster keeping its centre (an obliviously selected
   update: whether a cluster was empty is not opened);
4. the labels ``U @ (0 .. k-1)`` are opened to every party (``mpc.output``),
   and the centres if asked; nothing else is ever opened. There is no early
   stop: exactly max_iter + 1 assignments and max_iter updates, as
   scikit-learn's ``KMeans(init=centres, n_init=1, max_iter=max_iter)``
   computes in the clear.

The program writes "round r" to its standard output as round r begins (after
a barrier that ends round r - 1), for the byte ledger's rounds. With
``--watch-stdin`` it exits as soon as its standard input closes: the party
process that started it holds the other end, so the program never outlives
it.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def lloyd(mpc, secfxp, X, init, k: int, rounds: int):
    """The secret centres after ``rounds`` updates and the secret unit vectors of the last assignment, as
    coroutine steps: yields after each round's computation is scheduled (the caller awaits a barrier)."""
    C = X[list(init), :]
    for r in range(rounds + 1):
        XC = X @ C.T  # m x k
        norms = mpc.np_sum(C * C, axis=1)  # k
        D = norms - 2 * XC  # the squared distances less ||x_i||^2, which does not change any row's argmin
        U = mpc.np_argmin(D, axis=1, arg_unary=True)  # m x k secret unit vectors
        if r < rounds:
            counts = mpc.np_sum(U, axis=0)  # k
            sums = U.T @ X  # k x D
            empty = counts < 0.5
            means = sums / mpc.np_reshape(counts + empty, (k, 1))  # an empty cluster divides 0 by 1
            C = means + mpc.np_reshape(empty, (k, 1)) * (C - means)  # ... and keeps its centre
        yield r, C, U


def guard_inbox(exchanger, inbox: int, longest: int, names: list[str], stop) -> None:
    """Bound what the program holds of its peers' messages that it has not asked for yet: ``exchanger`` (MPyC's
    ``MessageExchanger`` class) is patched so that a message announcing more than ``longest`` payload bytes, or
    more than ``inbox`` bytes received from one peer and not yet taken by the program, calls ``stop(why)``
    naming the peer (``names``: the MPC's parties by MPyC id). The coordinator's helper runs with both set
    (parties.mpc.program_input), so that a party flooding it cannot grow the coordinator's process tree."""
    received = exchanger.data_received

    def unread(self) -> int:
        return len(self.bytes) + sum(len(v) for v in self.buffers.values() if isinstance(v, bytes))

    def who(self) -> str:
        pid = self.peer_pid
        return f"party '{names[pid]}'" if pid is not None and 0 <= pid < len(names) else "a peer"

    def data_received(self, data):
        received(self, data)
        pending = bytes(self.bytes[:12])
        if self.peer_pid is not None and len(pending) == 12:
            size = int.from_bytes(pending[8:12], "little")
            if size > longest:
                stop(f"{who(self)} sent an MPC message of {size} bytes, longer than any this computation sends "
                     f"({longest} bytes at most)")
                return
        held = unread(self)
        if held > inbox:
            stop(f"{who(self)} sent {held} bytes that the MPC program has not asked for, more than it may hold "
                 f"({inbox} bytes: the session's memory budget)")

    exchanger.data_received = data_received


def longest_message(m: int, k: int, columns: int, bits: int) -> int:
    """Bytes of the longest message this program sends to one peer (an upper bound): a vector of at most
    ``m * max(columns, k) * (bits + 1)`` field elements (a secure comparison's bit decomposition of every
    distance of the m x k matrix is the largest), each of at most ``(2 * bits + 96) // 8 + 8`` bytes, and
    the 12-byte header."""
    return 12 + m * max(columns, k, 1) * (bits + 1) * ((2 * bits + 96) // 8 + 8)


#: The exit status of a program that guard_inbox stopped (its reason is the last line of its standard error).
STOPPED = 4


def _stop(why: str) -> None:
    import os

    print(why, file=sys.stderr, flush=True)
    os._exit(STOPPED)


async def main(mpc, args) -> None:
    """Input, Lloyd's rounds, output (see the module's docstring)."""
    data = np.load(args.data)
    X_own, columns, init = data["X"], [int(c) for c in data["columns"]], data["init"].tolist()
    k, rounds, bits, frac = (int(data[key]) for key in ("k", "rounds", "bits", "frac"))
    reveal_centres = bool(data["reveal_centres"])
    m = int(data["m"])
    secfxp = mpc.SecFxp(bits, frac)
    inbox = int(data["inbox"]) if "inbox" in data.files else 0
    if inbox:
        from mpyc.asyncoro import MessageExchanger

        names = [str(n) for n in data["names"]]
        guard_inbox(MessageExchanger, inbox, longest_message(m, k, sum(columns), bits), names, _stop)
    await mpc.start()
    blocks = []
    for p, d in enumerate(columns):
        if d == 0:
            continue
        own = X_own if p == mpc.pid else np.zeros((m, d))
        # integral=False at every party: MPyC would otherwise infer the flag from the value at the sender (and
        # from the zeros elsewhere), so the parties would run different protocols, and the flag would tell
        # whether a party's columns are whole numbers
        blocks.append(mpc.input(secfxp.array(np.asarray(own, dtype=float), integral=False), senders=p))
    X = mpc.np_hstack(blocks) if len(blocks) > 1 else blocks[0]
    state = None
    for state in lloyd(mpc, secfxp, X, init, k, rounds):
        print(f"round {state[0]}", flush=True)
        await mpc.barrier(f"round {state[0]}")
    assert state is not None
    _, C, U = state
    labels = U @ np.arange(k)
    opened = np.rint(np.asarray(await mpc.output(labels), dtype=float)).astype(np.int32)
    centres = np.asarray(await mpc.output(C), dtype=float) if reveal_centres else np.zeros((0, sum(columns)))
    await mpc.shutdown()
    np.savez(args.result, labels=opened, centres=centres)


def run_program(program, argv: list[str] | None, prog: str, doc: str, data: str, result: str) -> None:
    """An MPyC program's command line (this one's, and parties.secagg_argmin's): ``--data`` (``data`` says what
    the npz holds), ``--result`` (``result``: what it writes) and ``--watch-stdin``; MPyC's own options (-P, -I,
    ...) are left to MPyC, then ``program(mpc, args)`` runs on MPyC's runtime."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--data", required=True, help=data)
    parser.add_argument("--result", required=True, help=result)
    parser.add_argument("--watch-stdin", action="store_true", help="exit when standard input closes (the parent died)")
    args, _ = parser.parse_known_args(argv)
    finished = watch_parent() if args.watch_stdin else None
    from mpyc.runtime import mpc  # parses (and removes) MPyC's own options in sys.argv: -P, -I, ...

    mpc.run(program(mpc, args))
    if finished is not None:
        finished.set()


def cli(argv: list[str] | None = None) -> None:
    run_program(main, argv, "python -m parties.mpc_kmeans", __doc__ or "",
                "npz: X, columns, init, k, rounds, bits, frac, m, reveal_centres",
                "npz written at the end: labels (and centres)")


def watch_parent():
    """Exit this process as soon as its standard input closes (the party process that started it holds the other
    end, so the program never outlives it); returns the event to set once the program finished normally."""
    import os
    import threading

    finished = threading.Event()

    def watch() -> None:
        try:  # the raw descriptor: a thread blocked in sys.stdin's buffered reader aborts the interpreter's exit
            while os.read(0, 4096):
                pass  # returns b"" at end of file: the parent closed its end, or died
        except OSError:
            return
        if not finished.is_set():
            os._exit(3)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()
    return finished


if __name__ == "__main__":
    cli(sys.argv[1:])
