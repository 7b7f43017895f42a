"""Small things a new user reads: what a sweep applies where, its time left, the page's table headers, the
privacy chart's zeros."""

from __future__ import annotations

import tomllib

from conftest import WINE, party_table, scenario_toml
from ppcsim.api import from_toml
from ppcsim.report.html import table
from ppcsim.run.sweep import _left, describe_partial_keys, sweep_notes

FOUR = scenario_toml(
    "four", [party_table("lab", WINE[:3], "drbt", k=2), party_table("shop", ["hue", "proline"]),
             party_table("winery", ["flavanoids", "total_phenols", "magnesium"], "pca", k=2),
             party_table("clinic", ["color_intensity", "proanthocyanins"], "noise")],
    clustering={"algorithm": "kmeans", "n_clusters": 3}, sweep={"k": [1, 2], "projection": ["gaussian", "sparse"]})


def test_a_swept_key_that_only_some_parties_take_says_which_and_why():
    raw = tomllib.loads(FOUR)
    grid = raw["sweep"]
    assert describe_partial_keys(raw, grid) == [
        "'k' applies to lab, winery only: shop (none), clinic (noise) take no 'k'",
        "'projection' applies to lab only: shop (none), winery (pca), clinic (noise) take no 'projection'",
    ]
    assert sweep_notes(raw, grid) == describe_partial_keys(raw, grid)
    assert describe_partial_keys(raw, {**grid, "method": ["drbt", "none"]}) == []  # the methods change then


def test_the_time_left_never_reads_about_0_s():
    assert _left(0.04 * 7, 7) == "under a second left"
    assert _left(12.4, 3) == "about 12 s left"
    assert _left(0.0, 0) == "done"


def test_text_headers_are_left_aligned_over_text_and_right_over_numbers():
    page = table(["party", "rows", "columns"], [["lab", 178, "alcohol, ash"], ["shop", 178, "hue"]])
    assert "<th class=t>party</th><th>rows</th><th class=t>columns</th>" in page


def test_two_zero_bars_of_one_column_get_one_zero(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    import ppcsim
    from ppcsim.report import plots

    annotated = []
    original = Axes.annotate

    def spy(self, text, *args, **kwargs):
        annotated.append(text)
        return original(self, text, *args, **kwargs)

    text = FOUR.replace('[sweep]\nk = [1, 2]\nprojection = ["gaussian", "sparse"]\n', "")
    report = ppcsim.simulate(from_toml(text.replace('method = "noise"', 'method = "none"'))).report
    monkeypatch.setattr(Axes, "annotate", spy)
    plots.run_figures(report, tmp_path / "figures")
    # shop and clinic send their columns as they are: every attack that runs recovers each column exactly
    zero_columns = {f"{party}.{col}" for party, entry in report["privacy"].items()
                    for result in entry["attacks"].values() if "columns" in result
                    for col, value in result["columns"].items() if abs(value) < 1e-9}
    assert len(zero_columns) >= 4
    assert annotated.count("0") == len(zero_columns)


def test_a_format_1_report_is_read_with_its_wire_bytes_down_where_format_2_keeps_them():
    import json

    import ppcsim
    from ppcsim.report.model import FORMAT, Report, schema

    small = FOUR.split("[[parties]]\nname = \"shop\"")[0] + "[clustering]\nalgorithm = \"kmeans\"\nn_clusters = 3\n"
    now = ppcsim.simulate(from_toml(small), attacks=False).report
    assert now["format"] == FORMAT == 2 and schema()["$id"] == "urn:ppc-sim:report:v2"
    old = json.loads(json.dumps(now))  # as format 1 wrote a process run: no format, wire down under network
    del old["format"]
    old["parties"][0]["bytes"]["wire"] = 700
    old["parties"][0]["network"] = {"link": "loopback, unshaped", "wire_down": 321, "connections": 1,
                                    "upload_seconds": 0.1}
    report = Report.from_json(old)
    lab = report.parties[0]
    assert lab.bytes.wire == 700 and lab.bytes.wire_down == 321
    written = report.to_json()["parties"][0]
    assert written["bytes"]["wire_down"] == 321 and "wire_down" not in written["network"]
