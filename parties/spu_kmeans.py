"""Lloyd's k-means as a secure multiparty computation on SPU (ABY3): the program each share-holder runs.

SecretFlow's SPU (PyPI ``spu``, Apache-2.0) compiles a numpy-like (jax)
program into a secure one and runs it on three share-holders with ABY3:
replicated secret sharing over the ring Z_2^64, honest majority (any one
share-holder alone learns nothing; passively secure). It needs CPython 3.10
or 3.11, numpy < 2 and a CPU with AVX and AES-NI, so it runs in its own
virtual environment (``ppc spu-env``); this file imports nothing from the
project and is started by path with that environment's interpreter::

    SPU_PYTHON parties/spu_kmeans.py --data IN.npz --result OUT.npz --rank i --party HOST:PORT ...

``--party`` is given once per share-holder, in the MPC's order: this
share-holder's own entry is the address its SPU link listens on, every other
the address it dials to send to that peer (one connection per ordered pair).
``parties.spu_run`` points them at local tunnel ports, so that every byte goes
through the coordinator sealed per pair; ``bench/mpc_engines.py`` also runs
the program on direct loopback links.

The computation is the MPyC program's (parties.mpc_kmeans; reference.md §13):

1. each share-holder with columns secret-shares its own normalised columns of
   the m joined records (three ABY3 shares, made from the operating system's
   entropy, each sent to its holder over the SPU link); the helper inputs
   none; the blocks are stacked into the secret m x D matrix X, with a column
   of ones after it (so that one product gives each cluster's sums and count);
2. the k initial centres are rows ``init`` of X (public positions);
3. rounds r = 0 .. max_iter - 1: the squared distances up to the per-record
   constant ``||x_i||^2``, ``D = ||c_j||^2 - 2 X C^T``, each record's nearest
   centre as a secret one-hot row (the first centre on a tie), and every
   centre moved to the mean of its records (a secure division, ``divide``);
   an empty cluster keeps its centre, obliviously; round max_iter: the last
   assignment;
4. the labels are opened (each share-holder sends its shares of them to the
   others), and the centres if asked; nothing else is ever opened.

The fixed-point type: ``frac`` fractional bits over the ring Z_2^64
(``bits`` <= 64) or Z_2^128. The program writes "round r" to its standard
output as round r begins. With ``--watch-stdin`` it exits as soon as its
standard input closes (the party process that started it died). With
``PPC_SPU_TRACE=1`` in its environment it writes "# trace STEP SECONDS" to its
standard error as each step ends (``trace``).
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import threading
import time

#: The environment variable that, set to 1, makes the program write "# trace STEP UNIX-SECONDS" lines to its
#: standard error as each step ends (interpreter up, SPU imported, programs ready, link up, inputs shared, each
#: round, labels opened, exit), so that a run's time can be split.
TRACE_VARIABLE = "PPC_SPU_TRACE"
TRACING = os.environ.get(TRACE_VARIABLE, "") == "1"


def trace(step: str) -> None:
    """Write ``# trace step seconds`` (wall clock, seconds since the epoch) to standard error if tracing."""
    if TRACING:
        print(f"# trace {step} {time.time():.4f}", file=sys.stderr, flush=True)


trace("interpreter")


def pack(share) -> bytes:
    """One ``libspu.Share`` as bytes: the number of parts (4 bytes), then each part's length (8 bytes) and bytes:
    the meta first, then the chunks."""
    parts = [share.meta, *share.share_chunks]
    return struct.pack("<I", len(parts)) + b"".join(struct.pack("<Q", len(p)) + p for p in parts)


def unpack(data: bytes, libspu):
    """The ``libspu.Share`` that ``pack`` gave ``data``."""
    (n,), at, parts = struct.unpack_from("<I", data), 4, []
    for _ in range(n):
        (size,) = struct.unpack_from("<Q", data, at)
        parts.append(data[at + 8:at + 8 + size])
        at += 8 + size
    share = libspu.Share()
    share.meta, share.share_chunks = parts[0], parts[1:]
    return share


class LazyJaxNumpy:
    """``jax.numpy``, imported at its first use (it takes seconds)."""

    def __getattr__(self, name: str):
        import jax.numpy

        return getattr(jax.numpy, name)


def smallest_factor_bits(frac: int) -> int:
    """The largest ``n`` for which SPU multiplies a secret by the public ``2^-n`` at ``frac`` fractional bits:
    ``frac - 2`` (measured on SPU 0.9.5: a smaller factor makes a value its concatenations refuse, "not all
    element has same dtype")."""
    return frac - 2


def scale_bits(m: int, frac: int) -> tuple[int, int]:
    """``(T, L)`` for ``divide``: every count is below ``2^T`` (``T`` the bit length of ``m``), and a count of bit
    length ``e`` is scaled by ``2^(L-e)`` into ``[2^(L-1), 2^L)``, ``L`` as small as keeps the smallest factor,
    ``2^(L-T)``, one SPU takes (``smallest_factor_bits``)."""
    T = max(int(m).bit_length(), 1)
    return T, max(T - smallest_factor_bits(frac), 0)


def division_table(m: int, frac: int):
    """The public table ``divide`` looks a count up in: row ``n - 1`` for a count n = 1 .. m holds
    ``(F(n), R(n), 0)`` with ``F(n) = 2^(L-e)`` and ``R(n) = 2^e / n``, ``e`` the bit length of n and ``L`` from
    ``scale_bits``, so that ``1/n = F(n) R(n) 2^-L``, ``F(n)`` a power of two and ``R(n)`` in (1, 2] (the fixed
    point keeps its every bit); the last row, for an empty cluster, ``(0, 0, 1)``. A list of m + 1 rows."""
    _, L = scale_bits(m, frac)
    rows = [[2.0 ** (L - n.bit_length()), 2.0 ** n.bit_length() / n, 0.0] for n in range(1, m + 1)]
    return rows + [[0.0, 0.0, 1.0]]


def divide(jnp, E, C, table, m: int, frac: int):
    """Each cluster's mean, ``E[:, :D] / E[:, D]`` (its sums over its count), with an empty cluster's centre
    kept from ``C``: k x D. ``table``: ``division_table(m, frac)``, a public input.

    A count n is an integer from 0 to m (the public number of records). One secure comparison of the k counts
    with 1, 2, ..., m + 1 at once gives the bits ``g_v = [n >= v]``, which fall once, so ``[n = v] = g_v XOR
    g_(v+1)`` and "empty" ``= NOT g_1``: free on boolean shares. Converted to integers in one step, these k
    one-hot rows pick each count's row of the public table in one product with it (a public matrix: no
    message), ``F(n)``, ``R(n)`` and "empty". Then ``sums x F(n)`` (a power of two: the scaled sums keep every
    bit and stay near the mean, so the product's truncation stays far from the ring's top bits) and the kept
    centre ``C x empty`` in one product, times ``R(n)`` in a second, and ``2^-L`` (public; ``L = 0`` below
    2^14 records at 16 fractional bits): ``sums / n`` to the fixed point's precision.

    SPU's general division (``sums / count``) normalises over all 64 bits of the ring: with it, and an equality
    test for the empty clusters, a Lloyd round sent 88 link messages per share-holder (SPU's own profile,
    ``enable_pphlo_profile``); with a power-of-two normalisation from the counts' highest bits and three
    Goldschmidt steps, about 40; with this look-up, 31 to 33. The comparison grows with m (k (m + 1) values
    against the m k (k - 1) / 2 of the nearest centres'), not its messages.
    """
    D = C.shape[1]
    counts = E[:, D]
    g = counts[:, None] >= jnp.arange(1, m + 2, dtype=counts.dtype)[None, :]  # k x (m + 1), boolean shares
    picks = jnp.concatenate([jnp.logical_xor(g[:, :-1], g[:, 1:]), jnp.logical_not(g[:, :1])], axis=1)
    looked = picks.astype(C.dtype) @ table  # k x 3: F(n), R(n) (0, 0 if empty), empty
    factor, ratio, empty = looked[:, 0], looked[:, 1], looked[:, 2]
    Z = jnp.concatenate([E[:, :D], C], axis=1) * jnp.concatenate(
        [jnp.broadcast_to(factor[:, None], (C.shape[0], D)), jnp.broadcast_to(empty[:, None], C.shape)], axis=1)
    Y = Z[:, :D] * ratio[:, None]
    _, L = scale_bits(m, frac)
    while L > 0:  # 2^14 records or more at 16 fractional bits
        shift = min(L, smallest_factor_bits(frac))
        Y, L = Y * 2.0 ** -shift, L - shift
    return Y + Z[:, D:]


def one_hot_nearest(jnp, D, dtype):
    """Each row's smallest column of the secret m x k ``D`` as a one-hot row of type ``dtype`` (the first on a
    tie): every pair of columns compared at once (one secure comparison of m x k(k-1)/2 values, not one per
    tournament match in turn), then column j's entry the AND of its k - 1 wins (``D_j <= D_b`` for each b
    after j, not ``D_a <= D_j`` for each a before it), ceil(log2(k - 1)) rounds of ANDs of bits. The bits and
    their negations stay boolean shares (a NOT is free) and only the one-hot rows become arithmetic shares, in
    one conversion: converted first, every use of the 0/1 integers was converted again (a k-means round sent
    51 link messages instead of 38)."""
    k = D.shape[1]
    if k == 1:
        return jnp.ones((D.shape[0], 1), dtype=dtype)
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    # for column j, the columns of [D_a <= D_b for every pair a < b, then their negations] that say j wins
    wins = [[pairs.index((j, b)) if j < b else len(pairs) + pairs.index((b, j)) for b in range(k) if b != j]
            for j in range(k)]
    le = (jnp.stack([D[:, a] for a, _ in pairs], axis=1)
          <= jnp.stack([D[:, b] for _, b in pairs], axis=1))  # static slices, no gather
    both = jnp.concatenate([le, jnp.logical_not(le)], axis=1)
    F = jnp.stack([jnp.stack([both[:, w] for w in row], axis=1) for row in wins], axis=1)  # m x k x (k - 1)
    while F.shape[2] > 1:
        h = F.shape[2] // 2
        F = jnp.concatenate([jnp.logical_and(F[:, :, :h], F[:, :, h:2 * h]), F[:, :, 2 * h:]], axis=2)
    return F[:, :, 0].astype(dtype)


def programs(k: int, rounds: int, init: list[int], m: int, frac: int):
    """The jax functions compiled to SPU: stack the blocks (and a column of ones) and take the initial
    centres; one Lloyd round (an assignment and an update); the last assignment (labels). ``m``: the number of
    records, public (it bounds every count, ``divide``); ``frac``: the fixed-point type's fractional bits.
    jax is imported as they are traced, only when a program is compiled, not when it comes from the cache
    (``compiler``)."""
    jnp = LazyJaxNumpy()

    def start(*blocks):
        X = jnp.hstack(blocks) if len(blocks) > 1 else blocks[0]
        ones = X[:, :1] * 0.0 + 1.0  # a secret column like X's own (a concatenation takes one type)
        return jnp.concatenate([X, ones], axis=1), X[jnp.asarray(init)]

    def nearest(X, C):
        """Each record's nearest centre as a one-hot row (``one_hot_nearest``) from its squared distances, times
        ``2^frac``: ``X C^T`` and ``C C^T`` in one product of the fixed point's own integers (``view``: the same
        shares, read as integers) with ``C``, which needs no truncation, as an integer times a fixed-point value
        does not (a product of two fixed-point values is truncated back to ``frac`` bits, two link messages more
        a round); the values are those the truncation would have cut, so they fit the ring as well."""
        P = jnp.concatenate([X, C], axis=0).view(jnp.int32) @ C.T
        m_ = X.shape[0]
        squares = jnp.stack([P[m_ + j, j] for j in range(k)])  # ||c_j||^2, static slices (no gather)
        # less ||x_i||^2 (no argmin changes); 2 x_i.c_j as a sum, since a product with the public 2.0 is truncated
        return one_hot_nearest(jnp, squares[None, :] - (P[:m_] + P[:m_]), X.dtype)

    def assign(Xe, C):
        return nearest(Xe[:, :-1], C) @ jnp.arange(k, dtype=Xe.dtype)  # the label of each one-hot row

    def update(Xe, C, table):
        U = nearest(Xe[:, :-1], C)  # m x k one-hot
        return divide(jnp, U.T @ Xe, C, table, m, frac)  # U^T [X 1]: each cluster's sums and count

    return start, update, assign


def spu_modules():
    """Import SPU's runtime (and numpy) from the SPU environment, without jax: ``(np, api, libspu)``. Run by path,
    this file's folder (the project's parties/) must first leave ``sys.path``, so that it shadows none of that
    environment's own modules. The ``spu`` package's ``__init__`` imports jax (seconds); the runtime, its I/O and
    its link need only ``spu.libspu`` and ``spu.api``, so the package is entered without it; ``compiler`` imports
    jax only when a program is not in the cache."""
    import importlib.util
    import types

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    import numpy as np

    if "spu" not in sys.modules:
        found = importlib.util.find_spec("spu")
        if found is None or not found.submodule_search_locations:
            raise SystemExit("SPU is not installed in this environment")
        package = types.ModuleType("spu")
        package.__path__ = list(found.submodule_search_locations)
        sys.modules["spu"] = package
    import spu.api as api
    import spu.libspu as libspu

    return np, api, libspu


#: The environment variable naming the folder of compiled SPU programs (default: ppc-sim/spu-programs in the
#: user's cache folder); "off" compiles every time.
CACHE_VARIABLE = "PPC_SPU_CACHE"


def cache_folder() -> str | None:
    """Where compiled programs are kept: ``PPC_SPU_CACHE``, else ``$XDG_CACHE_HOME/ppc-sim/spu-programs``; None
    if ``PPC_SPU_CACHE`` is "off"."""
    named = os.environ.get(CACHE_VARIABLE, "")
    if named == "off":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return named or os.path.join(base, "ppc-sim", "spu-programs")


def compiler(np, libspu, source: str):
    """A function compiling a jax function to SPU for public input shapes, named inputs (secret, or public if
    named in ``public``) and named outputs: ``compiled(fn, shapes, inputs, outputs, key, public)``. A program is
    kept in ``cache_folder()`` under a SHA-256 of ``source`` (the calling program's text, which defines ``fn``),
    SPU's version, ``key`` (every public parameter ``fn`` closes over: k, the initial positions), the shapes, the
    names and which inputs are public, so a later run with the same public settings skips jax's import and the
    compilation; the programs hold public shapes and positions only, never data."""
    import hashlib

    from spu.version import __version__

    folder = cache_folder()

    def compiled(fn, shapes, inputs, outputs, key="", public=()):
        digest = hashlib.sha256(repr((__version__, source, fn.__name__, key, [tuple(s) for s in shapes], inputs,
                                      outputs, sorted(public))).encode()).hexdigest()
        path = os.path.join(folder, digest + ".spu") if folder else None
        if folder is not None and path is not None and os.path.exists(path):
            executable = libspu.Executable()
            with open(path, "rb") as cached:
                if executable.ParseFromString(cached.read()):
                    return executable
        from spu.utils import frontend  # imports jax: seconds

        executable, _ = frontend.compile(frontend.Kind.JAX, fn, [np.zeros(s) for s in shapes], {}, inputs,
                                         [libspu.Visibility.VIS_PUBLIC if name in public else libspu.Visibility.VIS_SECRET
                                          for name in inputs], lambda flat: outputs)
        if folder is not None and path is not None:
            try:
                os.makedirs(folder, exist_ok=True)
                partial = f"{path}.{os.getpid()}"
                with open(partial, "wb") as out:
                    out.write(executable.SerializeToString())
                os.replace(partial, path)  # whole or not at all, with another share-holder writing the same
            except OSError:
                pass  # a cache that cannot be written only costs the next run the compilation
        return executable

    return compiled


def source_of(*files: str) -> str:
    """The text of ``files`` (the programs that define what is compiled), for the cache's key."""
    out = []
    for name in files:
        with open(name, encoding="utf-8") as f:
            out.append(f.read())
    return "\n".join(out)


def connect(args, api, libspu, bits: int, frac: int):
    """This share-holder's SPU link (brpc, one connection per ordered pair, at the ``--party`` addresses) and an
    ABY3 runtime and I/O over it: ``(lctx, runtime, io)``."""
    n, me = len(args.party), args.rank
    desc = libspu.link.Desc()
    desc.id = args.link_id  # the same at every share-holder: it names the messages
    for i, address in enumerate(args.party):
        desc.add_party(f"p{i}", address)
    desc.brpc_channel_protocol = "baidu_std"
    desc.brpc_channel_connection_type = "single"  # one connection per ordered pair of share-holders
    desc.connect_retry_interval_ms = 100
    desc.connect_retry_times = max(int(args.timeout * 10), 1)
    desc.recv_timeout_ms = int(args.timeout * 1000)
    desc.http_timeout_ms = int(args.timeout * 1000)
    desc.http_max_payload_size = 1 << 22
    # yacl numbers each message and answers it with an acknowledgement, a message of its own (and brpc's response
    # to that): half of all the frames the relay carried, for a duplicate check and a send window this link does
    # not need (the tunnel delivers every frame once, in order, or fails the MPC). Without the numbers no
    # acknowledgement is sent, so every send must be asynchronous (yacl refuses a synchronous one).
    desc.disable_msg_seq_id = True

    config = libspu.RuntimeConfig()
    config.protocol = libspu.ProtocolKind.ABY3
    config.field = libspu.FieldType.FM64 if bits <= 64 else libspu.FieldType.FM128
    config.fxp_fraction_bits = frac
    lctx = libspu.link.create_brpc(desc, me)
    return lctx, api.Runtime(lctx, config), api.Io(n, config)


def share(lctx, runtime, io, libspu, name: str, owner: int, value=None) -> None:
    """Set the secret variable ``name``, input by share-holder ``owner``: the owner splits ``value`` into the three
    ABY3 shares and sends each other holder its own over the link; the others receive theirs."""
    me, n = lctx.rank, lctx.world_size
    if owner == me:
        shares = io.make_shares(value, libspu.Visibility.VIS_SECRET)
        for j in range(n):
            if j != me:
                lctx.send_async(j, pack(shares[j]))
        runtime.set_var(name, shares[me])
    else:
        runtime.set_var(name, unpack(lctx.recv(owner), libspu))


def reveal(lctx, runtime, io, libspu, np, name: str):
    """Open the secret variable ``name`` to every share-holder: each sends its shares of it to the others."""
    me, n = lctx.rank, lctx.world_size
    mine = runtime.get_var(name)
    for j in range(n):
        if j != me:
            lctx.send_async(j, pack(mine))
    shares = [mine if j == me else unpack(lctx.recv(j), libspu) for j in range(n)]
    return np.asarray(io.reconstruct(shares))


def main(args) -> None:
    np, api, libspu = spu_modules()
    trace("imported")
    data = np.load(args.data)
    X_own = np.asarray(data["X"], dtype=np.float64)
    columns, init = [int(c) for c in data["columns"]], [int(i) for i in data["init"]]
    k, rounds, bits, frac = (int(data[key]) for key in ("k", "rounds", "bits", "frac"))
    m, reveal_centres = int(data["m"]), bool(data["reveal_centres"])
    n, me = len(args.party), args.rank
    if n != 3:
        raise SystemExit(f"ABY3 needs three share-holders, got {n}")

    # 0. compile first (it needs only the public shapes), while the peers start: three programs, run in turn
    names = [f"block{p}" for p, d in enumerate(columns) if d]
    start, update, assign = programs(k, rounds, init, m, frac)
    compiled = compiler(np, libspu, source_of(os.path.abspath(__file__)))
    D = sum(columns)
    run_start = compiled(start, [(m, d) for d in columns if d], names, ["X", "C"], repr((k, init)))
    run_update = compiled(update, [(m, D + 1), (k, D), (m + 1, 3)], ["X", "C", "table"], ["C"], repr((k, m, frac)),
                          public=("table",))
    run_assign = compiled(assign, [(m, D + 1), (k, D)], ["X", "C"], ["labels"], repr(k))
    trace("compiled")
    args.go.wait()  # --wait-go: the party has confirmed the session
    trace("go")
    lctx, runtime, io = connect(args, api, libspu, bits, frac)
    trace("linked")

    # 1. input: every share-holder with columns shares them; the share for holder j goes to j over the link
    for p, d in enumerate(columns):
        if d:
            # float32 in: SPU types a secret by its input's dtype, and the program's constants are float32 (jax's
            # default), which one concatenation must match; the fixed-point encoding (frac bits) is the same
            share(lctx, runtime, io, libspu, f"block{p}", p, X_own.astype(np.float32) if p == me else None)
    runtime.run(run_start)
    # the division's public table: the same at every share-holder, made by each (nothing crosses a link)
    runtime.set_var("table", io.make_shares(np.asarray(division_table(m, frac), dtype=np.float32),
                                            libspu.Visibility.VIS_PUBLIC)[me])
    trace("shared")
    for r in range(rounds + 1):
        print(f"round {r}", flush=True)
        runtime.run(run_update if r < rounds else run_assign)
        trace(f"round{r}")

    # 4. open: every share-holder sends its shares of the labels (and centres) to the others
    labels = np.rint(reveal(lctx, runtime, io, libspu, np, "labels")).astype(np.int32)
    centres = (reveal(lctx, runtime, io, libspu, np, "C").astype(np.float64) if reveal_centres
               else np.zeros((0, sum(columns))))
    trace("opened")
    lctx.barrier()  # nobody closes its links before every share-holder has what it needs
    lctx.stop_link()
    np.savez(args.result, labels=labels, centres=centres)
    trace("written")


def warm_argv() -> list[str]:
    """``--warm`` alone: the program was started before its MPC's parameters were known (parties.spu_run.Warm).
    Import SPU's runtime now, then read the rest of the command line from standard input, one line holding a JSON
    list; exit if standard input ends first (the party refused the session, or died, before the MPC began)."""
    spu_modules()
    trace("warm")
    line = b""
    while not line.endswith(b"\n"):  # unbuffered: what follows the line ("go") is for --wait-go's reader
        byte = os.read(0, 1)
        if not byte:
            os._exit(3)
        line += byte
    return [str(a) for a in json.loads(line)]


def cli(argv: list[str] | None = None, program=None, prog: str = "spu_kmeans.py", doc: str | None = None) -> None:
    """Parse the command line (``--warm`` alone: ``warm_argv``) and run ``program`` (by default this file's
    ``main``) on it; with ``--watch-stdin`` exit as soon as standard input closes; print the program's seconds at
    the end."""
    parser = argparse.ArgumentParser(prog=prog, description=(doc or __doc__).splitlines()[0],
                                     epilog="--warm alone: import SPU's runtime first, then read the rest of the "
                                            "command line from standard input (one line, a JSON list)")
    parser.add_argument("--data", required=True, help="npz: X, columns, init, k, rounds, bits, frac, m, reveal_centres")
    parser.add_argument("--result", required=True, help="npz written at the end: labels (and centres)")
    parser.add_argument("--rank", type=int, required=True, help="this share-holder's index in the MPC's order")
    parser.add_argument("--party", action="append", required=True, help="HOST:PORT of each share-holder, in order")
    parser.add_argument("--link-id", default="ppc-spu", help="the MPC's name, the same at every share-holder")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a link waits for a message")
    parser.add_argument("--watch-stdin", action="store_true", help="exit when standard input closes (the parent died)")
    parser.add_argument("--wait-go", action="store_true",
                        help="read a line from standard input before connecting to the peers (the party confirms "
                             "the session first; the program imports and compiles meanwhile)")
    args = parser.parse_args(warm_argv() if argv == ["--warm"] else argv)
    finished = threading.Event()
    args.go = threading.Event()
    if not args.wait_go:
        args.go.set()
    if args.watch_stdin or args.wait_go:
        def watch() -> None:
            try:
                if args.wait_go:
                    with os.fdopen(0, "rb", closefd=False) as stdin:
                        if stdin.readline().strip() == b"go":
                            args.go.set()
                        else:
                            os._exit(3)  # the party refused the session, or died, before any share existed
                while os.read(0, 4096):
                    pass
            except OSError:
                return
            if args.watch_stdin and not finished.is_set():
                os._exit(3)

        threading.Thread(target=watch, name="watch-parent", daemon=True).start()
    t = time.perf_counter()
    (program or main)(args)
    finished.set()
    print(f"seconds {time.perf_counter() - t:.3f}", flush=True)
    sys.stderr.flush()
    os._exit(0)  # the result is written: skip the link library's teardown at exit (about a second)


if __name__ == "__main__":
    cli(sys.argv[1:])
