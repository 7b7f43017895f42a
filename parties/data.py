"""What loading a party's own columns is made of: the built-in data sets, the blobs generator, reading a
CSV's wanted columns only. ``parties.sources`` puts them together as the registered kinds of source."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from parties.errors import PartyError

BUILTIN = ("iris", "wine", "breast_cancer", "digits")


@dataclass
class PartyData:
    """The party's records: ``ids`` (m,) as text, or int64 for generated data (the row numbers), and ``X``
    (m x d) as float64."""

    ids: np.ndarray
    X: np.ndarray
    columns: list[str]


def sklearn_set(name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Column names, data and target of ``sklearn.datasets.load_<name>``, whether registered or not (the sets
    scikit-learn ships as CSV files read without importing it: ``parties.bundled``)."""
    from parties.bundled import bundled

    found = bundled(name)
    if found is not None:
        return found
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")()
    return list(bunch.feature_names), np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target)


def load_builtin(name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Column names, data and target of a data set that ships with scikit-learn."""
    if name not in BUILTIN:
        raise PartyError(f"unknown built-in data set 'sklearn:{name}' (known: {', '.join('sklearn:' + b for b in BUILTIN)})")
    return sklearn_set(name)


def blob_labels(rows: int, clusters: int, seed: int) -> np.ndarray:
    """The true cluster of each synthetic record (the ``target`` column)."""
    return np.random.default_rng([seed, 0]).integers(0, clusters, size=rows)


def load_blobs(options: dict, wanted: list[str], *, block: int = 16384) -> np.ndarray:
    """Columns ``x<j>`` of Gaussian blobs, generated column by column.

    The model of sklearn's ``make_blobs``: cluster centres uniform in
    [-10, 10], isotropic noise of ``cluster_std``. Column j depends only on
    (seed, j), so each party builds just its own columns, in any split.

    Built ``block`` rows at a time: each column's noise stream is drawn in
    pieces (the same numbers as one draw of all rows) into a small buffer,
    then scaled and shifted into the C-ordered result, so there are no
    full-size temporaries and no strided writes to the big array.
    """
    rows, columns, clusters = options["rows"], options["columns"], options["clusters"]
    seed, std = options["seed"], options.get("cluster_std", 1.0)
    names = [f"x{j}" for j in range(columns)]
    missing = [c for c in wanted if c not in names]
    if missing:
        raise PartyError(f"synthetic:blobs: no column {', '.join(map(repr, missing))} (columns: x0 .. x{columns - 1})")
    labels = blob_labels(rows, clusters, seed)
    gens, centres = [], np.empty((clusters, len(wanted)))  # centres[k, i]: cluster k in column i
    for i, name in enumerate(wanted):
        rng = np.random.default_rng([seed, 1, int(name[1:])])
        centres[:, i] = rng.uniform(-10.0, 10.0, size=clusters)
        gens.append(rng)  # continues with the column's standard_normal stream
    out = np.empty((rows, len(wanted)))
    noise = np.empty((len(wanted), min(block, rows)))  # one row per column: contiguous draws
    for start in range(0, rows, block):
        part = out[start:start + block]
        n = len(part)
        for i, rng in enumerate(gens):
            rng.standard_normal(n, out=noise[i, :n])
        np.multiply(noise[:, :n].T, std, out=part)  # std * z, then + centre: as centre + std * z
        part += centres[labels[start:start + n]]
    return out


def read_csv_columns(path: Path, wanted: list[str], names: list[str] | None = None
                     ) -> tuple[dict[str, list[str]], int]:
    """Read only the ``wanted`` columns of a CSV, as text; and the row count.

    The file's first line is its header row, unless ``names`` are given: then the file has no header and
    ``names`` are its columns, in order (its first line is a record).
    """
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise PartyError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        reader = csv.reader(handle)
        if names is not None:
            header = list(names)
        else:
            try:
                header = [h.strip() for h in next(reader)]
            except StopIteration:
                raise PartyError(f"{path} is empty (a header row is needed)") from None
            except UnicodeDecodeError:
                raise PartyError(f"{path} is not UTF-8 text") from None
        missing = [c for c in wanted if c not in header]
        if missing:
            raise PartyError(
                f"{path}: no column {', '.join(repr(c) for c in missing)} (columns: {', '.join(header)})"
            )
        index = [header.index(c) for c in wanted]
        out: dict[str, list[str]] = {c: [] for c in wanted}
        what = "'column_names' lists" if names is not None else "the header has"
        try:
            for line, row in enumerate(reader, start=first_line(names)):
                if not row:
                    continue
                if len(row) != len(header):
                    raise PartyError(f"{path}, line {line}: {len(row)} fields, {what} {len(header)}")
                for c, i in zip(wanted, index):
                    out[c].append(row[i].strip())
        except UnicodeDecodeError:
            raise PartyError(f"{path} is not UTF-8 text") from None
        except csv.Error as exc:
            raise PartyError(f"{path}, line {reader.line_num}: {exc}") from None
    return out, len(out[wanted[0]]) if wanted else 0


def first_line(names: list[str] | None = None) -> int:
    """The line number of a CSV's first record: 2 after a header row, 1 when ``names`` stand in for one."""
    return 1 if names is not None else 2


def to_numbers(values: list[str], where: str, first: int = 2) -> np.ndarray:
    """Parse text cells as float64; PartyError naming the first bad cell by its line (``first`` is the line of
    the first value: 2 after a header row)."""
    try:
        x = np.array(values, dtype=np.float64)
    except ValueError:
        for line, v in enumerate(values, start=first):
            try:
                float(v)
            except ValueError:
                what = "is empty" if v == "" else f"is not a number: {v!r}"
                raise PartyError(f"{where}, line {line} {what}") from None
        raise
    bad = ~np.isfinite(x)
    if bad.any():
        line = int(np.argmax(bad)) + first
        raise PartyError(f"{where}, line {line} is {values[line - first]!r}; values must be finite numbers")
    return x


def codes(values: list[str]) -> np.ndarray:
    """Nominal text as integer codes (equal text, equal code)."""
    return np.unique(np.array(values), return_inverse=True)[1].astype(np.float64)


def check_unique_ids(ids: np.ndarray, where: str) -> None:
    uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
    if len(uniq) != len(ids):
        repeated = uniq[counts > 1][:5]
        raise PartyError(f"{where}: duplicate ids {', '.join(map(repr, repeated.tolist()))} (ids must be unique)")
