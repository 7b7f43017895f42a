"""The figures the README quotes from a benchmark are the ones bench/README.md's table holds, which
``python bench/last_measured.py`` writes from that benchmark's last run: one set of figures, written by one command,
quoted alike wherever they appear."""

from __future__ import annotations

import re

from conftest import ROOT


def _e2e_row() -> str:
    table = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    return next(line for line in table.splitlines() if line.startswith("| `e2e_drbt.py --rows 1000000`"))


def test_the_readmes_speed_paragraph_quotes_the_last_e2e_run():
    row = _e2e_row()
    seconds = re.search(r"pseudonymous ids end to end ([\d.]+) s", row).group(1)
    raw = re.search(r"pseudonymous: e2e / kmeans-100 ([\d.]+)", row).group(1)
    disguised = re.search(r"pseudonymous: e2e / kmeans-40 ([\d.]+)", row).group(1)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    speed = readme.split("**Speed.**", 1)[1].split("**", 1)[0]
    assert f"takes about {seconds} s from the command's start" in speed, (seconds, speed)
    assert f"{raw} times scikit-learn's KMeans alone on the raw 100 columns" in speed, (raw, speed)
    assert f"{disguised} times KMeans alone on the 40 disguised ones" in speed, (disguised, speed)
    assert "python bench/e2e_drbt.py --rows 1000000" in speed
