"""Target 4: the coordinator's peak memory for OSBR against the size of one combined condensed matrix.

3 parties hold ROWS records (10 columns each) and send squared Euclidean
distances (osbr), m(m-1)/2 values each. The coordinator sums them as they
arrive and clusters the sum condensed. Prints, per linkage, the coordinator's
peak RSS (the `ppc run --no-eval --no-sent` process, which hosts it) and each
party's, against one condensed float64 matrix of m(m-1)/2 * 8 bytes
(target: coordinator <= 1.5x; a party <= one matrix plus its own data).

Then the effect of float32 transfer (``dtype = "float32"``) on bytes and on
stress (004 eq. 6), at --stress-rows records, where the observer can afford
to replay every party's disguise.

    python bench/osbr_memory.py [--rows 20000] [--linkage single average] [--stress-rows 2000] [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario, ppc_run  # noqa: E402

MB = 1 << 20


def osbr(rows: int, linkage: str, dtype: str = "float64") -> str:
    return blobs_scenario("bench-osbr", rows, 3, 10, f'method = "osbr"\ndtype = "{dtype}"',
                          f'algorithm = "agglomerative"\nlinkage = "{linkage}"\nn_clusters = 8')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--linkage", nargs="+", default=["single", "average"])
    parser.add_argument("--stress-rows", type=int, default=2_000)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    m = args.rows
    matrix = m * (m - 1) // 2 * 8
    own = m * 10 * 8
    print(f"rows {m:,}, 3 parties x 10 columns, osbr/euclidean; one condensed float64 matrix: {matrix / MB:,.0f} MiB")
    print(f"{'linkage':8}  {'seconds':>7}  {'coordinator MiB':>15}  {'/ matrix':>8}  {'largest party MiB':>17}  "
          f"{'/ (matrix + own data)':>21}")
    out = Figures("osbr_memory.py")
    for linkage in args.linkage:
        seconds, report = ppc_run(osbr(m, linkage), "--no-eval", "--no-sent")
        coordinator = report["memory"]["coordinator_peak_rss"]
        party = max(p["peak_rss"] for p in report["parties"])
        out.add(f"{linkage} coordinator MiB", coordinator / MB)
        out.add(f"{linkage} largest party MiB", party / MB)
        out.check(f"{linkage}: coordinator / matrix", coordinator / matrix, "<=", 1.5)
        print(f"{linkage:8}  {seconds:7.1f}  {coordinator / MB:15,.0f}  {coordinator / matrix:8.2f}  "
              f"{party / MB:17,.0f}  {party / (matrix + own):21.2f}")
    print("target: coordinator / matrix <= 1.5")

    n = args.stress_rows
    print(f"\nfloat32 transfer, rows {n:,} (utility measured by the observer)")
    print(f"{'dtype':8}  {'payload B per party':>19}  {'stress (eq. 6)':>14}  {'ARI vs original':>15}")
    for dtype in ("float64", "float32"):
        _, report = ppc_run(osbr(n, "average", dtype), "--no-attacks", "--no-sent")
        u = report["utility"]
        print(f"{dtype:8}  {report['parties'][0]['bytes']['payload']:19,}  {u['stress']:14.3g}  "
              f"{u['vs_original']['ari']:15.4f}")
        out.add(f"{dtype} stress", u["stress"])
        out.add(f"{dtype} payload bytes per party", report["parties"][0]["bytes"]["payload"])
    out.write(args.json, f"{m:,} records, one {matrix / MB:,.0f} MiB matrix: " + ", ".join(
        f"{c['what'].split(':')[0]} linkage {c['value']:.2f}x" for c in out.checks)
        + f"; float32 halves the bytes, stress {out.figures['float64 stress']:.2g} -> {out.figures['float32 stress']:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
