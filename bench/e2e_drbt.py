"""Target 1: a DRBT run end to end against scikit-learn's KMeans alone, in the same invocation.

4 parties, ROWS records, 100 columns (25 each), k = 10 per party, k-means with
8 clusters. Prints three times, two ratios, and where the run's time went:

  end-to-end  `ppc run --no-eval --no-sent` (command start to report written)
  kmeans-40   sklearn KMeans (same settings and seed) on the joined ROWS x 40 disguised matrix
  kmeans-100  the same on the raw 100 columns

The disguised matrix is rebuilt here by each party's own code and seed, and
the run's labels must equal KMeans-40's: the same clustering of the same data.
The baselines run with the numpy settings the ppc processes get (see
ppcsim/__init__.py), so the ratios compare work, not allocator settings.

    python bench/e2e_drbt.py [--rows 1000000] [--n-init 10] [--ids pseudonymous|plain]
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
from ppcsim.scenario import load_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import blobs_scenario  # noqa: E402


def scenario(rows: int, n_init: int, ids: str = "pseudonymous") -> str:
    return blobs_scenario("bench-e2e", rows, 4, 25, 'method = "drbt"\nk = 10',
                          f'algorithm = "kmeans"\nn_clusters = 8\nn_init = {n_init}') + f'[security]\nids = "{ids}"\n'


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def phases(report: dict) -> str:
    """Where the run's time went, from its report (seconds since the coordinator started)."""
    c = report["timing"]["coordinator"]
    party = max(p["timing"]["load"] + p["timing"]["disguise"] for p in report["parties"])
    return (f"parties ready {c['first_join']:.2f} (slowest load + disguise {party:.2f}), "
            f"uploads {c['uploaded'] - c['first_join']:.2f}, join {c['join_seconds']:.2f}, "
            f"k-means {c['cluster_seconds']:.2f}, results and exit {report['timing']['total'] - c['done']:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--ids", choices=("pseudonymous", "plain"), default="pseudonymous",
                        help="how record ids travel (default: pseudonymous, the scenario default; plain shows what "
                        "the parties' HMAC pseudonyms cost)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(scenario(args.rows, args.n_init, args.ids))
        out = Path(tmp) / "out"
        e2e, proc = timed(lambda: subprocess.run([sys.executable, "-m", "ppcsim", "run", str(path), "--out", str(out),
                                                  "--no-eval", "--no-sent", "--quiet"], capture_output=True, text=True))
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        report = json.loads((out / "report.json").read_text())
        with open(out / "labels.csv", newline="") as fh:
            run_labels = np.array([int(row["cluster"]) for row in csv.DictReader(fh)])
        # every party holds every id, in the same order: the joined matrix is the parties' blocks side by side
        joined = np.hstack([disguise(cfg).wire_arrays()["data"] for cfg in load_scenario(path).parties])
    seed = report["clustering"]["seed"]  # the coordinator's, drawn from the scenario seed
    kmeans = lambda X: KMeans(n_clusters=8, n_init=args.n_init, random_state=seed).fit_predict(X)  # noqa: E731
    k40, labels40 = timed(lambda: kmeans(joined))  # noqa: F821 - joined is deleted only after this call
    del joined
    raw = load_blobs({"rows": args.rows, "columns": 100, "clusters": 8, "seed": 7}, [f"x{c}" for c in range(100)])
    k100, _ = timed(lambda: kmeans(raw))
    same = np.array_equal(run_labels, labels40)
    print(f"rows {args.rows:,}, 4 parties x 25 columns -> k = 10 each, k-means 8 clusters, n_init {args.n_init}, "
          f"ids {args.ids}")
    print(f"end-to-end ppc run         {e2e:8.2f} s   ({phases(report)})")
    print(f"sklearn KMeans, 40 dims    {k40:8.2f} s   (labels equal the run's: {'yes' if same else 'NO'})")
    print(f"sklearn KMeans, 100 dims   {k100:8.2f} s")
    print(f"ratio e2e / kmeans-40      {e2e / k40:8.2f}   (target <= 1.3)")
    print(f"ratio e2e / kmeans-100     {e2e / k100:8.2f}   (target < 1.0)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
