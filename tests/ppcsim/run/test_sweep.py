"""Sweeps: the grid, the in-process shortcut (same numbers as real runs), the CSV, figures and HTML."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import matplotlib.image
import pytest

from conftest import LAB_SHOP_DRBT, WINE_LABELLED, changed, run_ppc, scenario_toml, write_scenario
from ppcsim.evaluate.settings import Settings
from ppcsim.run.sweep import apply_point, plan, split_columns, sweep
from ppcsim.scenario.load import ScenarioError
from ppcsim.scenario.partition import share_k

SW = dict(seed=0, data=WINE_LABELLED, clustering={"n_clusters": 3})
SCENARIO = scenario_toml("sw", LAB_SHOP_DRBT, **SW)


def test_split_and_share():
    assert split_columns(list("abcdefg"), 3) == [list("abc"), list("de"), list("fg")]
    assert share_k([8, 8, 7], 12) == [4, 4, 4]
    assert share_k([23], 12) == [12]
    assert share_k([6, 6, 6, 5], 12) == [3, 3, 3, 3]
    assert share_k([10, 9, 9, 9], 18) == [5, 5, 4, 4]
    assert sum(share_k([3, 1], 2)) == 2
    with pytest.raises(ValueError, match="cannot split 2 columns over 3 parties"):
        split_columns(["a", "b"], 3)


def test_apply_point_sets_every_drbt_party_and_resplits():
    raw = {"seed": 1, "parties": [
        {"name": "a", "columns": ["x0", "x1", "x2"], "method": "drbt", "k": 2},
        {"name": "b", "columns": ["x3", "x4"], "method": "none"},
    ], "sweep": {"k": [1]}}
    point = apply_point(raw, {"k": 1, "seed": 9})
    assert "sweep" not in point and point["seed"] == 9
    assert point["parties"][0]["k"] == 1 and "k" not in point["parties"][1]
    osbr = apply_point(raw, {"method": "osbr"})
    assert [p["method"] for p in osbr["parties"]] == ["osbr", "osbr"] and "k" not in osbr["parties"][0]
    split = apply_point(raw, {"parties": 2})
    assert [p["columns"] for p in split["parties"]] == [["x0", "x1", "x2"], ["x3", "x4"]]
    assert [(p["name"], p["method"], p["k"]) for p in split["parties"]] == [("p1", "drbt", 1), ("p2", "drbt", 1)]
    assert apply_point(raw, {"b.normalize": "minmax"})["parties"][1]["normalize"] == "minmax"
    assert raw["parties"][0]["k"] == 2  # the scenario table itself is untouched


def test_bad_grids_are_refused_with_every_problem_named(tmp_path):
    path = write_scenario(tmp_path, SCENARIO + """
        [sweep]
        kk = [1, 2]
        k = [2, 9]
        seed = []
    """)
    with pytest.raises(ScenarioError) as err:
        plan(path, tmp_path / "out")
    assert "unknown key 'kk'" in str(err.value) and "'seed' must be a non-empty list" in str(err.value)
    path = write_scenario(tmp_path, SCENARIO + "\n[sweep]\nk = [2, 5]\n")
    with pytest.raises(ScenarioError, match=r"point 1 \{'k': 5\}: \[\[parties\]\] 'shop': k = 5 is larger than the party's 4 columns"):
        plan(path, tmp_path / "out2")


def test_in_process_points_equal_real_multiprocess_runs(tmp_path):
    path = write_scenario(tmp_path, SCENARIO + "\n[sweep]\nk = [2, 3]\n")
    fast = sweep(path, tmp_path / "fast", in_process=True)
    real = sweep(path, tmp_path / "real", in_process=False)
    assert len(fast) == len(real) == 2
    for f, r in zip(fast, real):
        f.pop("seconds"), r.pop("seconds")
        # the wire is measured only where there is one: real runs carry it, above the serialized bytes
        assert f.pop("bytes_wire") is None and r.pop("bytes_wire") > r["bytes_serialized"]
        assert f == r
    # bytes: DRBT payload is m * k_j * 8 over both parties
    assert [r["bytes_payload"] for r in real] == [178 * 2 * 8 * 2, 178 * 3 * 8 * 2]
    assert (tmp_path / "real" / "runs" / "sw-001" / "report.json").exists()


def test_sweep_command_writes_csv_figures_and_html(tmp_path):
    """Three parameters of two values each (8 points, with the attacks): the grid's order, the CSV, both figures
    and the page."""
    path = write_scenario(tmp_path, SCENARIO + """
        [sweep]
        k = [1, 3]
        projection = ["gaussian", "sparse"]
        seed = [0, 1]
    """)
    out = tmp_path / "out"
    proc = run_ppc("sweep", path, "--out", out, "--in-process")
    assert proc.returncode == 0, proc.stderr
    assert "ppc sweep: 8/8" in proc.stderr
    with open(out / "sweep.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8
    assert [(r["param_k"], r["param_projection"], r["param_seed"], r["seed"]) for r in rows[:5]] == [
        ("1", "gaussian", "0", "0"), ("1", "gaussian", "1", "1"), ("1", "sparse", "0", "0"), ("1", "sparse", "1", "1"),
        ("3", "gaussian", "0", "0")]
    assert [r["output_dims"] for r in rows] == ["2"] * 4 + ["6"] * 4
    assert all(0 <= float(r["stress"]) < 1.5 and r["privacy_known_io_mean"] for r in rows)
    for name in ("stress_vs_dims", "utility_vs_privacy"):
        image = matplotlib.image.imread(out / "figures" / f"{name}.png")
        assert image.shape[0] > 200 and image.shape[1] > 300
        assert ET.parse(out / "figures" / f"{name}.svg").getroot().tag.endswith("svg")
    html = (out / "sweep.html").read_text()
    # the grid (3 parameters), then one row per run
    assert html.count("data:image/png;base64,") == 2 and html.count("<tr>") == 4 + 9
    assert "<h2>What was swept</h2>" in html and "<td class=t>projection</td><td class=t>gaussian, sparse</td>" in html
    assert "Every run of the sweep is drawn." in html and "class='wide nowrap'" in html  # scrolls sideways
    with open(out / "sweep.csv") as fh:
        assert all(r["bytes_wire"] == "" for r in csv.DictReader(fh))  # in-process: no wire to count


def test_run_html_report_is_self_contained(tmp_path):
    path = write_scenario(tmp_path, SCENARIO)
    proc = run_ppc("run", path, "--out", tmp_path / "run", "--html")
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "run" / "report.html").read_text()
    assert "<h2>Utility: what the disguise cost</h2>" in html and "<h2>Privacy: what an attacker recovers</h2>" in html
    # bytes, clusters, privacy per column, and one reconstruction figure per party
    assert html.count("data:image/png;base64,") == 5
    assert "src=\"http" not in html and "<link" not in html


def test_a_sweep_over_methods_draws_them_in_one_figure(tmp_path):
    from ppcsim.report.plots import sweep_figures

    path = write_scenario(tmp_path, SCENARIO + '\n[sweep]\nmethod = ["none", "drbt", "rotation"]\n')
    rows = sweep(path, tmp_path / "out", in_process=True)
    assert [r["methods"] for r in rows] == ["none", "drbt", "rotation"]
    # known input-output recovers 'none' and 'rotation' exactly; a projection below d only partly
    assert rows[0]["privacy_worst_mean"] < 1e-9 and rows[2]["privacy_worst_mean"] < 1e-9
    assert rows[1]["privacy_worst_mean"] > 0.01
    figures = sweep_figures(rows, tmp_path / "figures")
    assert "methods" in figures and matplotlib.image.imread(figures["methods"]).shape[0] > 200


def test_sweeping_method_keeps_every_other_field_of_a_party(tmp_path):
    """A party's own fields (the scenario schema's) survive a method sweep: float32 travels in every point."""
    path = write_scenario(tmp_path, name="sw", parties=changed(LAB_SHOP_DRBT, "shop", dtype="float32"), **SW,
                          sweep={"method": ["none", "drbt", "rotation"]})
    rows = sweep(path, tmp_path / "out", in_process=True, settings=Settings(attacks=False))
    for r in rows:  # shop: 178 rows of 4 values (none, rotation) or 3 (drbt), 4 bytes each
        with open(next((tmp_path / "out" / "points").glob(f"*-{r['point']:03d}.toml"))) as fh:
            assert 'dtype = "float32"' in fh.read()
    shop = [r["bytes_payload"] - 178 * (6 if r["methods"] != "drbt" else 4) * 8 for r in rows]
    assert shop == [178 * 4 * 4, 178 * 3 * 4, 178 * 4 * 4]


def test_sweeping_k_reaches_every_method_that_takes_k(tmp_path):
    path = write_scenario(tmp_path, name="sw", parties=changed(LAB_SHOP_DRBT, "shop", method="pca", projection=None),
                          **SW, sweep={"k": [1, 2]})
    rows = sweep(path, tmp_path / "out", in_process=True, settings=Settings(attacks=False))
    assert [r["output_dims"] for r in rows] == [2, 4]  # lab (drbt) and shop (pca) each at k


def test_a_misspelt_sweep_key_gets_a_suggestion(tmp_path):
    path = write_scenario(tmp_path, SCENARIO + '\n[sweep]\nprojetcion = ["sparse"]\n"lab.dtpye" = ["float32"]\n'
                          '"labb.k" = [1]\n')
    with pytest.raises(ScenarioError) as err:
        plan(path, tmp_path / "out")
    text = str(err.value)
    assert "did you mean 'projection'?" in text
    assert "'lab.dtpye'" in text and "did you mean 'dtype'?" in text
    assert "'labb.k' names no party" in text and "did you mean 'lab'?" in text


def test_parties_key_refuses_what_it_would_ignore(tmp_path):
    """'parties' replaces every party by p1..pN with the first party's settings: a field of a named party
    beside it, or a party reading its own file, would be silently ignored, so both are refused."""
    path = write_scenario(tmp_path, SCENARIO + '\n[sweep]\nparties = [2, 3]\n"lab.k" = [1, 2]\n')
    with pytest.raises(ScenarioError, match=r"'lab.k' cannot be swept beside 'parties'.*party 'lab' does not exist"):
        plan(path, tmp_path / "out")
    path = write_scenario(tmp_path, name="sw", parties=changed(LAB_SHOP_DRBT, "shop", data="shop.csv", id_column="id"),
                          **SW, sweep={"parties": [2]})
    with pytest.raises(ScenarioError, match=r"'parties' re-splits the columns of \[data\].*shop reads its own data"):
        plan(path, tmp_path / "out2")


def test_parties_key_says_what_it_rewrites(tmp_path):
    from ppcsim.run.sweep import describe_parties_rewrite, load_sweep

    path = write_scenario(tmp_path, SCENARIO + "\n[sweep]\nparties = [2, 4]\n")
    note = describe_parties_rewrite(*load_sweep(path))
    assert note == ("'parties' re-splits the 10 columns over p1..pN, each with lab's settings (method drbt, k 4); "
                    "its k 4 becomes the total output dims, shared out in proportion to the columns; "
                    "the other parties' k, projection are not used")
    rows = sweep(path, tmp_path / "out", in_process=True, settings=Settings(attacks=False), log=(log := io.StringIO()))
    assert f"ppc sweep: {note}" in log.getvalue()
    assert [r["parties"] for r in rows] == [2, 4] and [r["output_dims"] for r in rows] == [4, 4]


def test_each_sweep_figure_says_which_methods_it_leaves_out():
    from ppcsim.report.plots import left_out

    drbt = {"methods": "drbt", "output_dims": 4, "stress": 0.2, "ari": 0.8, "privacy_known_io_mean": 0.1,
            "privacy_multilateration_mean": None, "privacy_worst_mean": 0.1, "rows": 178, "bytes_payload": 9}
    osbr = {**drbt, "methods": "osbr", "output_dims": None, "privacy_known_io_mean": None,
            "privacy_multilateration_mean": 0.0, "privacy_worst_mean": 0.0}
    plain = {**drbt, "methods": "none", "privacy_known_io_mean": None, "privacy_worst_mean": None}
    rows = [drbt, osbr, plain]
    assert left_out("stress_vs_dims", rows) == {"osbr": "they send dissimilarities, not dimensions"}
    assert left_out("utility_vs_privacy", rows) == {
        "osbr": "the known input-output attack does not apply to what they send",
        "none": "the known input-output attack does not apply to what they send"}
    assert left_out("methods", rows) == {"none": "no attack was measured on them"}
    assert left_out("bytes_vs_rows", rows) == {}


def test_a_misspelt_party_key_beside_an_unnamed_party_is_an_error_not_a_traceback(tmp_path):
    path = write_scenario(tmp_path, """
        name = "unnamed"
        [data]
        source = "sklearn:wine"
        [[parties]]
        columns = ["alcohol", "malic_acid"]
        method = "drbt"
        k = 1
        [[parties]]
        name = "b"
        columns = ["ash"]
        method = "none"
        [clustering]
        algorithm = "kmeans"
        n_clusters = 3
        [sweep]
        "bb.k" = [1, 2]
    """)
    with pytest.raises(ScenarioError, match=r"'bb.k' names no party: unknown party 'bb' \(known: b; did you mean 'b'\?\)"):
        plan(path, tmp_path / "out")
