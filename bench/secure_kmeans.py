"""Target: secure-aggregation k-means costs at most 1.3x the same rounds with masking switched off.

ROWS records of synthetic blobs, PARTIES parties of COLUMNS columns each,
k-means with 8 clusters from the same k initial records. In this one run:

  masked     the secure rounds, each party its own process talking gRPC to a coordinator in this process
             (loopback): fixed point, AES-256-CTR masks, sums modulo 2^64
  unmasked   the same rounds with no mask added (a control only this benchmark can select: the session
             allows it and each party is told so by a function argument)
  sklearn    scikit-learn's KMeans (Lloyd, n_init = 1, tol = 0) on the joined normalised data from the same records
  ppc run    the masked session end to end as separate processes over mutual TLS (`ppc run --no-eval`)
  drbt       a DRBT session of the same data end to end (`ppc run --no-eval --no-sent`, k = 5 per party)

and the seconds the parties spent on masks and on fixed-point encoding. The
masked run's labels must equal the unmasked run's and scikit-learn's. These
are the rounds in which the arbiter reads the summed distances
(``reveal = "distances"``).

With ``--labels-only`` it measures instead the default mode, in which only
the labels are opened, side by side with the others in one run, each a
`ppc run` of the same data (``--rows 1000 --parties 3 --columns 2
--clusters 4 --rounds 10`` are the targets' sizes):

  labels         secure aggregation opening the labels only: each round an MPC argmin (MPyC) over the parties'
                 secret-shared partial distances, relayed sealed through the coordinator
  labels-Nbit    the same at mpc_bits = N, the fewest the data need (fewest_bits; --bits N to choose)
  labels-spu     the same argmin on SPU (ABY3; engine = "spu")
  mpc            k-means as a full MPC (MPyC), exactly --rounds updates
  mpc-spu        the full MPC on SPU
  distances      secure aggregation in which the arbiter reads the summed distances (masked posts)

With --cold-spu each SPU way runs twice, first with an empty cache of
compiled SPU programs ("cold": jax imported, the programs compiled), then
again (the cache filled). Targets: every labels-only run's labels equal
scikit-learn's Lloyd's from the same initial records (its report's
``utility.labels_equal_same_init``); its bytes and its time at most a tenth
of the full MPC's, checked against the full MPC on the same engine and
against the default full MPC (MPyC). The load average is printed with the
figures (``os.getloadavg``).

    python bench/secure_kmeans.py [--rows 100000] [--parties 3] [--columns 10] [--json PATH]
    python bench/secure_kmeans.py --labels-only [--rows 1000] [--parties 3] [--columns 2] [--cold-spu] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from ppcsim.cli.entry import process_settings
from ppcsim.run.inprocess import simulate_secure
from ppcsim.scenario.load import load_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario, ppc_run  # noqa: E402

from ppcsim.run.launcher import PARTY_ENV  # noqa: E402

process_settings()  # ppc's process settings: this process's allocator, and what the processes it starts inherit

CLUSTERS = 8
SECURE = f'algorithm = "kmeans"\nprotocol = "secure_aggregation"\nreveal = "distances"\nn_clusters = {CLUSTERS}\n'
MUTUAL = "\n[security]\nmutual = true\n"


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def party_process(path: str, name: str, address: str, masked: bool, out) -> None:
    """One party of the control or the masked run: its own process, real gRPC (plaintext loopback)."""
    from parties.client import CoordinatorClient, GrpcLink
    from parties.disguise import disguise
    from parties.keys import KeyPair
    from parties.secagg import secure_party

    scenario = load_scenario(path)
    cfg = scenario.party(name)
    done = disguise(cfg)
    pair = KeyPair.generate()
    client = CoordinatorClient(address, scenario.name, name, None, tls=False)
    reply = client.join(600, pair.public)
    result = secure_party(GrpcLink(client, lambda: 600.0), lambda messages: client.upload(messages, timeout=600),
                          client.peers(600), pair, done.X, done.data.ids, scenario.name, name,
                          len(done.data.columns), reply.chunk_bytes, masked=masked, log=open(os.devnull, "w"))
    client.result(600)
    client.close()
    out.put((name, result.timing))


def processes_run(path: Path, masked: bool) -> tuple[float, object, dict]:
    """The rounds with every party in its own process: seconds of rounds (the arbiter's clock, alignment to
    result), the session, each party's timing."""
    import multiprocessing
    from dataclasses import replace

    from coordinator.registry import Registry
    from coordinator.server import start_server

    scenario = load_scenario(path)
    registry = Registry()
    session = registry.create(replace(scenario.session_spec(), ids="plain", allow_unmasked=not masked, mutual=False,
                                      name=scenario.name))
    server, port = start_server("127.0.0.1:0", registry)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    procs = [context.Process(target=party_process, args=(str(path), p.name, f"127.0.0.1:{port}", masked, queue))
             for p in scenario.parties]
    for p in procs:
        p.start()
    timing = dict(queue.get(timeout=3600) for _ in procs)
    for p in procs:
        p.join()
    server.stop(grace=1.0)
    session.wait(0)
    arbiter = session.arbiter
    seconds = sum(r.seconds for r in arbiter.seeding_records + arbiter.records)
    return seconds, session, timing


def relayed_bytes(report: dict) -> int:
    """Payload up and down of every party (and the helper's frames, an MPC's), as the ledger counted it."""
    comm = report["communication"]
    counted = [comm["totals"], *([comm["helper"]] if "helper" in comm else [])]  # the helper's, outside the totals
    return sum(t["up"]["payload"] + t["down"]["payload"] for t in counted)


#: The ways --labels-only runs, in order: protocol, engine, and the [clustering] lines beyond k and max_iter.
WAYS = {"labels": ("secure_aggregation", "mpyc", 'reveal = "labels"'),
        "labels-spu": ("secure_aggregation", "spu", 'reveal = "labels"\nengine = "spu"'),
        "mpc": ("mpc", "mpyc", ""),
        "mpc-spu": ("mpc", "spu", 'engine = "spu"'),
        "distances": ("secure_aggregation", "", 'reveal = "distances"')}


def fewest_bits(rows: int, parties: int, columns: int, clusters: int, frac: int) -> int:
    """The fewest bits SecInt(l) needs for the labels-only argmin of the bench's blobs, by the bound the argmin's
    program enforces (parties.secagg_argmin.encode: every party's partial distance |D_p| below 2^(l - f - 2) / P):
    |D_p[i, j]| = | ||c_j||^2 - 2 x_i . c_j | <= 3 max_i ||x_i||^2 over the party's own columns (a centre is a
    mean of rows, so ||c_j|| <= max_i ||x_i||), plus one bit of margin; at least f + 8 (the loader's rule)."""
    text = blobs_scenario("bench-bits", rows, parties, columns, "", SECURE.replace(f"= {CLUSTERS}", f"= {clusters}"),
                          clusters=clusters)
    with tempfile.TemporaryDirectory(prefix="ppc-bench-") as tmp:
        path = Path(tmp) / "s.toml"
        path.write_text(text)
        scenario = load_scenario(path)
        _, _, own = simulate_secure(scenario, masked=False)
    top = max(3.0 * float(np.max(np.sum(own[p.name].X ** 2, axis=1))) for p in scenario.parties)
    return max(frac + 8, frac + 3 + int(np.ceil(np.log2(parties * top))))


def labels_only(args) -> None:
    """Labels-only secure aggregation and the full MPC, each on MPyC and on SPU, and the distances mode, on the
    same data, in this one run."""
    found = {}
    ways = {name: way for name, way in WAYS.items() if args.spu or way[1] != "spu"}
    bits = fewest_bits(args.rows, args.parties, args.columns, args.clusters, args.frac) if args.bits == 0 else args.bits
    if bits > 0:
        print(f"the MPyC argmin at mpc_bits = {bits}, mpc_frac = {args.frac} too", flush=True)
        ways = {**{"labels": ways["labels"], f"labels-{bits}bit": ("secure_aggregation", "mpyc",
                                                                 f'reveal = "labels"\nmpc_bits = {bits}\n'
                                                                      f'mpc_frac = {args.frac}')},
                **{k: v for k, v in ways.items() if k != "labels"}}
    runs = [(name, way) for name, way in ways.items()]
    if args.cold_spu:  # each SPU way first with no compiled program kept: that run compiles and fills the cache
        os.environ["PPC_SPU_CACHE"] = tempfile.mkdtemp(prefix="ppc-bench-spu-cache-")
        runs = [run for name, way in runs for run in ([(f"{name} cold", way)] if way[1] == "spu" else []) + [(name, way)]]
    for name, (protocol, _engine, extra) in runs:
        text = blobs_scenario(f"bench-{name.split()[0]}", args.rows, args.parties, args.columns, "",
                              f'algorithm = "kmeans"\nprotocol = "{protocol}"\nn_clusters = {args.clusters}\n'
                              f"max_iter = {args.rounds}\n{extra}\n"
                              + ("helper = true\n" if name != "distances" and args.parties == 2 else ""),
                              clusters=args.clusters) + MUTUAL
        seconds, report = ppc_run(text, "--no-attacks")
        coord = report["timing"]["coordinator"]
        joined = max(e["time"] for e in report["communication"]["ledger"] if e["rpc"] == "Join" and e["direction"] == "up")
        secure = report.get("secure_aggregation") or {}
        found[name] = {"wall": seconds, "protocol": coord["done"] - joined, "bytes": relayed_bytes(report),
                       "rounds": (secure or report["mpc"])["rounds"],
                       "model": all(p["exact"] for p in secure.get("by_party", {}).values()) if secure else None,
                       "equal": report["utility"]["labels_equal_same_init"], "load": os.getloadavg()[0]}
        f = found[name]
        model = "" if f["model"] is None else f"; cost model {'holds' if f['model'] else 'MISSED'}"
        print(f"{name:14s} {f['protocol']:8.2f} s (whole run {f['wall']:7.2f} s) {f['bytes']:>13,} B  {f['rounds']} "
              f"rounds; labels {'equal to' if f['equal'] else 'DIFFER from'} scikit-learn's from the same records"
              f"{model}; load {f['load']:.1f}", flush=True)
    out = Figures("secure_kmeans.py")
    for name, f in found.items():
        out.add(f"{name} s", f["protocol"])
        out.add(f"{name} whole run s", f["wall"])
        out.add(f"{name} bytes", f["bytes"])
        out.add(f"{name} rounds", f["rounds"])
    out.add("load average", max(f["load"] for f in found.values()))
    mpc = found["mpc"]
    summary = []
    for name in [n for n in found if n.startswith("labels") and not n.endswith(" cold")]:
        lab = found[name]
        engine = ways[name][1]
        same = found.get("mpc-spu" if engine == "spu" else "mpc")
        pairs = [("mpc", mpc)] + ([("mpc-spu", same)] if engine == "spu" and same else [])
        for against, ref in pairs:
            b, t = lab["bytes"] / ref["bytes"], lab["protocol"] / ref["protocol"]
            print(f"{name} / {against}: bytes {b:.3f}x, time {t:.3f}x (targets <= 0.1x: bytes "
                  f"{'met' if b <= 0.1 else 'NOT met'}, time {'met' if t <= 0.1 else 'NOT met'})", flush=True)
            out.check(f"{name} bytes / {against} bytes", b, "<=", 0.1)
            out.check(f"{name} time / {against} time", t, "<=", 0.1)
            summary.append(f"{name}/{against} {b:.3f}x B, {t:.3f}x s")
        out.check(f"{name} labels equal scikit-learn's", float(lab["equal"]), "==", 1)
    out.write(args.json, f"{args.rows:,} records, {args.parties} parties, k = {args.clusters}, {args.rounds} rounds, "
              f"load {max(f['load'] for f in found.values()):.1f}: " + "; ".join(summary))
    if not all(f["equal"] for n, f in found.items() if n.startswith("labels")):
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=None, help="records (default 100,000; 1,000 with --labels-only)")
    parser.add_argument("--parties", type=int, default=3)
    parser.add_argument("--columns", type=int, default=None, help="columns per party (default 10; 2 with --labels-only)")
    parser.add_argument("--no-processes", action="store_true", help="skip the two `ppc run` rows")
    parser.add_argument("--labels-only", action="store_true",
                        help="the labels-only mode beside the distances mode and the full MPC (see above)")
    parser.add_argument("--clusters", type=int, default=4, help="--labels-only: k")
    parser.add_argument("--rounds", type=int, default=10, help="--labels-only: max_iter of every way")
    parser.add_argument("--no-spu", dest="spu", action="store_false",
                        help="--labels-only: leave out the SPU rows (they need `ppc spu-env`)")
    parser.add_argument("--bits", type=int, default=0, help="--labels-only: also the MPyC argmin at mpc_bits = BITS "
                        "(0: the fewest the data need, see fewest_bits; -1: none)")
    parser.add_argument("--frac", type=int, default=16, help="--labels-only: mpc_frac of the --bits row")
    parser.add_argument("--cold-spu", action="store_true",
                        help="--labels-only: run each SPU way twice, first with an empty cache of compiled programs")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    if args.labels_only:
        args.rows, args.columns = args.rows or 1_000, args.columns or 2
        labels_only(args)
        return
    args.rows, args.columns = args.rows or 100_000, args.columns or 10
    text = blobs_scenario("bench-secure", args.rows, args.parties, args.columns, "", SECURE, clusters=CLUSTERS) + MUTUAL
    with tempfile.TemporaryDirectory(prefix="ppc-bench-") as tmp:
        path = Path(tmp) / "s.toml"
        path.write_text(text)
        scenario = load_scenario(path)
        print(f"{args.rows:,} records, {args.parties} parties x {args.columns} columns, k-means with {CLUSTERS} "
              "clusters", flush=True)
        # one BLAS thread per party, as `ppc run` gives each party process (launcher.PARTY_ENV)
        os.environ.update(PARTY_ENV)
        t_unmasked, control, _ = processes_run(path, masked=False)
        t_masked, session, timing = processes_run(path, masked=True)
        with threadpool_limits(limits=1, user_api="blas"):
            _, _, own = simulate_secure(scenario, masked=False)  # the parties' normalised data, for scikit-learn
    X = np.hstack([own[p.name].X for p in scenario.parties])
    init = session.arbiter.init
    t_sklearn, km = timed(lambda: KMeans(CLUSTERS, init=X[init], n_init=1, tol=0.0, algorithm="lloyd").fit(X))
    assert np.array_equal(session.outcome.labels, control.outcome.labels), "masked and unmasked labels differ"
    same = np.array_equal(session.outcome.labels, km.labels_)
    n_rounds = len(session.arbiter.records)
    masks = max(t["masks"] for t in timing.values())
    encode = max(t["encode"] for t in timing.values())
    print(f"masked    {t_masked:7.2f} s  {n_rounds} rounds ({t_masked / n_rounds * 1e3:.1f} ms a round, parties in "
          f"their own processes); slowest party's masks {masks:.2f} s, fixed-point encoding {encode:.2f} s")
    print(f"unmasked  {t_unmasked:7.2f} s  {len(control.arbiter.records)} rounds (control: no masks)")
    print(f"sklearn   {t_sklearn:7.2f} s  {km.n_iter_} iterations; labels "
          + ("equal to the secure run's" if same else "DIFFER from the secure run's"))
    if not args.no_processes:
        t_run, report = ppc_run(text, "--no-eval")
        print(f"ppc run   {t_run:7.2f} s  secure, separate processes over mutual TLS, "
              f"{report['secure_aggregation']['rounds']} rounds")
        drbt = blobs_scenario("bench-drbt", args.rows, args.parties, args.columns, 'method = "drbt"\nk = 5',
                              f'algorithm = "kmeans"\nn_clusters = {CLUSTERS}\nn_init = 1') + MUTUAL
        t_drbt, _ = ppc_run(drbt, "--no-eval", "--no-sent")
        print(f"drbt      {t_drbt:7.2f} s  one upload of k = 5 per party, k-means with n_init = 1")
    ratio = t_masked / t_unmasked
    print(f"masked / unmasked: {ratio:.2f}x (target <= 1.3x: {'met' if ratio <= 1.3 else 'NOT met'}); "
          f"masked / sklearn: {t_masked / t_sklearn:.1f}x")
    out = Figures("secure_kmeans.py")
    out.add("masked s", t_masked)
    out.add("unmasked s", t_unmasked)
    out.add("sklearn s", t_sklearn)
    out.add("rounds", n_rounds)
    out.check("masked / unmasked", ratio, "<=", 1.3)
    out.check("labels equal scikit-learn's", float(same), "==", 1)
    out.write(args.json, f"{args.rows:,} records, {n_rounds} rounds: masked {t_masked:.2f} s, unmasked "
              f"{t_unmasked:.2f} s (slowest party's masks {masks:.2f} s, encoding {encode:.2f} s); scikit-learn "
              f"{t_sklearn:.2f} s, labels " + ("equal" if same else "DIFFER"))
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
