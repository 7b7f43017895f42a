"""Scaling curves: time, bytes and peak memory against the number of records, for DRBT and OSBR.

Each point is one real `ppc run --no-eval --no-sent` (parties in their own
processes, gRPC to the coordinator) over synthetic Gaussian blobs:

  drbt  4 parties x 25 columns, k = 10 each, k-means with 8 clusters (n_init 1)
  osbr  3 parties x 10 columns, single-linkage agglomerative, 8 clusters

and records the wall time (command start to report written), the bytes summed
over the parties (the paper's prediction, the payload the coordinator
received, the bytes on the parties' connections), the coordinator's peak RSS
(the `ppc run` process, which hosts it) and the largest party's peak RSS.
DRBT's bytes are m * k * 8 per party, linear in the records m; OSBR's are
m(m-1)/2 * 8 per party, quadratic (004 §4.5, §5.5).

Prints a table per method, writes every point to a CSV and draws three
log-log panels (time, bytes, peak memory against records) to a PNG.

    python bench/scaling.py [--drbt-rows 10000 30000 100000 300000 1000000]
                            [--osbr-rows 1000 2000 5000 10000 20000]
                            [--csv docs/scaling.csv] [--figure docs/figures/scaling.png] [--json PATH]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario, ppc_run  # noqa: E402

MB = 1 << 20
ROOT = Path(__file__).resolve().parent.parent

METHODS = {
    "drbt": lambda rows: blobs_scenario("bench-scaling-drbt", rows, 4, 25, 'method = "drbt"\nk = 10',
                                        'algorithm = "kmeans"\nn_clusters = 8\nn_init = 1'),
    "osbr": lambda rows: blobs_scenario("bench-scaling-osbr", rows, 3, 10, 'method = "osbr"',
                                        'algorithm = "agglomerative"\nlinkage = "single"\nn_clusters = 8'),
}
FIELDS = ["method", "rows", "seconds", "run_seconds", "predicted_bytes", "payload_bytes", "wire_bytes",
          "coordinator_peak_rss", "party_peak_rss"]
COLOURS = {"drbt": "tab:blue", "osbr": "tab:red"}


def measure(method: str, rows: int) -> dict:
    """One `ppc run` of ``method`` over ``rows`` records, as a CSV row."""
    seconds, report = ppc_run(METHODS[method](rows), "--no-eval", "--no-sent")
    parties = report["parties"]
    c = report["timing"]["coordinator"]
    print(f"  {method} {rows:,}: parties ready {c['first_join']:.1f} s (slowest load + disguise "
          f"{max(p['timing']['load'] + p['timing']['disguise'] for p in parties):.1f} s), uploads "
          f"{c['uploaded'] - c['first_join']:.1f} s, join {c['join_seconds']:.1f} s, clustering "
          f"{c['cluster_seconds']:.1f} s, results and exit {report['timing']['total'] - c['done']:.1f} s; peak RSS "
          f"MiB: coordinator {report['memory']['coordinator_peak_rss'] / MB:,.0f}, "
          + ", ".join(f"{p['name']} {p['peak_rss'] / MB:,.0f}" for p in parties), file=sys.stderr, flush=True)
    return {
        "method": method,
        "rows": rows,
        "seconds": round(seconds, 3),
        "run_seconds": round(report["timing"]["total"], 3),
        "predicted_bytes": sum(p["bytes"]["predicted"] for p in parties),
        "payload_bytes": sum(p["bytes"]["payload"] for p in parties),
        "wire_bytes": sum(p["bytes"]["wire"] for p in parties),
        "coordinator_peak_rss": report["memory"]["coordinator_peak_rss"],
        "party_peak_rss": max(p["peak_rss"] for p in parties),
    }


def print_table(method: str, points: list[dict]) -> None:
    print(f"\n{method}")
    print(f"{'rows':>9}  {'seconds':>7}  {'predicted B':>15}  {'payload B':>15}  {'wire B':>15}  {'wire/payload':>12}  "
          f"{'coordinator MiB':>15}  {'largest party MiB':>17}")
    for r in points:
        print(f"{r['rows']:>9,}  {r['seconds']:7.1f}  {r['predicted_bytes']:>15,}  {r['payload_bytes']:>15,}  "
              f"{r['wire_bytes']:>15,}  {r['wire_bytes'] / r['payload_bytes']:12.4f}  "
              f"{r['coordinator_peak_rss'] / MB:15,.0f}  {r['party_peak_rss'] / MB:17,.0f}")


def draw(points: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_b, ax_m) = plt.subplots(1, 3, figsize=(15, 4.6))
    predicted_labelled = False
    for method in METHODS:
        pts = sorted((r for r in points if r["method"] == method), key=lambda r: r["rows"])
        if not pts:
            continue
        c = COLOURS[method]
        rows = [r["rows"] for r in pts]
        ax_t.plot(rows, [r["seconds"] for r in pts], "o-", color=c, label=method)
        ax_b.plot(rows, [r["payload_bytes"] for r in pts], "o-", color=c, label=f"{method} payload")
        ax_b.plot(rows, [r["wire_bytes"] for r in pts], "x", color=c, markersize=8, label=f"{method} wire")
        ax_b.plot(rows, [r["predicted_bytes"] for r in pts], ":", color="black", linewidth=1.0, zorder=3,
                  label=None if predicted_labelled else "predicted")
        predicted_labelled = True
        ax_m.plot(rows, [r["coordinator_peak_rss"] / MB for r in pts], "o-", color=c, label=f"{method} coordinator")
        ax_m.plot(rows, [r["party_peak_rss"] / MB for r in pts], "s--", color=c, label=f"{method} largest party")
    for ax, title, ylabel in ((ax_t, "wall time of `ppc run`", "seconds"),
                              (ax_b, "bytes sent, all parties", "bytes"),
                              (ax_m, "peak RSS", "MiB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records (rows)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("DRBT (4 parties x 25 columns, k = 10, k-means) and OSBR (3 parties x 10 columns, single linkage)",
                 fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drbt-rows", type=int, nargs="*", default=[10_000, 30_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--osbr-rows", type=int, nargs="*", default=[1_000, 2_000, 5_000, 10_000, 20_000],
                        help="record counts for osbr (none: --osbr-rows alone)")
    parser.add_argument("--csv", type=Path, default=ROOT / "docs" / "scaling.csv")
    parser.add_argument("--figure", type=Path, default=ROOT / "docs" / "figures" / "scaling.png")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()

    points: list[dict] = []
    for method, sizes in (("drbt", args.drbt_rows), ("osbr", args.osbr_rows)):
        for rows in sizes:
            t = time.perf_counter()
            print(f"{method} {rows:,} rows ...", end=" ", file=sys.stderr, flush=True)
            point = measure(method, rows)
            points.append(point)
            print(f"{time.perf_counter() - t:.1f} s, coordinator {point['coordinator_peak_rss'] / MB:,.0f} MiB",
                  file=sys.stderr, flush=True)

    for method in METHODS:
        print_table(method, [r for r in points if r["method"] == method])

    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(points)
    draw(points, args.figure)
    print(f"\nwrote {args.csv} and {args.figure}")
    out = Figures("scaling.py")
    for r in points:
        out.add(f"{r['method']} {r['rows']} seconds", r["seconds"])
        out.add(f"{r['method']} {r['rows']} coordinator MiB", r["coordinator_peak_rss"] / MB)
        out.check(f"{r['method']} {r['rows']}: payload equals the prediction",
                  float(r["payload_bytes"] == r["predicted_bytes"]), "==", 1)
    out.write(args.json, "; ".join(f"{r['method']} {r['rows']:,} records {r['seconds']:.1f} s, coordinator "
                                   f"{r['coordinator_peak_rss'] / MB:,.0f} MiB" for r in points))
    return 0


if __name__ == "__main__":
    sys.exit(main())
