"""What ``ppc sweep`` draws and tabulates for a reader: whole-number sweeps on whole-number axes with a colour per
value, a figure for a sweep over parties, a table of the main figures only, and a stress of 0 marked as the best
value it is (ppcsim.report.plots, ppcsim.report.html)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from ppcsim.report.html import STRESS_ZERO, runs_columns, score, sweep_page
from ppcsim.report.plots import _colour_by, _whole_ticks, sweep_figures


def rows_over_parties() -> list[dict]:
    """Runs of a sweep over parties and seeds, as ppcsim.run.sweep.row writes them (no attack measured but one)."""
    rows = []
    for i, (parties, seed) in enumerate((p, s) for p in (2, 3, 4) for s in (0, 1)):
        rows.append({"point": i, "param_parties": parties, "param_seed": seed, "rows": 178, "methods": "drbt",
                     "parties": parties, "output_dims": 12, "stress": 0.2 + 0.01 * seed, "ari": 0.5 + 0.1 * parties,
                     "ari_truth": 0.4, "privacy_known_io_mean": 0.1 * parties + 0.01 * seed,
                     "privacy_ica_mean": None, "ica_vd": None, "privacy_worst_mean": 0.1 * parties,
                     "bytes_predicted": 8544, "bytes_payload": 8544, "bytes_serialized": 9000, "bytes_wire": None,
                     "seconds": 1.5})
    return rows


def test_a_few_whole_numbers_get_a_colour_each_not_a_colour_scale():
    fig, ax = plt.subplots()
    _colour_by(fig, ax, rows_over_parties(), "privacy_known_io_mean", "ari", "parties")
    assert len(fig.axes) == 1  # no colour bar beside the axes
    assert ax.get_legend_handles_labels()[1] == ["parties = 2", "parties = 3", "parties = 4"]
    plt.close(fig)


def test_many_fractional_values_keep_the_colour_scale():
    rows = [{**r, "param_sigma": 0.05 * i} for i, r in enumerate(rows_over_parties())]
    fig, ax = plt.subplots()
    _colour_by(fig, ax, rows, "privacy_known_io_mean", "ari", "sigma")
    assert len(fig.axes) == 2  # the axes and the colour bar
    plt.close(fig)


def test_a_sweep_over_parties_has_its_figure_on_whole_number_ticks(tmp_path):
    figures = sweep_figures(rows_over_parties(), tmp_path)
    assert "parties" in figures and figures["parties"].exists() and figures["parties"].with_suffix(".svg").exists()
    fig, ax = plt.subplots()
    _whole_ticks(ax, [2, 3, 4, 2])  # as the parties figure ticks its x axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "3", "4"]
    plt.close(fig)


def test_the_runs_table_has_the_swept_values_and_main_figures_measured():
    rows = rows_over_parties()
    columns = runs_columns(rows)
    assert columns[:3] == ["point", "param_parties", "param_seed"]
    assert "privacy_known_io_mean" in columns and "privacy_worst_mean" in columns
    assert "privacy_ica_mean" not in columns and "ica_vd" not in columns and "bytes_wire" not in columns
    page = sweep_page("parties", rows, {}, {"parties": [2, 3, 4], "seed": [0, 1]})
    assert f"sweep.csv has every figure of every run ({len(rows[0])} columns" in page


def test_a_stress_of_zero_is_the_best_value_not_a_loss():
    exact = score(0.0, zero_means=STRESS_ZERO).html
    recovered = score(0.0).html
    assert "class='exact'" in exact and "best value" in exact and "class='zero'" not in exact
    assert "class='zero'" in recovered
    rows = [{**rows_over_parties()[0], "methods": "osbr", "stress": 0.0, "privacy_known_io_mean": 0.0}]
    page = sweep_page("osbr", rows, {})
    assert "<span class='exact' title='every distance kept exactly: the best value'>0</span>" in page
    assert "<span class='zero' title='recovered exactly'>0</span>" in page
