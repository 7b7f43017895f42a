"""003 Table I (``ppcsim.reproduce.table_i003``) and 000 Tables 5.11-5.12 (``ppcsim.reproduce.classify000``):
Hepatitis from a user's UCI file, the rows' accuracies equal to scikit-learn's, and the thesis' own ranks."""

from __future__ import annotations

import numpy as np
import pytest

from parties.errors import PartyError
from parties.normalize import normalize
from ppcsim.reproduce import classify000, table_i003


def write_hepatitis(path, rows: int = 40, seed: int = 0) -> np.ndarray:
    """A file in the form of UCI's hepatitis.data (no header, class first, '?' for missing); returns the values
    written, NaN where '?'."""
    rng = np.random.default_rng(seed)
    values = np.column_stack([rng.integers(1, 3, rows), rng.integers(20, 70, rows), rng.integers(1, 3, (rows, 12)),
                              rng.normal(1.2, 0.5, rows).round(2), rng.integers(30, 250, rows),
                              rng.integers(14, 400, rows), rng.normal(3.8, 0.6, rows).round(1),
                              rng.integers(20, 100, rows), rng.integers(1, 3, rows)]).astype(float)
    values[3, 15] = values[7, 18] = values[11, 18] = np.nan  # alk_phosphate, protime
    lines = [",".join("?" if np.isnan(v) else f"{v:g}" for v in row) for row in values]
    path.write_text("\n".join(lines) + "\n")
    return values


def test_hepatitis_is_read_as_a_headerless_uci_file_with_a_missing_rule(tmp_path):
    path = tmp_path / "hepatitis.data"
    values = write_hepatitis(path)
    data, labels = table_i003.hepatitis(path)
    assert data.shape == (40, 19) and labels.tolist() == (values[:, 0] - 1).astype(int).tolist()
    protime = values[:, 18]
    assert data[7, 17] == data[11, 17] == pytest.approx(np.nanmean(protime))  # filled with the column's mean
    assert table_i003.hepatitis(path, "drop")[0].shape == (37, 19)
    with pytest.raises(PartyError, match=r"hepatitis.data, column 'alk_phosphate', line 4: a missing value"):
        table_i003.hepatitis(path, "refuse")
    path.write_text("?" + path.read_text()[1:])
    with pytest.raises(PartyError, match="column 'class', line 1: a missing class"):
        table_i003.hepatitis(path)


def test_table_i_rows_are_scikit_learns_linear_svm_on_x_and_on_the_owners_configuration(tmp_path):
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import SVC

    path = tmp_path / "hepatitis.data"
    write_hepatitis(path)
    data, labels = table_i003.hepatitis(path)
    found = table_i003.table_i({"hepatitis": (data, labels)}, seeds=1, drops=(0, 1), progress=lambda _: None,
                               cache=tmp_path / "cache")
    X = normalize(data, "zscore")
    folds = StratifiedKFold(10, shuffle=True, random_state=0)
    cells = found["data"]["hepatitis"]["cells"]
    assert cells["0"]["mean"] == pytest.approx(cross_val_score(SVC(kernel="linear", C=1), X, labels, cv=folds).mean())
    Y = np.load(tmp_path / "cache" / "hepatitis-18.npz")["Y"]
    assert Y.shape == (40, 18)
    assert cells["1"]["mean"] == pytest.approx(cross_val_score(SVC(kernel="linear", C=1), Y, labels, cv=folds).mean())
    assert 0 < cells["1"]["se"] < 0.2 and 0 <= cells["1"]["stress_1"] < 0.2
    text = table_i003.section(found, "python -m ppcsim.reproduce.table_i003 --seeds 1")
    assert "| X(n) | 0.8099 / " in text and "| Y(n-1) | 0.8314 / " in text and "| Y(n-2) | - |" in text


#: The ranks Tables 5.11 and 5.12 print beside each accuracy (RP, PCA, SVD, NMDS, DCT).
PRINTED_RANKS = {
    ("5.11", "wine"): [4, 2, 3, 1, 5], ("5.11", "wisconsin"): [4, 2, 3, 1, 5], ("5.11", "iris"): [4, 2, 3, 1, 5],
    ("5.11", "pima"): [1.5, 3, 4, 1.5, 5], ("5.11", "crx"): [4, 2, 3, 1, 5], ("5.11", "hepatitis"): [4, 1, 3, 2, 5],
    ("5.12", "wisconsin"): [3, 2, 4, 1, 5], ("5.12", "pima"): [4, 2, 3, 1, 5], ("5.12", "crx"): [4, 2, 1, 3, 5],
    ("5.12", "hepatitis"): [4, 2, 3, 1, 5],
}


@pytest.mark.parametrize("table, name", list(PRINTED_RANKS))
def test_friedman_ranks_are_the_thesis_own(table, name):
    """§5.3.4.1's ranks (1 = most accurate, ties share their mean) give the ranks the thesis prints."""
    paper = classify000.TABLES[table][1][name]
    assert classify000.ranks(list(paper)) == PRINTED_RANKS[table, name]


def test_tables_5_11_on_iris_average_the_methods_accuracy_over_p(tmp_path):
    from parties.data import load_builtin
    from ppcsim.reproduce.thesis000 import perturb

    found = classify000.tables(["iris"], seeds=1, cache=tmp_path, progress=lambda _: None)
    row = found["tables"]["5.11"]["iris"]
    assert row["dims"] == [1, 2, 3] and "iris" not in found["tables"]["5.12"]  # iris has three classes
    _, data, labels = load_builtin("iris")
    X = normalize(data, "zscore")
    pca = np.mean([classify000.score(perturb("pca", X, p, 0), np.asarray(labels), "knn4", 0)[0] for p in (1, 2, 3)])
    assert row["cells"]["pca"]["mean"] == pytest.approx(pca)
    assert sum(c["rank"] for c in row["cells"].values()) == 15
    assert row["cells"]["svd"]["rank"] == row["cells"]["pca"]["rank"]  # our SVD of centred data is PCA: a tie
    text = classify000.section(found, "python -m ppcsim.reproduce.classify000 --seeds 1")
    assert "| Iris, p = 1..3 | 89.33 (4) / " in text and "Table 5.12" not in text


def test_the_documented_data_table_loads_what_the_reproduction_reads(tmp_path):
    """docs/data.md's [data] table for UCI's hepatitis.data (column_names, missing = "mean") gives a party the
    matrix ``table_i003.hepatitis`` reproduces Table I from."""
    from conftest import party_table, write_scenario
    from parties.sources import load_party_data
    from ppcsim.scenario.load import load_scenario

    write_hepatitis(tmp_path / "hepatitis.data")
    features = list(table_i003.HEPATITIS_COLUMNS[1:])
    path = write_scenario(tmp_path, name="hepatitis", parties=[party_table("clinic", features, "nmds", dims=18)],
                          data={"source": "hepatitis.data", "column_names": list(table_i003.HEPATITIS_COLUMNS),
                                "label_column": "class", "missing": "mean"})
    cfg = next(iter(load_scenario(path).parties))
    block = load_party_data(cfg)
    data, _ = table_i003.hepatitis(tmp_path / "hepatitis.data")
    assert block.columns == features and np.array_equal(block.X, data) and block.ids.tolist() == list(range(40))
