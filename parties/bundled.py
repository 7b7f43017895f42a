"""The small data sets scikit-learn ships as CSV files (iris, wine, breast_cancer), read from its package folder
without importing scikit-learn.

Importing scikit-learn (which imports scipy.stats and pandas) costs a process about 1.5 CPU-seconds, several
times the rest of a party's start-up, and a party reading ``sklearn:wine`` needs nothing else from it. The names,
values and classes are those of ``sklearn.datasets.load_<name>()`` (tests/parties/test_bundled.py compares them,
value for value); a data set not here, or a file not where or not as expected, is loaded through scikit-learn.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np

#: Each data set's file in scikit-learn's ``datasets/data`` folder, and its column names (``feature_names``).
SETS: dict[str, tuple[str, list[str]]] = {
    "iris": ("iris.csv", ["sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)"]),
    "wine": ("wine_data.csv", [
        "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
        "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280/od315_of_diluted_wines",
        "proline"]),
    "breast_cancer": ("breast_cancer.csv", [
        form.format(what) for form in ("mean {}", "{} error", "worst {}") for what in (
            "radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity", "concave points",
            "symmetry", "fractal dimension")]),
}


def bundled(name: str) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """Column names, data (float64) and classes (int) of scikit-learn's ``load_<name>()``, read from its CSV file
    as that function reads it (a header line ``rows,columns,class names...``, then one record a line, its class
    last); None where the file is not found as expected."""
    if name not in SETS:
        return None
    file, columns = SETS[name]
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return None
    try:
        with open(Path(spec.origin).parent / "datasets" / "data" / file, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            head = next(reader)
            lines = list(reader)
        rows, width = int(head[0]), int(head[1])
    except (OSError, StopIteration, IndexError, ValueError):
        return None
    if width != len(columns) or len(lines) != rows or any(len(line) != width + 1 for line in lines):
        return None
    data = np.asarray([line[:-1] for line in lines], dtype=np.float64)
    target = np.asarray([int(line[-1]) for line in lines], dtype=int)
    return list(columns), data, target
