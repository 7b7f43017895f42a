"""Secure aggregation's rounds opening the labels only, on SPU (ABY3): the program each share-holder runs.

The labels-only argmin of ``parties.secagg_argmin`` (Vaidya & Clifton, KDD
2003, on secret shares) with SPU's ABY3 in place of MPyC's Shamir sharing:
three share-holders (three parties, or two and the coordinator's helper),
honest majority, passively secure. Like ``parties/spu_kmeans.py`` it runs in
SPU's own environment, imports nothing from the project but that file (by
path: its link, runtime, sharing and opening), and is started by path::

    SPU_PYTHON parties/spu_argmin.py --data IN.npz --result OUT.npz --rank i --party HOST:PORT ...

Each round r = 0, 1, ...:

1. every data party p computes in the clear, on its own columns of the m
   joined records, ``D_p[i, j] = ||c_j^(p)||^2 - 2 x_i^(p) . c_j^(p)`` (its
   part of the squared distance less the record's own norm, which changes no
   argmin), and inputs it as an ABY3 secret (fixed point, ``frac`` fractional
   bits over Z_2^64): three shares made from the operating system's entropy,
   each holder's sent to it over the SPU link;
2. the compiled program adds the parties' secrets (local: no message) and
   takes each record's nearest centre, a tournament of ceil(log2 k) levels of
   secure comparisons batched over all records (the first centre on a tie);
   the winners' indices are carried by selection, no index is compared;
3. the labels, and nothing else, are opened to every share-holder;
4. the rounds end once no label changed (r > 0) or at r = max_iter (every
   share-holder decides alike from the opened labels); otherwise each data
   party moves its block of every centre to the mean of its rows labelled j
   (an empty cluster keeps its centre), in the clear.

No product of two secrets is taken. The program writes "round r" to its
standard output as round r begins and the last round's labels to
``--result``.
"""

from __future__ import annotations

import importlib.util
import os
import sys

#: The SPU k-means program beside this one, whose link, runtime, sharing and opening this program uses.
KMEANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spu_kmeans.py")
_spec = importlib.util.spec_from_file_location("spu_kmeans", KMEANS)
if _spec is None or _spec.loader is None:
    raise SystemExit("spu_kmeans.py is missing beside spu_argmin.py")
kmeans = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kmeans)


def argmin_program(senders: int, k: int):
    """The jax function compiled to SPU: the sum of the ``senders`` secret m x k partial distances and each row's
    argmin (the lower index on a tie), as the full k-means finds its nearest centre (``one_hot_nearest``: one
    comparison of every pair of centres and ANDs of bits, where a tournament takes ceil(log2 k) levels of a
    comparison and a selection each). jax is imported as it is traced, only when it is compiled, not when it
    comes from the cache."""
    jnp = kmeans.LazyJaxNumpy()

    def argmin(*parts):
        S = parts[0]
        for part in parts[1:]:
            S = S + part
        return kmeans.one_hot_nearest(jnp, S, jnp.int32) @ jnp.arange(k, dtype=jnp.int32)

    return argmin


def partial(np, X, centres):
    """``||c_j||^2 - 2 x_i . c_j`` for the rows of ``X`` and ``centres``: this block's squared distances less each
    row's own norm (as parties.secagg_argmin.partial)."""
    D = X @ centres.T
    D *= -2.0
    D += np.einsum("ij,ij->i", centres, centres)[None, :]
    return D


def update(np, X, labels, centres):
    """Each centre block moved to the mean of its cluster's rows; an empty cluster keeps its centre."""
    k = len(centres)
    counts = np.bincount(labels, minlength=k)
    out = centres.copy()
    for c in range(X.shape[1]):
        sums = np.bincount(labels, weights=X[:, c], minlength=k)
        out[counts > 0, c] = sums[counts > 0] / counts[counts > 0]
    return out


def main(args) -> None:
    np, api, libspu = kmeans.spu_modules()
    data = np.load(args.data)
    X_own = np.asarray(data["X"], dtype=np.float64)
    columns, init = [int(c) for c in data["columns"]], [int(i) for i in data["init"]]
    k, rounds, bits, frac, m = (int(data[key]) for key in ("k", "rounds", "bits", "frac", "m"))
    n, me = len(args.party), args.rank
    if n != 3:
        raise SystemExit(f"ABY3 needs three share-holders, got {n}")
    senders = [p for p, d in enumerate(columns) if d > 0]
    mine = columns[me] > 0
    names = [f"d{p}" for p in senders]
    compiled = kmeans.compiler(np, libspu, kmeans.source_of(os.path.abspath(__file__), KMEANS))
    run_argmin = compiled(argmin_program(len(senders), k), [(m, k)] * len(senders), names, ["labels"], repr(k))
    args.go.wait()  # --wait-go: the party has confirmed the session
    lctx, runtime, io = kmeans.connect(args, api, libspu, bits, frac)
    centres = np.asarray(X_own[init], dtype=np.float64) if mine else np.zeros((k, 0))
    labels = np.zeros(m, dtype=np.int32)
    for r in range(rounds + 1):
        print(f"round {r}", flush=True)
        own = partial(np, X_own, centres) if mine else None
        for p in senders:
            kmeans.share(lctx, runtime, io, libspu, f"d{p}", p, own if p == me else None)
        runtime.run(run_argmin)
        opened = np.rint(kmeans.reveal(lctx, runtime, io, libspu, np, "labels")).astype(np.int32)
        if opened.shape != (m,) or opened.min(initial=0) < 0 or opened.max(initial=0) >= k:
            raise SystemExit(f"round {r}: the opened labels are not {m} values in 0..{k - 1}")
        changed = m if r == 0 else int(np.count_nonzero(opened != labels))
        labels = opened
        if (r > 0 and changed == 0) or r >= rounds:
            break
        if mine:
            centres = update(np, X_own, labels, centres)
    lctx.barrier()  # nobody closes its links before every share-holder has what it needs
    lctx.stop_link()
    np.savez(args.result, labels=labels, centres=np.zeros((0, sum(columns))))


if __name__ == "__main__":
    kmeans.cli(sys.argv[1:], program=main, prog="spu_argmin.py", doc=__doc__)
