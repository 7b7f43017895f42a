"""Target 4: the coordinator's peak memory for OSBR against the size of one combined condensed matrix.

3 parties hold ROWS records (10 columns each) and send squared Euclidean
distances (osbr), m(m-1)/2 values each. The coordinator sums them as they
arrive and clusters the sum condensed. Prints, per linkage, the coordinator's
peak RSS (the `ppc run --no-eval --no-sent` process, which hosts it) and each
party's, against one condensed float64 matrix of m(m-1)/2 * 8 bytes
(target: coordinator <= 1.5x; a party <= one matrix plus its own data).

With ``--parties N ...``: the coordinator's peak RSS for N parties of two
columns each (osbr, ``--party-rows`` records, average linkage), against the
fewest parties listed (target: the most parties' peak <= 1.3x the fewest's:
what each further party holds in flight stays small beside the matrix).

Then the effect of float32 transfer (``dtype = "float32"``) on bytes and on
stress (004 eq. 6), at --stress-rows records, where the observer can afford
to replay every party's disguise.

    python bench/osbr_memory.py [--rows 20000] [--linkage single average] [--parties 4 32] [--party-rows 5000]
                                [--stress-rows 2000] [--json PATH]
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


def by_parties(counts: list[int], rows: int, out: Figures) -> dict[int, float]:
    """The coordinator's peak RSS (MiB) for each count of parties of two columns each, ``rows`` records."""
    peaks = {}
    if counts:
        print(f"\nrows {rows:,}, two columns a party, osbr/euclidean, average linkage; one condensed float64 matrix: "
              f"{rows * (rows - 1) // 2 * 8 / MB:,.0f} MiB")
    for n in sorted(set(counts)):
        text = blobs_scenario("bench-osbr-parties", rows, n, 2, 'method = "osbr"',
                              'algorithm = "agglomerative"\nlinkage = "average"\nn_clusters = 8')
        seconds, report = ppc_run(text, "--no-eval", "--no-sent")
        peaks[n] = out.add(f"{n} parties coordinator MiB", report["memory"]["coordinator_peak_rss"] / MB)
        print(f"{n:3} parties  {seconds:7.1f} s  coordinator {peaks[n]:8,.0f} MiB")
    return peaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--linkage", nargs="+", default=["single", "average"])
    parser.add_argument("--parties", type=int, nargs="*", default=[], metavar="N",
                        help="also compare the coordinator's peak for N parties of two columns each (e.g. 4 32)")
    parser.add_argument("--party-rows", type=int, default=5_000, help="records of the --parties runs")
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
    peaks = by_parties(args.parties, args.party_rows, out)
    if len(peaks) > 1:
        few, most = min(peaks), max(peaks)
        out.check(f"coordinator peak, {most} parties / {few} parties", peaks[most] / peaks[few], "<=", 1.3)

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
        f"{c['what'].split(':')[0]} linkage {c['value']:.2f}x" for c in out.checks if "parties" not in c["what"]) + "".join(
        f"; {n} parties of two columns ({args.party_rows:,} records) {out.figures[f'{n} parties coordinator MiB']:,.0f} MiB"
        for n in sorted(set(args.parties)))
        + f"; float32 halves the bytes, stress {out.figures['float64 stress']:.2g} -> {out.figures['float32 stress']:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
