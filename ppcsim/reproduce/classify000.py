"""Alotaibi's thesis ("000") Tables 5.11 and 5.12: 4-NN and linear-SVM accuracy on the perturbed data, averaged
over the reduced dimensions p, per method and data set, with the Friedman ranks of §5.3.4.5.

000 §5.3.4.1 projects each z-scored data set to several p "based on the
total number of attributes" with RP (the least-stress of 20 draws), PCA,
SVD, NMDS and DCT, and reports 10-fold cross-validated accuracy (30 runs),
4-NN in Table 5.11 and linear SVM (C = 1, binary classes only) in Table
5.12, averaged over p; each row ranks the five methods (1 = most accurate,
ties share their mean rank). The thesis does not list its p: we average over
p = n - 6 .. n - 1 (those of at least 1), the dimensions 003 Table I uses,
so the NMDS configurations are those of ``ppcsim.reproduce.table_i003``
(the same cache serves both).

Offline we have Wine and Iris (scikit-learn), BCW, Pima and Credit Approval
(KEEL's copies, ``keel:``), and Hepatitis from a user's copy of UCI's file
(``table_i003.hepatitis``). Table 5.12's twelve Spambase rows (``spam55`` ..
``spam2``: Spambase's 4,601 records at p = 55 .. 2) are left out: the
data owner's non-metric MDS of 4,597 records (``keel:spambase``) holds
4,597 x 4,597 matrices through hundreds of SMACOF iterations per p, hours on
the machine these tables were made on. scikit-learn's WDBC
(``sklearn:breast_cancer``) is not the thesis' BCW (the original Wisconsin
data), so it is not used for BCW's row. Run as::

    python -m ppcsim.reproduce.classify000 --seeds 3 --cache CACHE [--hepatitis hepatitis.data]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from parties.normalize import normalize
from ppcsim.reproduce.table_i003 import FOLDS, embed, hepatitis, keel_data

#: The five perturbations in the tables' order, as ``thesis000.perturb`` names them (NMDS through ``embed``).
METHODS = {"rp_best20": "RP", "pca": "PCA", "svd": "SVD", "nmds": "NMDS", "dct": "DCT"}
#: 000 Table 5.11 (4-NN, %), the rows of the data sets we can load.
TABLE_5_11: dict[str, tuple[float, ...]] = {
    "wine": (89.77, 93.39, 90.28, 94.07, 82.76),
    "wisconsin": (93.45, 95.59, 94.84, 95.77, 92.39),
    "iris": (89.33, 92.31, 91.80, 92.64, 82.03),
    "pima": (70.34, 69.89, 69.48, 70.34, 66.79),
    "crx": (78.82, 80.88, 79.55, 81.79, 77.30),
    "hepatitis": (80.40, 84.00, 80.91, 83.89, 72.83),
}
#: 000 Table 5.12 (linear SVM, %), the rows of the data sets we can load.
TABLE_5_12: dict[str, tuple[float, ...]] = {
    "wisconsin": (95.29, 95.60, 95.13, 95.63, 80.68),
    "pima": (74.53, 75.41, 74.88, 75.69, 70.46),
    "crx": (83.41, 85.09, 85.16, 84.90, 69.96),
    "hepatitis": (84.31, 85.72, 85.13, 85.77, 82.09),
}
NAMES = {"wine": "Wine", "iris": "Iris", "wisconsin": "BCW (keel:wisconsin)", "pima": "Pima Diabetes (keel:pima)",
         "crx": "Credit Approval (keel:crx)", "hepatitis": "Hepatitis (user's UCI file)"}
#: Each table's classifier (``ppcsim.evaluate.classification.CLASSIFIERS``) and data sets.
TABLES = {"5.11": ("knn4", TABLE_5_11), "5.12": ("svm_linear", TABLE_5_12)}

Progress = Callable[[str], object]


def dims(n: int) -> list[int]:
    """The p averaged over: n - 6 .. n - 1, those of at least 1."""
    return list(range(max(1, n - 6), n))


def load(name: str, hepatitis_path: Path | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Raw data and classes of ``name``; None where it cannot be loaded offline (no keel extra, no file)."""
    if name in ("wine", "iris"):
        from parties.data import load_builtin

        _, data, labels = load_builtin(name)
        return data, np.asarray(labels)
    if name == "hepatitis":
        return None if hepatitis_path is None else hepatitis(hepatitis_path)
    return keel_data(name)


def score(block: np.ndarray, labels: np.ndarray, classifier: str, seed: int) -> tuple[float, float]:
    """Stratified 10-fold accuracy (%) of ``classifier`` on ``block`` (folds shuffled by ``seed``) and the
    standard error of that estimate (the fold accuracies' standard deviation over sqrt(10))."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from ppcsim.evaluate.classification import CLASSIFIERS

    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
    scores = 100 * cross_val_score(CLASSIFIERS[classifier].make(), block, labels, cv=folds)  # type: ignore[arg-type]
    return float(scores.mean()), float(scores.std(ddof=1) / np.sqrt(FOLDS))


def perturbed(method: str, X: np.ndarray, p: int, seed: int, cache: Path | None, name: str) -> np.ndarray:
    """Y of ``method`` at p dimensions: NMDS through ``table_i003.embed`` (cached), the others as the
    thesis tables make them (``thesis000.perturb``)."""
    from ppcsim.reproduce.thesis000 import perturb

    if method == "nmds":
        return embed(X, p, cache, name)["Y"]
    return perturb(method, X, p, seed)


def ranks(values: list[float]) -> list[float]:
    """§5.3.4.1's Friedman ranks of one row: 1 for the most accurate, ties sharing their mean rank."""
    from scipy.stats import rankdata

    return [float(r) for r in rankdata([-v for v in values], method="average")]


def tables(names: list[str], seeds: int = 3, cache: Path | None = None, hepatitis_path: Path | None = None,
           progress: Progress = print) -> dict:
    """Tables 5.11 and 5.12 on the data sets ``names`` that load: per table, data set and method the accuracy
    averaged over :func:`dims` and seeds, its standard error, and the rank."""
    out: dict = {"seeds": seeds, "tables": {t: {} for t in TABLES}}
    for name in names:
        loaded = load(name, hepatitis_path)
        if loaded is None:
            continue
        data, labels = loaded
        X = normalize(data, "zscore")
        wanted = {t: c for t, (c, paper) in TABLES.items() if name in paper}
        cells: dict = {t: {m: {"mean": [], "se": []} for m in METHODS} for t in wanted}
        for p in dims(X.shape[1]):
            for method in METHODS:
                runs = range(seeds) if method == "rp_best20" else range(1)
                blocks = [perturbed(method, X, p, s, cache, name) for s in runs]
                for table, classifier in wanted.items():
                    for seed in range(seeds):
                        mean, se = score(blocks[seed % len(blocks)], labels, classifier, seed)
                        cells[table][method]["mean"].append(mean)
                        cells[table][method]["se"].append(se)
            progress(f"  thesis tables 5.11-5.12, {name}: p = {p}")
        for table, by in cells.items():
            row = {m: {"mean": float(np.mean(v["mean"])), "se": float(np.mean(v["se"]))} for m, v in by.items()}
            for m, r in zip(METHODS, ranks([row[m]["mean"] for m in METHODS])):
                row[m]["rank"] = r
            out["tables"][table][name] = {"rows": int(X.shape[0]), "columns": int(X.shape[1]),
                                          "dims": dims(X.shape[1]), "cells": row}
    return out


def within(paper: float, cell: dict) -> bool:
    """Whether the thesis' number and ours differ by at most two standard errors of one 10-fold estimate."""
    return abs(paper - cell["mean"]) <= 2 * cell["se"] + 1e-9


def section(result: dict, command: str) -> str:
    """The Markdown section of ``docs/reproduction.md``: both tables, the thesis against ours, with verdicts."""
    out = ["## Alotaibi's thesis, Tables 5.11 and 5.12: 4-NN and linear SVM on the perturbed data, averaged over p",
           "",
           f"`{command}`: stratified 10-fold cross-validation reshuffled {result['seeds']} times (RP redrawn "
           "each time: the least-stress of 20 orthonormal draws, `drbt` with `tries = 20`, 000 §5.3.4.1), "
           "z-scored columns, accuracy in % averaged over p = n - 6 .. n - 1 (the thesis does not list its p). "
           "NMDS is the data owner's `nmds` (classical start), the configurations of 003 Table I above. Each "
           "cell reads *thesis (rank) / ours ± standard error (rank)*, the standard error that of one 10-fold "
           "estimate, averaged over p and shuffles; **bold** where the two differ by more than two of them. "
           "The rank is §5.3.4.1's Friedman rank within the row (1 = most accurate, ties averaged)."]
    for table, (classifier, paper) in TABLES.items():
        rows = result["tables"].get(table, {})
        if not rows:
            continue
        head = ["data set", *METHODS.values()]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        agree = total = same_rank = 0
        for name, block in rows.items():
            printed = ranks(list(paper[name]))
            cells = [f"{NAMES[name]}, p = {block['dims'][0]}..{block['dims'][-1]}"]
            for i, method in enumerate(METHODS):
                c = block["cells"][method]
                ok = within(paper[name][i], c)
                agree, total, same_rank = agree + ok, total + 1, same_rank + (printed[i] == c["rank"])
                text = f"{paper[name][i]:.2f} ({printed[i]:g}) / {c['mean']:.2f} ± {c['se']:.2f} ({c['rank']:g})"
                cells.append(text if ok else f"**{text}**")
            lines.append("| " + " | ".join(cells) + " |")
        mean_rank = {m: np.mean([b["cells"][m]["rank"] for b in rows.values()]) for m in METHODS}
        paper_rank = {m: np.mean([ranks(list(paper[n]))[i] for n in rows]) for i, m in enumerate(METHODS)}
        what = "4-NN" if classifier == "knn4" else "linear SVM (C = 1)"
        out += ["", f"**Table {table}**, {what}:", "", *lines, "",
                f"{agree} of {total} cells within two standard errors; {same_rank} of {total} ranks equal. Mean rank "
                "over these rows, thesis / ours: "
                + ", ".join(f"{METHODS[m]} {paper_rank[m]:.2f} / {mean_rank[m]:.2f}" for m in METHODS) + "."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m ppcsim.reproduce.classify000``: compute Tables 5.11-5.12 and print their Markdown section."""
    parser = argparse.ArgumentParser(prog="python -m ppcsim.reproduce.classify000", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="shuffles of the folds and RP draws (default: 3)")
    parser.add_argument("--cache", type=Path, help="a folder keeping the NMDS configurations (shared with table_i003)")
    parser.add_argument("--hepatitis", type=Path, help="UCI's hepatitis.data (no header, '?' for missing)")
    parser.add_argument("--only", nargs="*", default=list(NAMES), choices=list(NAMES), help="data sets to run")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    from parties.errors import PartyError

    try:
        result = tables(args.only, args.seeds, args.cache, args.hepatitis,
                        progress=lambda line: print(line, file=sys.stderr, flush=True))
    except PartyError as exc:
        print(f"classify000: error: {exc}", file=sys.stderr)
        return 2
    command = f"python -m ppcsim.reproduce.classify000 --seeds {args.seeds}" + (
        f" --hepatitis {args.hepatitis.name}" if args.hepatitis else "")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(section(result, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
