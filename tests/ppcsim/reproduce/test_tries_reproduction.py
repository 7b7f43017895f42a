"""004 §5.2 step 3 on Table 1 (``ppcsim.reproduce.tries``): the kept stress against the number of tries."""

from __future__ import annotations

from ppcsim.reproduce.tries import TRIES, table1_tries, tries_section


def test_more_tries_keep_less_stress_and_move_the_papers_value_up_the_squared_reading():
    t = table1_tries(seeds=40)
    cells = [t["cells"][str(n)] for n in TRIES]
    means = [c["mean"] for c in cells]
    assert means == sorted(means, reverse=True) and means[-1] < 0.6 * means[0]
    assert all(c["max"] <= cells[0]["max"] for c in cells)  # each seed's kept stress only falls
    # Table 2's 0.0223 at k = 5: below every draw read as stress; an ordinary value of the best few as stress²
    assert all(c["paper_percentile"] == 0 for c in cells)
    squared = [c["paper_percentile_squared"] for c in cells]
    assert squared == sorted(squared) and squared[0] < 20 and squared[-1] > 80
    text = tries_section(t)
    assert "| tries | kept local stress" in text and f"| {TRIES[-1]} | " in text
