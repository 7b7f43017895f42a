"""docs/methods.md's table is what its own sweep gives (``ppcsim.reproduce.methods_table``): made from docs/methods.csv,
the sweep's committed sweep.csv, and a sample of the sweep's points rerun gives that CSV's rows."""

from __future__ import annotations

import csv
import math

from conftest import ROOT
from ppcsim.cli.commands import measure_settings
from ppcsim.cli.parser import build_parser
from ppcsim.reproduce.methods_table import methods_table, page_table
from ppcsim.run.sweep import plan, row, run_point, write_csv

PAGE = ROOT / "docs" / "methods.md"
#: The sweep.csv of the page's command, ``ppc sweep scenarios/sweep-methods.toml --out runs/methods --in-process``.
CSV = ROOT / "docs" / "methods.csv"
SCENARIO = ROOT / "scenarios" / "sweep-methods.toml"
#: The points rerun by the test (of 33, each a few seconds): drbt (random projection), pca (a fitted reduction)
#: and osbr (distances, agglomerative on the coordinator's matrix), each at another seed.
SAMPLE = (4, 16, 26)


def test_a_row_is_the_mean_over_seeds_with_dashes_where_an_attack_does_not_apply(tmp_path):
    csv = tmp_path / "sweep.csv"
    head = ("param_method,stress,np,ari,ari_truth,privacy_known_io_mean,privacy_known_io_forward_mean,"
            "privacy_ica_mean,privacy_multilateration_mean,privacy_multilateration_nmds_mean,bytes_payload\n")
    csv.write_text(head + "drbt,0.1,0.5,0.25,0.5,0.1,0.2,0.3,,,100\ndrbt,0.2,0.6,0.75,0.7,0.2,0.3,0.4,,,101\n"
                   "nmds,0.1,0.3,0.8,0.7,,,,0.0,0.125,7000\n")
    table = methods_table(csv).splitlines()
    assert table[2] == "| `drbt` | 0.150 | 0.550 | 0.500 | 0.600 | 0.150 | 0.250 | 0.350 | - | 100 |"
    assert table[3] == "| `nmds` | 0.100 | 0.300 | 0.800 | 0.700 | - | - | - | 0.000 (embedding: 0.125) | 7,000 |"


def test_the_page_table_is_what_the_committed_sweep_gives():
    """docs/methods.csv is the sweep.csv of the command the page names; the page's table is made from it."""
    assert methods_table(CSV) == page_table(PAGE)


def committed_rows() -> dict[int, dict]:
    with open(CSV, newline="", encoding="utf-8") as fh:
        return {int(r["point"]): r for r in csv.DictReader(fh)}


def test_the_committed_sweep_has_one_row_per_point_of_the_scenario_now(tmp_path):
    points = plan(SCENARIO, tmp_path)
    rows = committed_rows()
    assert sorted(rows) == [p.index for p in points]
    for p in points:
        assert {k: rows[p.index][f"param_{k}"] for k in p.values} == {k: str(v) for k, v in p.values.items()}


def same(now: str, then: str) -> bool:
    """Equal as the CSV writes them; numbers to 1e-9 relative (another machine's BLAS may round the last digit
    differently, which the page's three decimals never show)."""
    if now == then:
        return True
    try:
        return math.isclose(float(now), float(then), rel_tol=1e-9, abs_tol=1e-12)
    except ValueError:
        return False


def test_a_sample_of_the_sweeps_points_gives_the_committed_rows_now(tmp_path):
    """Reruns SAMPLE's points of the sweep as ``ppc sweep --in-process`` runs each (the same plan, run_point and row,
    with the command line's measurement settings) and compares every column but ``seconds`` with
    docs/methods.csv: a change that moves a method's figures fails here until the CSV and the page are
    regenerated."""
    settings = measure_settings(build_parser().parse_args(["sweep", str(SCENARIO), "--out", str(tmp_path),
                                                           "--in-process"]))
    points = {p.index: p for p in plan(SCENARIO, tmp_path)}
    rows = committed_rows()
    for index in SAMPLE:
        write_csv(tmp_path, [row(points[index], run_point(points[index], tmp_path, settings, in_process=True))])
        with open(tmp_path / "sweep.csv", newline="", encoding="utf-8") as fh:
            (now,) = csv.DictReader(fh)
        then = rows[index]
        differ = {k: (v, then.get(k)) for k, v in now.items() if k != "seconds" and not same(v, then.get(k, ""))}
        assert differ == {}, f"point {index} {points[index].values}: (now, docs/methods.csv): {differ}"
        assert not [k for k in then if k not in now and then[k] != ""], f"point {index}: columns it no longer has"
