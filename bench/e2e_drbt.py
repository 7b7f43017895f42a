"""Target 1: a DRBT run end to end against scikit-learn's KMeans alone, in the same invocation.

4 parties, ROWS records, 100 columns (25 each), k = 10 per party, k-means with
8 clusters. Prints the times, their ratios, and where each run's time went:

  end-to-end  `ppc run --no-eval --no-sent` (command start to report written), once with pseudonymous ids
              (the default) and once with plain ids
  kmeans-40   sklearn KMeans (same settings and seed) on the joined ROWS x 40 disguised matrix
  kmeans-100  the same on the raw 100 columns

The disguised matrix is rebuilt here by each party's own code and seed, as
the coordinator holds it (one C-contiguous ROWS x 40 float64 array), and the
run's labels must equal KMeans-40's: the same clustering of the same data.
The baselines run with the numpy settings the ppc processes get (see
ppcsim/__init__.py), so the ratios compare work, not allocator settings.

KMeans alone is timed more than once, interleaved with the runs (before each
run and after the last, on the same array, in this one process), and the
ratios use the median of its times; the output gives every time, the best and
the spread, so that a ratio can be read against the noise of the machine.
`--repeat N` runs every id mode N times (the ratios then take the median run).

Targets: each run <= 1.3x KMeans-40 and < 1.0x KMeans-100; its k-means phase
<= 1.05x KMeans-40 alone; everything else in it (parties ready, uploads,
join, results) <= 0.35x its k-means phase; pseudonymous <= 1.1x plain; the
coordinator's peak RSS (the `ppc run` process, which hosts it) <= 1.5x the
clustered ROWS x 40 float64 matrix + 250 MiB for the interpreter and its
libraries.

    python bench/e2e_drbt.py [--rows 1000000] [--n-init 10] [--ids pseudonymous plain] [--repeat 1] [--json PATH]
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

from parties.data import load_blobs
from parties.disguise import disguise
from ppcsim.cli.entry import process_settings
from ppcsim.scenario.load import load_scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario  # noqa: E402

process_settings()  # ppc's process settings: this process's allocator, and what the processes it starts inherit

MIB = 1 << 20


def scenario(rows: int, n_init: int) -> str:
    """The scenario without its ``[security]`` table (each run adds its ids mode)."""
    return blobs_scenario("bench-e2e", rows, 4, 25, 'method = "drbt"\nk = 10',
                          f'algorithm = "kmeans"\nn_clusters = 8\nn_init = {n_init}')


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


def one_run(path: Path, ids: str) -> tuple[float, dict, np.ndarray]:
    """One `ppc run --no-eval --no-sent` of the scenario at ``path`` with ``ids``: seconds end to end, its report
    and its labels."""
    text = path.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        run_path = Path(tmp) / "bench.toml"
        run_path.write_text(text + f'[security]\nids = "{ids}"\n')
        out = Path(tmp) / "out"
        e2e, proc = timed(lambda: subprocess.run([sys.executable, "-m", "ppcsim", "run", str(run_path), "--out",
                                                  str(out), "--no-eval", "--no-sent", "--quiet"],
                                                 capture_output=True, text=True))
        if proc.returncode != 0:
            raise SystemExit(f"ppc run failed:\n{proc.stderr}")
        report = json.loads((out / "report.json").read_text())
        with open(out / "labels.csv", newline="") as fh:
            labels = np.array([int(row["cluster"]) for row in csv.DictReader(fh)])
    return e2e, report, labels


class Alone:
    """scikit-learn's KMeans on one matrix, timed each time it is called; the labels of every call must agree."""

    def __init__(self, X: np.ndarray, n_init: int, seed: int):
        self.X, self.n_init, self.seed = X, n_init, seed
        self.seconds: list[float] = []
        self.labels: np.ndarray | None = None
        self.agree = True

    def __call__(self) -> None:
        seconds, labels = timed(lambda: KMeans(n_clusters=8, n_init=self.n_init,
                                               random_state=self.seed).fit_predict(self.X))
        self.seconds.append(seconds)
        if self.labels is None:
            self.labels = labels
        self.agree &= bool(np.array_equal(labels, self.labels))

    @property
    def median(self) -> float:
        return float(np.median(self.seconds))

    def describe(self) -> str:
        """Every time, the median, the best, and the spread ((slowest - best) / median)."""
        s = self.seconds
        return (" ".join(f"{x:.2f}" for x in s) + f" s: median {self.median:.2f}, best {min(s):.2f}, spread "
                f"{100 * (max(s) - min(s)) / self.median:.0f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--ids", nargs="+", choices=("pseudonymous", "plain"), default=["pseudonymous", "plain"],
                        help="the id modes to run, each its own `ppc run` (default both: pseudonymous, the "
                        "scenario default, and plain, which shows what the pseudonyms cost)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each id mode (the ratios take the median)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    out = Figures("e2e_drbt.py")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(scenario(args.rows, args.n_init))
        loaded = load_scenario(path)
        # every party holds every id, in the same order: the joined matrix is the parties' blocks side by side, one
        # C-contiguous float64 array, as the coordinator's (coordinator.matrix) when the join is the identity
        joined = np.hstack([disguise(cfg).wire_arrays()["data"] for cfg in loaded.parties])
        assert joined.flags.c_contiguous and joined.dtype == np.float64 and joined.shape == (args.rows, 40)
        seed = loaded.clustering.seed  # the coordinator's, drawn from the scenario seed
        raw = load_blobs({"rows": args.rows, "columns": 100, "clusters": 8, "seed": 7}, [f"x{c}" for c in range(100)])
        k40, k100 = Alone(joined, args.n_init, seed), Alone(raw, args.n_init, seed)
        runs: dict[str, list[tuple[float, dict, np.ndarray]]] = {ids: [] for ids in args.ids}
        for _ in range(args.repeat):
            for ids in args.ids:  # KMeans alone before each run, so that a slow spell of the machine shows in both
                k40()
                k100()
                runs[ids].append(one_run(path, ids))
        k40()
        k100()
    if any(report["clustering"]["seed"] != seed for r in runs.values() for _, report, _ in r):
        raise SystemExit("the coordinator's k-means seed is not the scenario's clustering seed")
    out.add("kmeans-40 s", k40.median)
    out.add("kmeans-40 best s", min(k40.seconds))
    out.add("kmeans-100 s", k100.median)
    out.add("kmeans-100 best s", min(k100.seconds))
    print(f"rows {args.rows:,}, 4 parties x 25 columns -> k = 10 each, k-means 8 clusters, n_init {args.n_init}")
    print(f"sklearn KMeans alone, timed {len(k40.seconds)} times in this process before each run and after the "
          f"last, on one C-contiguous float64 matrix as the coordinator's; ratios use the median")
    print(f"  40 dims    {k40.describe()}")
    print(f"  100 dims   {k100.describe()}")
    labels40 = k40.labels
    assert labels40 is not None  # called at least once above
    same_all = k40.agree
    matrix = args.rows * 40 * 8 / MIB  # the clustered float64 matrix, MiB
    medians = {}
    for ids, done in runs.items():
        splits = [phases(report) for _, report, _ in done]
        split = {k: float(np.median([s[k] for s in splits])) for k in splits[0]}
        e2e = medians[ids] = float(np.median([e for e, _, _ in done]))
        same = all(np.array_equal(labels, labels40) for _, _, labels in done)
        same_all &= same
        beside = split["parties ready"] + split["uploads"] + split["join"] + split["results and exit"]
        print(f"ids {ids}: end-to-end ppc run " + " ".join(f"{e:.2f}" for e, _, _ in done) + " s   ("
              + ", ".join(f"{k} " + "/".join(f"{s[k]:.2f}" for s in splits) for k in split)
              + "); labels equal KMeans-40's: " + ("yes" if same else "NO"))
        out.add(f"{ids} e2e s", e2e)
        for k, v in split.items():
            out.add(f"{ids} {k} s", v)
        out.check(f"{ids}: e2e / kmeans-40", e2e / k40.median, "<=", 1.3)
        out.check(f"{ids}: e2e / kmeans-100", e2e / k100.median, "<", 1.0)
        out.check(f"{ids}: in-run k-means / kmeans-40 alone", split["k-means"] / k40.median, "<=", 1.05)
        out.check(f"{ids}: not k-means (ready, uploads, join, results) / k-means phase", beside / split["k-means"],
                  "<=", 0.35)
        out.check(f"{ids}: labels equal KMeans-40's", float(same), "==", 1)
        peak = out.add(f"{ids} coordinator peak MiB",
                       max(report["memory"]["coordinator_peak_rss"] for _, report, _ in done) / MIB)
        out.check(f"{ids}: coordinator peak / (1.5 x matrix + 250 MiB)", peak / (1.5 * matrix + 250), "<=", 1)
    if {"pseudonymous", "plain"} <= set(runs):
        out.check("pseudonymous e2e / plain e2e", medians["pseudonymous"] / medians["plain"], "<=", 1.1)
    for c in out.checks:
        print(f"{c['what']:<70} {c['value']:8.3f}  target {c['target']:<7} {'met' if c['met'] else 'NOT met'}")
    out.write(args.json, f"{args.rows:,} records, n_init {args.n_init}: " + "; ".join(
        f"{ids} ids end to end {medians[ids]:.2f} s (k-means phase {out.figures[f'{ids} k-means s']:.2f} s, "
        f"uploads {out.figures[f'{ids} uploads s']:.2f} s, coordinator peak "
        f"{out.figures[f'{ids} coordinator peak MiB']:,.0f} MiB)" for ids in runs)
        + f"; KMeans alone (median of {len(k40.seconds)}, interleaved with the runs) on 40 dims {k40.median:.2f} s "
        f"(best {min(k40.seconds):.2f}), on 100 dims {k100.median:.2f} s (best {min(k100.seconds):.2f}); labels "
        "equal KMeans-40's: " + ("yes" if same_all else "NO"))
    return 0 if same_all else 1


if __name__ == "__main__":
    sys.exit(main())
