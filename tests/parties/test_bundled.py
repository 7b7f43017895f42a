"""scikit-learn's CSV data sets read without importing it (``parties.bundled``) are what its loaders return."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn import datasets

from conftest import ROOT
from parties.bundled import SETS, bundled
from parties.data import load_builtin


@pytest.mark.parametrize("name", sorted(SETS))
def test_a_bundled_set_is_sklearns_name_for_name_value_for_value(name):
    columns, data, target = bundled(name)
    bunch = getattr(datasets, f"load_{name}")()
    assert columns == list(bunch.feature_names)
    assert data.dtype == bunch.data.dtype and data.shape == bunch.data.shape
    assert np.array_equal(data, bunch.data)  # exactly: the same text parsed the same way
    assert target.dtype == bunch.target.dtype and np.array_equal(target, bunch.target)
    loaded = load_builtin(name)
    assert loaded[0] == columns and np.array_equal(loaded[1], data) and np.array_equal(loaded[2], target)


def test_a_set_not_shipped_as_csv_is_loaded_through_sklearn():
    assert bundled("digits") is None
    columns, data, target = load_builtin("digits")
    assert columns[0] == "pixel_0_0" and data.shape == (1797, 64) and np.array_equal(target, datasets.load_digits().target)


def test_a_missing_file_falls_back_to_sklearn(monkeypatch):
    monkeypatch.setitem(SETS, "wine", ("no_such_file.csv", SETS["wine"][1]))
    assert bundled("wine") is None
    assert np.array_equal(load_builtin("wine")[1], datasets.load_wine().data)


@pytest.mark.processes
def test_loading_wine_imports_no_sklearn_module():
    code = ("import sys; from parties.data import load_builtin; load_builtin('wine'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'pandas', 'scipy')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
