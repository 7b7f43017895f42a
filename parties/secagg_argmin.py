"""Secure aggregation's rounds opening the labels only: the MPyC program each share-holder runs.

Run as its own process, one per share-holder (parties.mpc.run_mpc starts it
with ``-P`` pointing at its local tunnel ports and ``-I`` its index, as for
the full MPC)::

    python -m parties.secagg_argmin --data IN.npz --result OUT.npz -P host:port ... -I i

Each round r = 0, 1, ... (Vaidya & Clifton, KDD 2003, on secret shares; the
documentation's "k-means by secure aggregation"):

1. every data party p computes in the clear, on its own columns of the m
   joined records, ``D_p[i, j] = ||c_j^(p)||^2 - 2 x_i^(p) . c_j^(p)``: its
   part of the squared distance of record i to centre j, less the record's
   own norm ``||x_i^(p)||^2``, which is the same for every centre and so
   changes no argmin;
2. it secret-shares D_p in fixed point, ``round(D_p * 2^f)`` as a secure
   integer array ``SecInt(l)`` (``mpc.input``; l = mpc_bits, f = mpc_frac:
   no product of two secrets is ever taken, so an integer type does, with a
   field of l + 32 bits where SecFxp(l, f) needs l + f + 32); the
   share-holders add the shares (local: no message) into shares of
   ``S = sum_p D_p``;
3. each record's nearest centre, ``argmin_j S[i, j]`` (``mpc.np_argmin``:
   secure comparisons, batched over all records; the first centre on a tie),
   is opened to every share-holder: the round's labels. Nothing else is
   ever opened: not a distance, not a partial sum, not a comparison of two
   centres other than through the labels;
4. the rounds end once no label changed (r > 0) or at r = max_iter (every
   share-holder decides alike from the opened labels); otherwise each data
   party moves its block of every centre to the mean of its rows labelled
   j (an empty cluster keeps its centre), in the clear.

Round 0's centres are the joined records ``init`` (public positions, drawn
by the coordinator with the scenario seed). The helper of a two-party
session inputs nothing. The program writes "round r" to its standard
output as round r begins, for the byte ledger's rounds, and the labels of
the last round to ``--result``.
"""

from __future__ import annotations

import sys

import numpy as np

from parties.mpc_kmeans import run_program


def partial(X: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """``||c_j||^2 - 2 x_i . c_j`` for the rows of ``X`` and ``centres`` (m x k): this block's squared distances
    less each row's own norm."""
    D = X @ centres.T
    D *= -2.0
    D += np.einsum("ij,ij->i", centres, centres)[None, :]
    return D


def update(X: np.ndarray, labels: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each centre block moved to the mean of its cluster's rows; an empty cluster keeps its centre."""
    k = len(centres)
    counts = np.bincount(labels, minlength=k)
    out = centres.copy()
    for c in range(X.shape[1]):
        sums = np.bincount(labels, weights=X[:, c], minlength=k)
        out[counts > 0, c] = sums[counts > 0] / counts[counts > 0]
    return out


def encode(D: np.ndarray, bits: int, frac: int, parties: int) -> np.ndarray:
    """``round(D * 2^frac)`` as integers; SystemExit, saying what to change, unless ``parties`` such values and
    their differences fit SecInt(bits) (|value| < 2^(bits - 2) / parties)."""
    limit = 2.0 ** (bits - frac - 2) / max(parties, 1)
    top = float(np.max(np.abs(D))) if D.size else 0.0
    if not np.isfinite(top) or top >= limit:
        raise SystemExit(f"a partial squared distance of {top:.4g} does not fit {bits}-bit fixed point with {frac} "
                         f"fractional bits and {parties} parties (the limit is {limit:.4g}); raise [clustering] "
                         "'mpc_bits' or lower 'mpc_frac'")
    return np.rint(D * 2.0**frac).astype(np.int64)


async def main(mpc, args) -> None:
    """Input each round's partial distances as shares, open each round's argmin (see the module's docstring)."""
    data = np.load(args.data)
    X_own, columns, init = data["X"], [int(c) for c in data["columns"]], data["init"].tolist()
    k, rounds, bits, frac, m = (int(data[key]) for key in ("k", "rounds", "bits", "frac", "m"))
    secint = mpc.SecInt(bits)
    senders = [p for p, d in enumerate(columns) if d > 0]
    mine = columns[mpc.pid] > 0
    centres = np.asarray(X_own[init], dtype=float) if mine else np.zeros((k, 0))
    zeros = np.zeros((m, k), dtype=np.int64)
    await mpc.start()
    labels = np.zeros(m, dtype=np.int32)
    for r in range(rounds + 1):
        print(f"round {r}", flush=True)
        own = zeros
        if mine:
            own = encode(partial(X_own, centres), bits, frac, len(senders))
        total = None
        for p in senders:
            share = mpc.input(secint.array(own if p == mpc.pid else zeros), senders=p)
            total = share if total is None else total + share
        nearest = mpc.np_argmin(total, axis=1)  # m secret indices
        opened = np.rint(np.asarray(await mpc.output(nearest), dtype=float)).astype(np.int32)
        changed = m if r == 0 else int(np.count_nonzero(opened != labels))
        labels = opened
        if (r > 0 and changed == 0) or r >= rounds:
            break
        if mine:
            centres = update(X_own, labels, centres)
    await mpc.shutdown()
    np.savez(args.result, labels=labels, centres=np.zeros((0, sum(columns))))


def cli(argv: list[str] | None = None) -> None:
    run_program(main, argv, "python -m parties.secagg_argmin", __doc__ or "",
                "npz: X, columns, init, k, rounds, bits, frac, m", "npz written at the end: the last round's labels")


if __name__ == "__main__":
    cli(sys.argv[1:])
