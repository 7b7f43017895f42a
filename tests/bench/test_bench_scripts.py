"""Every benchmark in bench/ runs to the end at a small size and writes well-formed figures.

Each script runs as its own process, as a user runs it, with the smoke
arguments of ``bench/last_measured.py`` (the sizes are far too small for the
figures to mean anything: no speed or memory target is checked here). What is
checked: the script exits 0, writes its ``--json`` figures, every figure is a
finite number, every target names its value and whether it was met, and the
targets that are exact rather than timed (the labels equal scikit-learn's, the
payload equals the paper's prediction, the sweeps agree) are met.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))
import last_measured  # noqa: E402


@pytest.mark.parametrize("script", sorted(last_measured.RUNS))
def test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures(script, tmp_path):
    assert (BENCH / script).is_file()
    figures = last_measured.run(script, smoke=True, tmp=tmp_path)
    assert figures["script"] == script
    assert isinstance(figures["summary"], str) and figures["summary"]
    assert figures["figures"], f"{script} wrote no figures"
    for name, value in figures["figures"].items():
        assert isinstance(value, float) and math.isfinite(value) and value >= 0, (script, name, value)
    for check in figures["checks"]:
        assert set(check) == {"what", "value", "target", "met"} and isinstance(check["met"], bool), check
        assert math.isfinite(check["value"]), check
        if check["target"] == "== 1":  # exact, not timed: must hold at any size
            assert check["met"], f"{script}: {check['what']} does not hold"


def test_every_script_in_bench_is_run_by_the_suite():
    scripts = {p.name for p in BENCH.glob("*.py")} - {"harness.py", "last_measured.py", "comparison_learns.py",
                                                    "comparison_spread.py", "comparison_figure.py"}
    assert scripts == set(last_measured.RUNS)


def test_the_readme_table_is_rewritten_from_the_figures_keeping_the_rows_not_rerun(tmp_path, monkeypatch):
    """``last_measured.py --smoke --only wire_bytes.py`` rewrites its row and keeps the others. The script's
    process is replaced by one that writes figures as harness.Figures does (the script itself runs at smoke size
    in test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures[wire_bytes.py])."""
    from harness import Figures

    ran = []

    def script(argv, **options):  # what subprocess.run would have run: the script, writing its --json figures
        ran.append(argv[1:])
        figures = Figures(Path(argv[1]).name)
        figures.add("worst wire / payload", 1.25)
        figures.check("worst wire / payload", 1.25, "<=", 1.5)
        figures.write(argv[argv.index("--json") + 1], "worst wire / payload 1.25x", argv[2:])
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(last_measured.subprocess, "run", script)
    readme = tmp_path / "README.md"
    old_row = "| `throughput.py --rows 500000` | an older figure | - |"
    readme.write_text(f"# Benchmarks\n\n{last_measured.BEGIN}\n\n| command | figures | targets |\n|---|---|---|\n"
                      f"{old_row}\n| `wire_bytes.py --rows 100000` | to be replaced | - |\n\n{last_measured.END}\n"
                      "after\n")
    done = last_measured.main(["--smoke", "--only", "wire_bytes.py", "--readme", str(readme)])
    text = readme.read_text()
    assert ran == [[str(BENCH / "wire_bytes.py"), "--rows", "3000", "--json", ran[0][-1]]]
    assert done == 0 and old_row in text and "to be replaced" not in text and text.endswith("after\n")
    assert ("| `wire_bytes.py --rows 3000` | worst wire / payload 1.25x | worst wire / payload 1.25 (<= 1.5: met) |"
            in text)
    assert (BENCH / "README.md").read_text().count(last_measured.BEGIN) == 1


def test_the_comparison_page_and_figure_are_written_from_both_links_and_every_part(tmp_path, monkeypatch):
    """The smoke run above measures one link; the page writer's other paths (both links' time columns, the
    crossover points, the latency probe, the published workload) are checked here on docs/comparison.csv's
    measured rows, in this process (``comparison.py --from-csv``)."""
    import comparison
    import matplotlib.image

    (tmp_path / "comparison.csv").write_bytes((ROOT / "docs" / "comparison.csv").read_bytes())
    monkeypatch.setattr(sys, "argv", ["comparison.py", "--from-csv", "--out", str(tmp_path)])
    comparison.main()
    page = (tmp_path / "comparison.md").read_text()
    rows = comparison.read_rows(tmp_path / "comparison.csv")
    assert {r["link"] for r in rows} == {*comparison.LINKS, *comparison.PROBE_LINKS}
    heads = [line for line in page.splitlines() if line.startswith("## ")]
    assert heads == ["## Crossover points", "## Labels only, on either engine (m = 1,000)",
                     "## Message latencies in sequence", "## The published workload"]
    assert page == (ROOT / "docs" / "comparison.md").read_text()  # the committed page is the generator's, whole
    table = [line for line in page.splitlines() if line.startswith("| 1,000 | ")]
    assert [line.split(" | ")[1] for line in table] == list(comparison.VARIANTS)
    # a row measured on both links has a time in both columns; every table row has the table's 9 cells
    both = {r["variant"] for r in rows if r["rows"] == 1000 and r["workload"] == "comparison"
            and r["link"] != list(comparison.LINKS)[0]}
    for line in table:
        cells = line.strip("|").split(" | ")
        assert len(cells) == 9, line
        assert ("not run" not in cells[5]) == (cells[1] in both), line
    image = matplotlib.image.imread(tmp_path / "figures" / "comparison.png")
    assert image.shape[0] > 300 and image.shape[1] > 800
