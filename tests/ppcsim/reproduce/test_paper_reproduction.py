"""``ppcsim.reproduce.reproduction``: the paper's test vectors, the encoding, the vertical split, the report.

Nothing here reads the UCI files: they are replaced by small in-memory or
generated CSVs with the same layout.
"""

from __future__ import annotations

import functools
import io
import json

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from parties.methods.drbt import DRBT
from ppcsim.cli import parser as cli
from ppcsim.reproduce import reproduction as rp
from ppcsim.scenario.load import party_seeds
from ppcsim.scenario.partition import share_k, split_sizes

#: The exact orthogonality probabilities (an enumeration of a few CPU seconds at d = 6), made once per process for
#: every test here that needs them.
exact_orthogonality = functools.cache(rp.rp2_orthogonal_exact)


@pytest.fixture
def small_orthogonality_count(monkeypatch):
    """``reproduce`` with its RP2 orthogonality count cut from 4,000,000 draws to 1,000 (most of a smoke-sized
    reproduction's time) and the exact probabilities made once; test_rp2_is_rarely_orthogonal and
    test_the_exact_orthogonality_probability check both in full."""
    count = rp.rp2_orthogonal
    monkeypatch.setattr(rp, "rp2_orthogonal", lambda: count(draws=1000))
    monkeypatch.setattr(rp, "rp2_orthogonal_exact", exact_orthogonality)


def test_table1_reproduces_eq11_exactly():
    t = rp.table1_eq11()
    assert t["max_abs_diff"] < 5e-5
    np.testing.assert_allclose(t["ours"], rp.EQ11, atol=5e-5, rtol=0)


@pytest.fixture(scope="module")
def table2_small():
    return rp.table2(5)


def test_table2_stress_grows_as_k_falls(table2_small):
    for how in rp.NORMALIZATIONS:
        for projection in rp.PROJECTIONS:
            cells = table2_small[how][projection]
            assert cells["3"]["mean"] > cells["5"]["mean"], (how, projection)


def test_table2_values_are_finite_and_bounded(table2_small):
    for how in rp.NORMALIZATIONS:
        for projection in (*rp.PROJECTIONS, rp.ORTHONORMAL):
            for k in rp.TABLE2_K:
                cell = table2_small[how][projection][str(k)]
                values = np.array(cell["values"])
                assert values.shape == (5,)
                assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1.5).all()
                assert cell["min"] <= cell["mean"] <= cell["max"]
    # the paper's k = 6 zero is not a random projection; an orthonormal R gives it
    assert table2_small["none"]["gaussian"]["6"]["min"] > 0.01
    assert table2_small["none"][rp.ORTHONORMAL]["6"]["max"] < 1e-12
    assert table2_small["closer"] in rp.NORMALIZATIONS


def test_encode_categorical_sorted_codes_with_missing_as_category():
    text = "class,shape,root\np,x,?\ne,b,c\ne,x,b\np,f,?\n"
    enc = rp.encode_categorical(io.StringIO(text), header=True)
    assert enc.columns == ["class", "shape", "root"]
    assert enc.categories == [["e", "p"], ["b", "f", "x"], ["?", "b", "c"]]
    np.testing.assert_array_equal(enc.X, [[1, 2, 0], [0, 0, 2], [0, 2, 1], [1, 1, 0]])
    assert enc.X.dtype == np.float64


def test_encode_categorical_without_header_keeps_digit_values():
    enc = rp.encode_categorical(io.StringIO("0,g,2\n1,l,0\n0,l,1\n"), header=False)
    assert enc.columns == ["c0", "c1", "c2"]
    np.testing.assert_array_equal(enc.X, [[0, 0, 2], [1, 1, 0], [0, 1, 1]])


def test_encode_categorical_rejects_ragged_rows():
    with pytest.raises(ValueError, match="data row 2 has 2 fields, expected 3"):
        rp.encode_categorical(io.StringIO("a,b,c\nd,e\n"), header=False)


@pytest.mark.parametrize(
    ("d", "k", "expected"),
    [
        (23, 12, {1: ([23], [12]), 2: ([12, 11], [6, 6]), 3: ([8, 8, 7], [4, 4, 4]), 4: ([6, 6, 6, 5], [3, 3, 3, 3])}),
        (37, 18, {1: ([37], [18]), 2: ([19, 18], [9, 9]), 3: ([13, 12, 12], [6, 6, 6]),
                  4: ([10, 9, 9, 9], [5, 5, 4, 4])}),
    ],
)
def test_split_and_k_allocation(d, k, expected):
    for parties, (columns, ks) in expected.items():
        assert split_sizes(d, parties) == columns
        assert share_k(columns, k) == ks
        assert sum(ks) == k and all(1 <= kj <= dj for kj, dj in zip(ks, columns))


def test_allocation_rejects_impossible_k():
    with pytest.raises(ValueError, match="k must be between the number of parties"):
        share_k([3, 3], 7)
    with pytest.raises(ValueError, match="parties must be between 1 and d"):
        split_sizes(3, 4)


def test_one_party_block_is_the_drbt_projection():
    X = np.random.default_rng(0).normal(size=(30, 8))
    joined = rp.project_blocks(X, [8], [5], "gaussian", 7)
    alone = DRBT(random_state=party_seeds(7, 1)[0], k=5, projection="gaussian").disguise(X, list("abcdefgh"))[0].array
    np.testing.assert_array_equal(joined, alone)
    two = rp.project_blocks(X, [4, 4], [3, 2], "sparse", 7)
    assert two.shape == (30, 5)


def test_parallel_and_serial_runs_agree():
    X = np.random.default_rng(1).integers(0, 4, size=(60, 9)).astype(float)
    d = pdist(X)
    tasks = [((9,), (5,), "gaussian", s) for s in range(4)] + [((5, 4), (3, 2), "sparse", s) for s in range(4)]
    serial = rp.run_tasks(X, d, tasks, jobs=1, label="t", progress=lambda _: None)
    parallel = rp.run_tasks(X, d, tasks, jobs=2, label="t", progress=lambda _: None)
    assert serial == parallel


def _write_categorical(path, rows, columns, *, header, seed):
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefg?"))
    cells = letters[rng.integers(0, 5, size=(rows, columns))]
    lines = [",".join(f"h{j}" for j in range(columns))] if header else []
    path.write_text("\n".join(lines + [",".join(r) for r in cells]) + "\n")


def test_reproduce_writes_report_and_records_seeds(tmp_path, small_orthogonality_count):
    mushroom, chess = tmp_path / "m.csv", tmp_path / "c.csv"
    _write_categorical(mushroom, 40, 23, header=True, seed=1)
    _write_categorical(chess, 30, 37, header=False, seed=2)
    lines = []
    results = rp.reproduce(mushroom, chess, tmp_path / "out", seeds=2, jobs=1, progress=lines.append,
                           table2_draws=20, thesis=False)
    saved = json.loads((tmp_path / "out" / "reproduction.json").read_text())
    assert saved["seeds"] == [0, 1] == results["seeds"]
    assert saved["command"].startswith("ppc reproduce --mushroom")
    assert saved["fig1"]["mushroom"]["k"] == [23, 21, 18, 15]
    assert set(saved["fig2"]["chess"]["gaussian"]) == {"1", "2", "3", "4"}
    assert saved["fig2"]["chess"]["splits"]["4"] == {"columns": [10, 9, 9, 9], "k": [5, 5, 4, 4]}
    assert all(len(c["values"]) == 2 for c in saved["fig1"]["chess"]["sparse"].values())
    text = (tmp_path / "out" / "reproduction.md").read_text()
    for heading in ("## Summary", "## Table 1 and eq. 11", "## Table 2", "## Fig. 1", "## Fig. 2", "## Runtime"):
        assert heading in text
    assert "seeds 0..1" in text
    assert any("projections" in line for line in lines)


def test_reproduce_without_uci_files(tmp_path, small_orthogonality_count):
    results = rp.reproduce(None, None, tmp_path, seeds=3, progress=lambda _: None, table2_draws=30, thesis=False)
    assert results["seeds"] == [0, 1, 2]
    assert "fig1" not in results and "thesis000" not in results
    assert results["table2"]["draws"] == 30
    text = (tmp_path / "reproduction.md").read_text()
    assert "Not run: no UCI file was given" in text
    assert "## Eq. 6: stress, or stress squared?" in text and "## Table 3" in text


def test_cli_reports_missing_file(tmp_path, capsys):
    assert cli.main(["reproduce", "--mushroom", str(tmp_path / "nope.csv"), "--out", str(tmp_path)]) == 2
    assert "--mushroom: no such file" in capsys.readouterr().err


def test_cli_reports_malformed_file_before_running(tmp_path, capsys):
    bad = tmp_path / "chess.csv"
    bad.write_text("0,1,0\n1,0\n")
    assert cli.main(["reproduce", "--chess", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "data row 2 has 2 fields, expected 3" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_table3_rp2_is_eq9_with_unit_columns():
    t3 = rp.table3_rp2()
    assert t3["max_abs_diff"] < 0.01  # the printed digits ...
    assert (t3["truncated_matches"], t3["rounded_matches"], t3["values"]) == (15, 13, 15)  # ... truncated, not rounded
    assert [c["signs"] for c in t3["columns"]] == [[0, 0, 0, 0, 1, 0], [-1, -1, -1, -1, 0, 0], [-1, 0, -1, 0, 0, 0]]
    assert t3["achlioptas_max_abs_diff"] > 1.0


def test_table2_places_the_paper_under_both_readings_of_eq6(table2_small):
    for how in rp.NORMALIZATIONS:
        cell = table2_small[how]["gaussian"]["5"]
        values = np.array(cell["values"])
        assert cell["paper_percentile"] == 100 * np.mean(values <= 0.0223)
        assert cell["paper_percentile_squared"] == 100 * np.mean(values**2 <= 0.0223)
        assert cell["mean_squared"] == pytest.approx(np.mean(values**2), rel=1e-5)
        readings = table2_small["readings"][how]
        assert readings["stress"]["of"] == 6 and readings["favoured"] in ("stress", "stress_squared")
    assert rp.SPARSE_UNIT in table2_small["none"]


def test_format_command_names_no_folder(tmp_path):
    command = rp.format_command({"mushroom": tmp_path / "data" / "mushroom.csv"}, tmp_path / "docs", 50)
    assert command == "ppc reproduce --mushroom mushroom.csv --out docs --seeds 50"
    assert str(tmp_path) not in command


def test_thesis_tables_match_the_thesis_where_the_methods_are_defined():
    from ppcsim.reproduce.thesis000 import tables

    t = tables(2, progress=lambda _: None)
    wine, iris = t["wine"]["cells"], t["iris"]["cells"]
    assert t["wine"]["p"] == 12 and t["iris"]["p"] == 3
    # 000 Table 5.8: PCA 0.97 / 0.93 and NMDS 0.98 / 0.93 on wine / iris
    assert abs(wine["pca"]["np"]["mean"] - 0.97) < 0.02 and abs(wine["nmds"]["np"]["mean"] - 0.98) < 0.02
    assert abs(iris["pca"]["np"]["mean"] - 0.93) < 0.02 and abs(iris["nmds"]["np"]["mean"] - 0.93) < 0.02
    # centred data: plain SVD is PCA up to signs, so it keeps the same neighbours
    assert wine["svd"]["np"]["mean"] == pytest.approx(wine["pca"]["np"]["mean"])
    # orthonormal RP near the thesis' 0.85 on wine; Gaussian RP1 well below it
    assert abs(wine["rp_orthonormal"]["np"]["mean"] - 0.85) < 0.06 and wine["rp"]["np"]["mean"] < 0.7
    assert 85 < wine["x"]["knn"]["mean"] <= 100 and wine["x"]["knn"]["n"] == 2
    from ppcsim.reproduce.markdown import _thesis_section

    text = _thesis_section(t)
    assert "| pca | 0.97 |" in text and "**Where we cannot match.**" in text
    # 000 Table 5.8's DCT column: fifteen data sets, 0.23 (BCW) to 0.33 (Hepatitis)
    assert "0.23 (BCW) to 0.33 (Hepatitis) over its 15 data sets" in text and "twelve" not in text
    assert "picked unscaled" in text and "picked after the sqrt(n/p) scale" in text


@pytest.mark.parametrize("pick", ["scaled", "unscaled", "unit_variance"])
def test_least_stress_of_20_picks_by_the_stated_convention(pick):
    """000 §5.3.4: of 20 orthonormal draws the least stress (004 eq. 6), on drbt's scaled block (drbt's own
    tries = 20), on XQ, or on XR with R = sqrt(n) Q, orthogonal columns of unit-variance entries as eq. 2.18
    states it."""
    from parties.normalize import normalize
    from ppcsim.reproduce.thesis000 import perturb

    X = normalize(np.random.default_rng(5).normal(size=(40, 4)) * [1, 2, 3, 4], "zscore")
    n, p = 4, 3
    d = pdist(X)
    stresses = []
    for i in range(20):  # drbt's draw i: the seed itself, then [seed, i]
        Y = DRBT(k=p, projection="orthonormal", random_state=7 if i == 0 else [7, i]).disguise(X, ["a", "b", "c", "e"])[0].array
        Q = Y / np.sqrt(n / p)  # X Q, Q with orthonormal columns
        np.testing.assert_allclose(pdist(Q) <= d + 1e-12, True)  # an orthonormal frame only shrinks
        dhat = pdist({"scaled": Y, "unscaled": Q, "unit_variance": Q * np.sqrt(n)}[pick])
        stresses.append((np.sqrt(np.sum((dhat - d) ** 2) / np.sum(d**2)), i, Y))
    expected = min(stresses, key=lambda s: s[0])[2]
    column = {"scaled": "rp_best20", "unscaled": "rp_best20_unscaled", "unit_variance": "rp_best20_unitvar"}[pick]
    np.testing.assert_allclose(perturb(column, X, p, 7), expected, rtol=1e-12, atol=1e-12)
    if pick == "scaled":
        method = DRBT(k=p, projection="orthonormal", tries=20, random_state=7)
        np.testing.assert_array_equal(method.disguise(X, ["a", "b", "c", "e"])[0].array, expected)
        assert method.local_stress_ == pytest.approx(min(s[0] for s in stresses))


def test_rp2_is_rarely_orthogonal():
    """A 6 x 6 eq. 9 matrix keeps every distance about once in 1e5 draws (unit columns), counted independently."""
    o = rp.rp2_orthogonal(draws=200_000, seed=3)
    rng = np.random.default_rng(3)
    signs = rng.choice(np.array([1.0, 0.0, -1.0]), size=(200_000, 6, 6), p=[1 / 6, 2 / 3, 1 / 6])
    norms = np.linalg.norm(signs, axis=1, keepdims=True)
    unit = signs / np.where(norms > 0, norms, 1.0)
    eye = np.eye(6)
    isometry_unit = np.all(np.isclose(np.einsum("nij,nik->njk", unit, unit), eye), axis=(1, 2))
    achlioptas = np.sqrt(3.0) * signs / np.sqrt(6)
    isometry_sparse = np.all(np.isclose(np.einsum("nij,nik->njk", achlioptas, achlioptas), eye), axis=(1, 2))
    assert o["orthogonal"] == {"sparse-unit": int(isometry_unit.sum()), "sparse": int(isometry_sparse.sum())}
    assert 0 < o["orthogonal"]["sparse-unit"] < 20  # about 1.09e-5 of draws (exact below): rare, not never


def test_the_exact_orthogonality_probability():
    """rp2_orthogonal_exact against a brute force over all 3^9 matrices at d = 3, then d = 6's 1.09e-5."""
    import itertools

    total = {"sparse-unit": 0.0, "sparse": 0.0}
    prob = {1: 1 / 6, 0: 2 / 3, -1: 1 / 6}
    for entries in itertools.product((1, 0, -1), repeat=9):
        R = np.array(entries, dtype=float).reshape(3, 3)
        gram = R.T @ R
        if np.all(np.diag(gram) > 0) and np.all(gram[~np.eye(3, dtype=bool)] == 0):
            p = float(np.prod([prob[e] for e in entries]))
            total["sparse-unit"] += p
            total["sparse"] += p if np.all(np.diag(gram) == 1) else 0.0
    small = exact_orthogonality(3)["probability"]
    assert small == pytest.approx(total, rel=1e-12)
    exact = exact_orthogonality(6)
    assert exact["fraction"]["sparse-unit"] == "46659102840335/4269358515114641664"
    assert round(exact["probability"]["sparse-unit"], 7) == 1.09e-5 and exact["probability"]["sparse"] < 2e-8
