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
masked run's labels must equal the unmasked run's and scikit-learn's.

    python bench/secure_kmeans.py [--rows 100000] [--parties 3] [--columns 10] [--json PATH]
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

import ppcsim  # noqa: F401  (before numpy: the settings ppc's own processes run with)
from ppcsim.run.inprocess import simulate_secure
from ppcsim.scenario.load import load_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario, ppc_run  # noqa: E402

from ppcsim.run.launcher import PARTY_ENV  # noqa: E402

CLUSTERS = 8
SECURE = f'algorithm = "kmeans"\nprotocol = "secure_aggregation"\nn_clusters = {CLUSTERS}\n'
MUTUAL = "\n[security]\nmutual = true\n"


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def party_process(path: str, name: str, address: str, masked: bool, out) -> None:
    """One party of the control or the masked run: its own process, real gRPC (plaintext loopback)."""
    from parties.client import CoordinatorClient, GrpcLink
    from parties.keys import KeyPair
    from parties.run import disguise
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

    from coordinator.server import start_server
    from coordinator.servicer import Registry

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--parties", type=int, default=3)
    parser.add_argument("--columns", type=int, default=10, help="columns per party")
    parser.add_argument("--no-processes", action="store_true", help="skip the two `ppc run` rows")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
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
