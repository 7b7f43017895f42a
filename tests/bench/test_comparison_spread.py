"""bench/comparison.py's repeated times: medians, ranges, the flag where a range hides the difference between the
links, and a page written from any part of the table (bench/comparison_spread.py)."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import comparison  # noqa: E402
import comparison_spread as spread  # noqa: E402


def timed(*seconds: float, link: str = "unshaped", variant: str = "none", rows: int = 1000) -> dict:
    """A comparison.csv row of ``variant`` whose repeats took ``seconds`` (protocol time)."""
    row = {"workload": "comparison", "rows": rows, "variant": variant, "link": link, "payload_up": 64_000,
           "payload_down": 8_000, "wire": 90_000, "rounds": 1, "steps": 1, "sequential": "", "ari_vs_plain": 1.0,
           "privacy": "-", "coordinator_learns": "x",
           **spread.summary(list(seconds), [s + 10 for s in seconds], [4.0, 6.5])}
    return row


def test_the_time_is_the_median_and_the_range_of_the_repeats():
    row = timed(3.0, 24.1, 3.2)
    assert row["protocol_seconds"] == 3.2 and (row["protocol_seconds_min"], row["protocol_seconds_max"]) == (3.0, 24.1)
    assert row["repeats"] == 3 and row["load"] == 6.5 and row["wall_seconds"] == 13.2
    assert spread.cell(row) == "3.20 s (3.00-24.10, 3 runs)"
    assert spread.cell(timed(2.0)) == "2.00 s (1 run)" and spread.cell(None) == "not run"


def test_a_row_whose_ranges_overlap_is_flagged_and_one_whose_ranges_part_is_not():
    unshaped, slower = timed(1.0, 1.2, 1.4), timed(1.3, 1.5, 1.6, link="shaped")
    assert spread.overlap(unshaped, slower) and spread.cell(slower, True).startswith(f"{spread.FLAG} 1.50 s")
    assert not spread.overlap(unshaped, timed(2.0, 2.1, 2.2, link="shaped"))
    assert not spread.overlap(timed(1.0), timed(1.0, link="shaped"))  # one run each: no range to compare


def test_small_rows_are_repeated_by_default_and_large_ones_run_once():
    assert spread.repeats_for(1_000, None) == spread.REPEATS and spread.repeats_for(100_000, None) == 1
    assert spread.repeats_for(100_000, 2) == 2 and spread.repeats_for(10, 0) == 1


def test_a_row_written_before_repeats_reads_as_one_run():
    row = {"protocol_seconds": 2.5}
    spread.read(row)
    assert row == {"protocol_seconds": 2.5, "repeats": 1, "protocol_seconds_min": 2.5, "protocol_seconds_max": 2.5,
                   "load": None}


def test_the_page_flags_noisy_rows_and_says_the_load():
    links = list(comparison.LINKS)
    rows = [timed(1.0, 1.2, 1.4), timed(1.3, 1.5, 1.6, link=links[1]),
            timed(2.0, 2.1, 2.2, variant="drbt k=3"), timed(3.0, 3.1, 3.2, variant="drbt k=3", link=links[1])]
    page = comparison.document(rows)
    none = next(line for line in page.splitlines() if line.startswith("| 1,000 | none |"))
    drbt = next(line for line in page.splitlines() if line.startswith("| 1,000 | drbt k=3 |"))
    assert none.count(spread.FLAG) == 2 and spread.FLAG not in drbt
    assert "The load average (1 minute, on the 2 cores) was 6.5 to 6.5" in page


def test_a_part_without_secure_aggregation_and_drbt_writes_its_page():
    """``--only comparison --variants mpc`` leaves no size where both secure aggregation and DRBT ran: the page
    has no crossover section, and no IndexError."""
    rows = [timed(0.4, 0.5, 0.6, rows=150), {**timed(30.0, 31.0, 35.0, variant="mpc", rows=150), "rounds": 4}]
    page = comparison.document(rows)
    assert "| 150 | mpc |" in page and "## Crossover points" not in page
