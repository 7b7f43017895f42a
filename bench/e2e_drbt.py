"""Target 1: a DRBT run end to end against scikit-learn's KMeans alone, in the same invocation.

4 parties, ROWS records, 100 columns (25 each), k = 10 per party, k-means with
8 clusters. Prints the times, their ratios, and where each run's time went:

  end-to-end  `ppc run --no-eval --no-sent` (command start to report written), once with pseudonymous ids
              (the default) and once with plain ids
  kmeans-40   sklearn KMeans (same settings and seed) on the joined ROWS x 40 disguised matrix
  kmeans-100  the same on the raw 100 columns

The disguised matrix is rebuilt here by each party's own code and seed, and
the run's labels must equal KMeans-40's: the same clustering of the same data.
The baselines run with the numpy settings the ppc processes get (see
ppcsim/__init__.py), so the ratios compare work, not allocator settings.
Targets: each run <= 1.3x KMeans-40 and < 1.0x KMeans-100; its k-means phase
<= 1.05x KMeans-40 alone; everything else in it (parties ready, uploads,
join, results) <= 0.35x its k-means phase; pseudonymous <= 1.1x plain; the
coordinator's peak RSS (the `ppc run` process, which hosts it) <= 1.5x the
clustered ROWS x 40 float64 matrix + 250 MiB for the interpreter and its
libraries.

    python bench/e2e_drbt.py [--rows 1000000] [--n-init 10] [--ids pseudonymous plain] [--json PATH]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

import ppcsim  # noqa: F401  (before numpy: the settings ppc's own processes run with)
from parties.data import load_blobs
from parties.run import disguise
from ppcsim.scenario.load import load_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario  # noqa: E402

MIB = 1 << 20


def scenario(rows: int, n_init: int, ids: str = "pseudonymous") -> str:
    return blobs_scenario("bench-e2e", rows, 4, 25, 'method = "drbt"\nk = 10',
                          f'algorithm = "kmeans"\nn_clusters = 8\nn_init = {n_init}') + f'[security]\nids = "{ids}"\n'


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def phases(report: dict) -> dict[str, float]:
    """Where the run's time went, from its report (seconds since the coordinator started)."""
    c = report["timing"]["coordinator"]
    return {"parties ready": c["first_join"],
            "slowest load + disguise": max(p["timing"]["load"] + p["timing"]["disguise"] for p in report["parties"]),
            "uploads": c["uploaded"] - c["first_join"], "join": c["join_seconds"], "k-means": c["cluster_seconds"],
            "results and exit": report["timing"]["total"] - c["done"]}


def one_run(rows: int, n_init: int, ids: str) -> tuple[float, dict, np.ndarray, np.ndarray]:
    """One `ppc run --no-eval --no-sent` with ``ids``: seconds end to end, its report, its labels, and the joined
    matrix rebuilt from the parties' own code and seeds."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(scenario(rows, n_init, ids))
        out = Path(tmp) / "out"
        e2e, proc = timed(lambda: subprocess.run([sys.executable, "-m", "ppcsim", "run", str(path), "--out", str(out),
                                                  "--no-eval", "--no-sent", "--quiet"], capture_output=True, text=True))
        if proc.returncode != 0:
            raise SystemExit(f"ppc run failed:\n{proc.stderr}")
        report = json.loads((out / "report.json").read_text())
        with open(out / "labels.csv", newline="") as fh:
            labels = np.array([int(row["cluster"]) for row in csv.DictReader(fh)])
        # every party holds every id, in the same order: the joined matrix is the parties' blocks side by side
        joined = np.hstack([disguise(cfg).wire_arrays()["data"] for cfg in load_scenario(path).parties])
    return e2e, report, labels, joined


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--ids", nargs="+", choices=("pseudonymous", "plain"), default=["pseudonymous", "plain"],
                        help="the id modes to run, each its own `ppc run` (default both: pseudonymous, the "
                        "scenario default, and plain, which shows what the pseudonyms cost)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    out = Figures("e2e_drbt.py")
    runs = {}
    matrices = []
    for ids in args.ids:
        e2e, report, labels, matrix = one_run(args.rows, args.n_init, ids)
        runs[ids] = (e2e, report, labels)
        matrices = matrices or [matrix]  # the same data whatever the ids: the first is kept
        del matrix
    joined = matrices.pop()
    seed = runs[args.ids[0]][1]["clustering"]["seed"]  # the coordinator's, drawn from the scenario seed
    kmeans = lambda X: KMeans(n_clusters=8, n_init=args.n_init, random_state=seed).fit_predict(X)  # noqa: E731
    t = time.perf_counter()
    labels40 = kmeans(joined)
    k40 = time.perf_counter() - t
    del joined
    raw = load_blobs({"rows": args.rows, "columns": 100, "clusters": 8, "seed": 7}, [f"x{c}" for c in range(100)])
    k100, _ = timed(lambda: kmeans(raw))
    out.add("kmeans-40 s", k40)
    out.add("kmeans-100 s", k100)
    print(f"rows {args.rows:,}, 4 parties x 25 columns -> k = 10 each, k-means 8 clusters, n_init {args.n_init}")
    print(f"sklearn KMeans, 40 dims    {k40:8.2f} s")
    print(f"sklearn KMeans, 100 dims   {k100:8.2f} s")
    same_all = True
    matrix = args.rows * 40 * 8 / MIB  # the clustered float64 matrix, MiB
    for ids, (e2e, report, labels) in runs.items():
        split = phases(report)
        same = bool(np.array_equal(labels, labels40))
        same_all &= same
        beside = split["parties ready"] + split["uploads"] + split["join"] + split["results and exit"]
        print(f"ids {ids}: end-to-end ppc run {e2e:8.2f} s   ("
              + ", ".join(f"{k} {v:.2f}" for k, v in split.items()) + "); labels equal KMeans-40's: "
              + ("yes" if same else "NO"))
        out.add(f"{ids} e2e s", e2e)
        for k, v in split.items():
            out.add(f"{ids} {k} s", v)
        out.check(f"{ids}: e2e / kmeans-40", e2e / k40, "<=", 1.3)
        out.check(f"{ids}: e2e / kmeans-100", e2e / k100, "<", 1.0)
        out.check(f"{ids}: in-run k-means / kmeans-40 alone", split["k-means"] / k40, "<=", 1.05)
        out.check(f"{ids}: not k-means (ready, uploads, join, results) / k-means phase", beside / split["k-means"],
                  "<=", 0.35)
        out.check(f"{ids}: labels equal KMeans-40's", float(same), "==", 1)
        peak = out.add(f"{ids} coordinator peak MiB", report["memory"]["coordinator_peak_rss"] / MIB)
        out.check(f"{ids}: coordinator peak / (1.5 x matrix + 250 MiB)", peak / (1.5 * matrix + 250), "<=", 1)
    if {"pseudonymous", "plain"} <= set(runs):
        out.check("pseudonymous e2e / plain e2e", runs["pseudonymous"][0] / runs["plain"][0], "<=", 1.1)
    for c in out.checks:
        print(f"{c['what']:<70} {c['value']:8.3f}  target {c['target']:<7} {'met' if c['met'] else 'NOT met'}")
    out.write(args.json, f"{args.rows:,} records, n_init {args.n_init}: " + "; ".join(
        f"{ids} ids end to end {runs[ids][0]:.2f} s (k-means phase {out.figures[f'{ids} k-means s']:.2f} s, "
        f"uploads {out.figures[f'{ids} uploads s']:.2f} s, coordinator peak "
        f"{out.figures[f'{ids} coordinator peak MiB']:,.0f} MiB)" for ids in runs)
        + f"; KMeans alone on 40 dims {k40:.2f} s, on 100 dims {k100:.2f} s; labels equal KMeans-40's: "
        + ("yes" if same_all else "NO"))
    return 0 if same_all else 1


if __name__ == "__main__":
    sys.exit(main())
