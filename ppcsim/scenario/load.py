"""Scenario files (TOML): read, validate at once with every error named, derive seeds."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from parties.config import DTYPES, EMPTY_COLUMNS, PartyConfig
from parties.methods import METHODS, method_class
from parties.normalize import NORMALIZATIONS
from parties.sources import fields as source_fields
from parties.sources import known_columns, names_a_file, source_kind, unknown_source
from ppcsim.evaluate.settings import Knowledge
from ppcsim.scenario.network import Link
from ppcsim.scenario.network import links as network_links
from ppcsim.scenario.plugins import load_plugins
from ppcsim.scenario.protocols import protocol_problems
from protos.clustering import UPLOAD, ClusteringSpec, protocol_terms
from protos.clustering import fields as clustering_fields
from protos.schema import Param, check_table, unknown

if TYPE_CHECKING:  # a party reads its scenario too and needs no session: imported where one is made
    from coordinator.session import SessionSpec

#: Names of sessions and parties: they appear in file names and on the wire.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_NAME_RULE = "letters, digits, '_', '.' or '-'"

#: Top-level fields of a scenario file, then its tables (checked by their own schemas below).
TOP = {
    "name": Param(str, pattern=NAME_PATTERN, rule=_NAME_RULE, doc="the session's name (default: the file's stem)"),
    "seed": Param(int, 0, minimum=0, rule="a non-negative integer"),
    "deadline": Param(float, 600, above=0, rule="a positive number of seconds"),
    "description": Param(str, ""),
}
TABLES = ("data", "parties", "clustering", "security", "network", "sweep", "attacks")
#: A party's own fields; its method's parameters come from the method's table (parties.methods).
PARTY = {
    "name": Param(str, required=True, pattern=NAME_PATTERN, rule=_NAME_RULE),
    "data": Param(str, doc="this party's own CSV instead of a slice of [data]"),
    "id_column": Param(str),
    "columns": Param(list, required=True),
    "method": Param(str, required=True, choices=tuple(METHODS)),
    "normalize": Param(str, "zscore", choices=NORMALIZATIONS),
    "dtype": Param(str, "float64", choices=DTYPES),
    "host": Param(str, doc="ppc run --scheduler: the host (or Dask worker) that runs this party"),
}
PARTY_FIELDS = tuple(PARTY)
#: The ``[data]`` table's own fields; each kind of source adds its options (``parties.sources``, ``data_fields``).
DATA = {
    "source": Param(str),
    "id_column": Param(str),
    "label_column": Param(str),
}
SECURITY = {
    "tls": Param(bool, True),
    "mutual": Param(bool, False),
    "tokens": Param(bool, True),
    "ids": Param(str, "pseudonymous", choices=("pseudonymous", "plain")),
}
#: The ``[attacks]`` table: what the observer's attacker knows (ppcsim.evaluate.settings.Knowledge).
ATTACK_KNOWLEDGE = {
    "known_extra": Param(int, 0, minimum=0, rule="a non-negative integer",
                         doc="j: the distance-based attack knows n + 1 + j records (000 §4.4)"),
    "known_sample": Param(float, 0.3, above=0, maximum=1, rule="a share of the records in (0, 1]",
                          doc="the share of records the PCA attack holds as a sample (000 §4.5.4)"),
}
#: What a party of a secure-aggregation session runs before its rounds: normalisation only.
SECURE_METHOD = "none"
#: How record ids travel: keyed pseudonyms (default; the coordinator never sees a raw id) or as they are.
ID_MODES = SECURITY["ids"].choices
#: Who reads a scenario file: ``ppc run`` and sweeps read it whole (they also observe); the coordinator reads the
#: session (party names, methods and public parameters, [clustering], [security]); a party reads [data], its own
#: [[parties]] table, the other tables' names and [clustering] (its terms: parties.protocols.terms).
ROLES = ("observer", "coordinator", "party")


class ScenarioError(ValueError):
    """A scenario file that cannot run; ``errors`` lists every problem found."""

    def __init__(self, path: Path, errors: list[str]):
        self.path, self.errors = path, errors
        super().__init__("\n".join(f"{path}: {e}" for e in errors))


@dataclass(frozen=True)
class Security:
    """The ``[security]`` table: TLS (default on), mutual TLS (client certificates), per-party tokens (on)."""

    tls: bool = True
    mutual: bool = False
    tokens: bool = True
    ids: str = "pseudonymous"

    @property
    def needs_credentials(self) -> bool:
        return self.tls or self.tokens


@dataclass
class Scenario:
    path: Path
    name: str
    seed: int
    deadline: float
    parties: list[PartyConfig]
    clustering: ClusteringSpec
    label_column: str | None
    source: str | None
    id_column: str | None
    description: str = ""
    security: Security = Security()
    links: dict[str, Link] = field(default_factory=dict)  # per party; absent: unshaped
    hosts: dict[str, str] = field(default_factory=dict)  # per party: where ppc run --scheduler starts it
    #: Parties whose own table (as a party reads it) names no method: they may take part in a secure-aggregation
    #: session only, and refuse any other before sending data.
    unnamed: tuple[str, ...] = ()
    #: The names of every ``[[parties]]`` table in the file, in order (a party's consortium: parties.protocols.terms).
    consortium: tuple[str, ...] = ()
    attacks: Knowledge = Knowledge()  # [attacks]: what the observer's attacker knows

    def link(self, party: str) -> Link:
        return self.links.get(party, Link())

    def session_spec(self, tokens: dict[str, str] | None = None, keep_uploads: bool = True) -> SessionSpec:
        """The coordinator's view; ``tokens`` are the parties' token digests when [security] uses tokens;
        ``keep_uploads`` keeps each party's dissimilarities besides their sum (see SessionSpec)."""
        from coordinator.session import SessionSpec

        home = protocol_terms(self.clustering.protocol).columns_at_home  # parties upload no disguise
        return SessionSpec(
            name=self.name,
            parties=tuple(p.name for p in self.parties),
            clustering=self.clustering,
            deadline=self.deadline,
            tokens=tokens if self.security.tokens else None,
            mutual=self.security.mutual,
            keep_uploads=keep_uploads,
            ids=self.security.ids,
            # what each party's upload header must say: its method and public parameters, or, in a
            # session whose parties keep their columns at home, the protocol's name
            expected={p.name: (self.clustering.protocol, {}) if home else
                      (p.method, method_class(p.method).declared_params(p.params)) for p in self.parties},
            # a drbt party's k, checked against its upload's columns
            dims={p.name: p.params["k"] for p in self.parties
                  if p.method == "drbt" and isinstance(p.params.get("k"), int) and not home},
        )

    def party(self, name: str) -> PartyConfig:
        for p in self.parties:
            if p.name == name:
                return p
        raise ScenarioError(self.path, [f"no party '{name}' (parties: {', '.join(p.name for p in self.parties)})"])


def party_seeds(seed: int, n: int) -> list[int]:
    """Independent seeds spawned from ``seed`` by position (the reproduction of the paper's tables uses these)."""
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n)]


def _named(seed: int, label: str, words: int) -> int:
    """A ``32 * words``-bit integer drawn from ``seed`` and ``label`` (SeedSequence with the label's SHA-256 as its
    spawn key): independent for every label, and no label's value tells anything of another's or of ``seed``."""
    digest = hashlib.sha256(label.encode()).digest()
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4))
    state = np.random.SeedSequence(seed, spawn_key=key).generate_state(words, np.uint32)
    return sum(int(w) << (32 * i) for i, w in enumerate(state))


def party_seed(seed: int, party: str) -> int:
    """The 128-bit seed ``ppc run`` gives party ``party`` of a scenario seeded ``seed``: by name, never by position.

    It is handed to the party's process alone (on its standard input) and
    recorded in the observer's part of the report; the coordinator's clustering
    seed (``clustering_seed``) is drawn apart, so the coordinator cannot
    regenerate a party's disguise from what it holds.
    """
    return _named(seed, f"party {party}", 4)


def clustering_seed(seed: int) -> int:
    """The coordinator's seed for its clustering (k-means starts, NMDS), drawn from the scenario seed."""
    return _named(seed, "clustering", 1)


def data_fields() -> tuple[str, ...]:
    """The fields a ``[data]`` table may have: its own, then every registered kind of source's options."""
    return (*DATA, *(k for k in source_fields() if k not in DATA))


def generated(source: str) -> bool:
    """Whether ``source`` is a data set that ships or is generated, not a file (``parties.sources``)."""
    return not names_a_file(source)


def _resolve_source(source: str, base: Path) -> str:
    if generated(source):
        return source
    path = Path(source)
    return str(path if path.is_absolute() else (base / path).resolve())


def load_scenario(path: str | Path, role: str = "observer", party: str | None = None) -> Scenario:
    """Read and validate the part of a scenario file that ``role`` reads; ScenarioError lists every problem,
    naming table and field.

    - ``"observer"`` (``ppc run``, sweeps): the whole file; every party's seed
      is derived from the scenario seed by its name (``party_seed``).
    - ``"coordinator"``: the session: top-level fields, every party's name,
      method and method parameters (not its columns or data, which stay with
      the party), ``[clustering]``, ``[security]``, ``[network]``.
    - ``"party"`` with ``party``: top-level fields, ``[security]``,
      ``[clustering]``, ``[data]`` if the party uses it, and that party's own
      ``[[parties]]`` table; of the other tables only their names are read
      (the consortium: with ``[clustering]``, the party's terms,
      ``ppcsim.scenario.terms``). Its seed is None: the party draws
      one from its own entropy unless its user gives one.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(path, ["no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(path, [f"cannot read: {exc}"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(path, [f"not valid TOML: {exc}"]) from None
    errors: list[str] = load_plugins()  # what the scenario may name (PPC_PLUGINS)
    base = path.resolve().parent

    top = {**raw, "name": raw.get("name", path.stem)}  # the file's stem names a session that names none
    found = check_table(top, TOP, extra=TABLES)
    errors += [e.replace("unknown field", "unknown top-level field", 1) for e in found]
    valid = {k: top[k] for k in TOP if k in top and not TOP[k].check(k, top[k])}
    name, seed, deadline = valid.get("name", path.stem), valid.get("seed", 0), valid.get("deadline", 600)

    table = raw.get("clustering")
    secure = isinstance(table, dict) and protocol_terms(str(table.get("protocol", UPLOAD))).columns_at_home
    raw_parties = raw.get("parties", [])
    if not isinstance(raw_parties, list) or not raw_parties:
        errors.append("no [[parties]]: a scenario needs at least one party")
        raw_parties = []
    consortium = tuple(str(e.get("name")) for e in raw_parties if isinstance(e, dict))
    if role == "party":
        mine = [e for e in raw_parties if isinstance(e, dict) and e.get("name") == party]
        if not mine and raw_parties:
            named = [str(e.get("name")) for e in raw_parties if isinstance(e, dict)]
            errors.append(f"no [[parties]] table named '{party}' (tables: {', '.join(named) or 'none'})")
        raw_parties = mine[:1]
    uses_data = role == "observer" or (role == "party" and any(
        isinstance(e, dict) and not e.get("data") for e in raw_parties))

    data = raw.get("data", {})
    if not isinstance(data, dict):
        errors.append("[data] must be a table")
        data = {}
    shared, options, label_column = _data(data, base, seed, errors, check=uses_data)

    parties: list[PartyConfig] = []
    names: list[str] = []
    unnamed: list[str] = []
    for i, entry in enumerate(raw_parties):
        cfg = _party(i, entry, data, shared, options, label_column, base, role, names, errors, secure, unnamed,
                     seed=seed)
        if cfg is not None:
            parties.append(cfg if role != "observer" else replace(cfg, seed=party_seed(seed, cfg.name)))
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        errors.append(f"party names repeat: {', '.join(repeated)}")
    if role != "coordinator":  # every column named exists, before any process starts or joins, whatever else is wrong
        # a party started by hand is told what ppc run says: a file's header, a built-in or generated set's names
        errors += _absent_columns(parties, shared, data.get("id_column"), label_column if role == "observer" else None,
                                  options)
    if role == "observer":
        errors += _row_numbers(parties, shared)
        by_column: dict[tuple[str, str], str] = {}
        for p in parties:
            for c in p.columns:
                other = by_column.setdefault((p.source, c), p.name)
                if other != p.name:
                    errors.append(f"column '{c}' is given to both '{other}' and '{p.name}' (004 §5.3: attribute "
                                  "sets are disjoint)")

    clustering = _clustering(raw.get("clustering", {}), seed, errors)  # a party's terms too (parties.protocols.terms)
    if role != "party" and not errors and not protocol_terms(clustering.protocol).columns_at_home:
        errors += _composition(parties, clustering)

    hosts = {}
    for entry in raw_parties:
        if isinstance(entry, dict) and "host" in entry:
            problem = PARTY["host"].check("host", entry["host"])
            if problem:
                errors.append(f"[[parties]] '{entry.get('name')}': {problem}")
            else:
                hosts[str(entry.get("name"))] = entry["host"]
    security = _security(raw.get("security", {}), errors)
    attacks = _attacks(raw.get("attacks", {}), errors)
    links = network_links(raw.get("network", {}), [p.name for p in parties], errors) if role != "party" else {}
    errors += protocol_problems(clustering, consortium)  # the protocol's own (ppcsim.scenario.protocols)

    if errors:
        raise ScenarioError(path, errors)
    return Scenario(
        path=path.resolve(),
        name=name,
        seed=seed,
        deadline=float(deadline),
        parties=parties,
        clustering=clustering,
        label_column=label_column,
        source=shared,
        id_column=data.get("id_column"),
        description=raw.get("description", ""),
        security=security,
        links=links,
        hosts=hosts,
        unnamed=tuple(unnamed),
        consortium=consortium,
        attacks=attacks,
    )


def _attacks(table, errors: list[str]) -> Knowledge:
    """``[attacks]``: what the observer's attacker knows (each field checked, every error named)."""
    if not isinstance(table, dict):
        errors.append("[attacks] must be a table")
        return Knowledge()
    errors += check_table(table, ATTACK_KNOWLEDGE, "[attacks]: ")
    return Knowledge(**{k: v for k, v in table.items() if k in ATTACK_KNOWLEDGE and not ATTACK_KNOWLEDGE[k].check(k, v)})


def _composition(parties: list[PartyConfig], clustering: ClusteringSpec) -> list[str]:
    """What the coordinator would refuse only once every upload is in, known from what each party's method
    declares it sends (``parties.methods``): dissimilarities in different forms, feature rows beside a form they
    cannot join, different embeddings asked for, or a clustering algorithm that does not take what the parties
    send (``kmeans`` on ``osbr`` dissimilarities). The coordinator's own checks, imported here: a party reading
    its scenario asks none of them and loads no coordinator module."""
    from coordinator.clustering import input_problem
    from coordinator.embed import requested_embedding
    from coordinator.errors import SessionError
    from coordinator.forms import FORMS
    from coordinator.types import Contribution

    sent = {p.name: method_class(p.method)(**p.params) for p in parties}
    by_form = {name: d.form() for name, d in sent.items() if d.form() is not None}
    if not by_form:
        problem = input_problem(clustering, precomputed=False)
        return [f"[clustering]: {problem}"] if problem else []
    found = []
    if len(set(by_form.values())) > 1:
        found.append("dissimilarity parties must use one metric to be combined ("
                     + ", ".join(f"{n}: {f}" for n, f in by_form.items()) + ")")
    features = [n for n in sent if n not in by_form]
    form = FORMS.get(str(next(iter(by_form.values()))))
    if features and form is not None and not form.features:
        found.append(f"parties {', '.join(features)} send features, which combine exactly only with Euclidean "
                     f"dissimilarities, not '{form.name}' ({', '.join(by_form)})")
    # what each party's upload header will say, as the coordinator compares it (coordinator.embed)
    headers = [Contribution(party=p.name, method=p.method, params=method_class(p.method).declared_params(p.params),
                            ids=np.empty(0), arrays={}, is_dissimilarity=True) for p in parties if p.name in by_form]
    try:
        embedded = requested_embedding(headers) is not None
    except SessionError as exc:
        found.append(str(exc))
        embedded = True
    problem = input_problem(clustering, precomputed=not embedded)
    if problem:
        found.append(f"[clustering]: {problem}")
    return found


def _row_numbers(parties: list[PartyConfig], shared: str | None) -> list[str]:
    """A file read without an id column identifies its records by row number, which joins only with other row
    numbers of the same file: refused beside a party that joins by an id column."""
    by_row = [p for p in parties if p.source == shared and names_a_file(p.source) and not p.id_column]
    by_id = [p.name for p in parties if p.id_column]
    if by_row and by_id:
        return [f"[data]: {', '.join(p.name for p in by_row)} read {by_row[0].source} without an 'id_column' "
                f"(records by row number), which cannot be joined with the ids of {', '.join(by_id)}; give [data] "
                "an 'id_column'"]
    return []


def _absent_columns(parties: list[PartyConfig], shared: str | None, shared_id: str | None,
                    label_column: str | None, shared_options: dict | None = None) -> list[str]:
    """Every column named that its source does not offer, read from the source's header alone (a CSV's first
    line; a built-in or synthetic set's names), with the field that names it and the closest name suggested:
    each party's ``columns`` and ``id_column``, and ``[data]``'s ``label_column`` (given only by the observer,
    the one role that reads the labels). A source that cannot be read here is left to the party's loading."""
    found: list[str] = []

    def absent(where: str, what: str, name: str, source: str, offered: list[str]) -> None:
        message = f"{where}: {what}no column '{name}' in {source} (" + unknown(name, offered).split(" (", 1)[1]
        if name not in offered and message not in found:
            found.append(message)

    for p in parties:
        offered = known_columns(p.source, p.source_options)
        if offered is None:
            continue
        where = f"[[parties]] '{p.name}'"
        for c in p.columns:
            absent(where, "", c, p.source, offered)
        if p.id_column:
            from_data = p.source == shared and p.id_column == shared_id
            absent("[data]" if from_data else where, "'id_column' names ", p.id_column, p.source, offered)
    if label_column and shared is not None and names_a_file(shared):
        offered = known_columns(shared, shared_options or {})
        if offered is not None:
            absent("[data]", "'label_column' names ", label_column, shared, offered)
    return found


def _data(data: dict, base: Path, seed: int, errors: list[str], check: bool) -> tuple[str | None, dict, str | None]:
    """The ``[data]`` table: its source (resolved), a synthetic source's options, the label column. Its file and
    options are checked only when ``check`` (a role that reads the data)."""
    found: list[str] = []
    known = data_fields()
    found += [f"[data]: {unknown(k, known)}" for k in data if k not in known]
    source = data.get("source")
    problem = unknown_source(source) if isinstance(source, str) else None
    if problem:
        found.append(f"[data]: {problem}")
    shared = _resolve_source(source, base) if isinstance(source, str) else None
    kind = source_kind(shared) if shared and not problem else None
    options = {}
    if kind is not None and shared is not None:  # the kind's options, checked by its Param table
        options = kind.options(data, seed)
        found += [f"[data]: {e}" for e in kind.check(shared, data)]
    if shared and kind is not None and kind.file and not Path(shared).is_file():
        found.append(f"[data]: source file {shared} does not exist")
    label_column = data.get("label_column")
    if kind is not None and kind.label is not None and label_column not in (None, kind.label):
        found.append(f"[data]: {shared} has the label column '{kind.label}', not {label_column!r}")
    if check:
        errors += found
    return shared, options, label_column


def _party(i: int, entry, data: dict, shared: str | None, options: dict, label_column: str | None, base: Path,
           role: str, names: list[str], errors: list[str], secure: bool = False,
           unnamed: list[str] | None = None, seed: int = 0) -> PartyConfig | None:
    """One ``[[parties]]`` table as ``role`` reads it: the coordinator checks its name, method and method
    parameters; a party and the observer check everything, data and columns included.

    In a ``secure`` session a party keeps its normalised columns at home and
    names no method. A party that reads only its own table cannot tell: one
    that names no method runs ``SECURE_METHOD`` and may only take part in a
    secure-aggregation session (``parties.run.run_party`` refuses anything
    else before it sends a byte of data).

    A party's own ``data`` file selects a kind of file source
    (``parties.sources``); that kind's options, if it has any, are fields of
    the party's table, checked by the kind.
    """
    pname = entry.get("name", f"#{i + 1}") if isinstance(entry, dict) else f"#{i + 1}"
    where = f"[[parties]] '{pname}'"
    if not isinstance(entry, dict):
        errors.append(f"{where} must be a table")
        return None
    if PARTY["name"].check("name", pname):
        errors.append(f"{where}: 'name' must be {_NAME_RULE}")
    names.append(pname)
    method = entry.get("method")
    if secure:  # the party keeps its normalised columns at home: no disguise, nothing uploaded but ids
        if method is not None:
            errors.append(f"{where}: a party of a secure_aggregation session keeps its columns at home and sends no "
                          f"disguised data; remove 'method' ({method!r})")
        method = SECURE_METHOD
    elif method is None and role == "party":
        method = SECURE_METHOD  # only a secure-aggregation session will take it (see the docstring)
        if unnamed is not None:
            unnamed.append(str(pname))
    if not isinstance(method, str):
        # a misspelt 'method' is the likeliest cause: name every key no method takes, with the closest field
        taken = {k for m in METHODS for k in method_class(m).params}
        errors += [f"{where}: {unknown(k, PARTY_FIELDS)}" for k in entry if k not in PARTY and k not in taken]
        errors.append(f"{where}: 'method' is missing (one of {', '.join(METHODS)})")
        return None
    takes = tuple(method_class(method).params) if method in METHODS else ()
    own = entry.get("data")
    own_kind = source_kind(own) if isinstance(own, str) and own and not unknown_source(own) else None
    reads = tuple(own_kind.params) if own_kind is not None and own_kind.file else ()  # its file kind's options
    for key in entry:
        if key not in PARTY and key not in takes and key not in reads and method in METHODS:
            errors.append(f"{where}: " + unknown(key, (*PARTY, *takes, *reads)).replace(
                " (known:", f" (known for a party with method '{method}':", 1))
    params = {k: v for k, v in entry.items()
              if k not in PARTY_FIELDS and k not in reads and (k in takes or method not in METHODS)}
    columns = entry.get("columns")
    if role == "coordinator":  # the party's data and columns stay with the party
        try:
            problems = method_class(method).check_params(params)
        except ValueError as exc:
            problems = [str(exc)]
        errors += [f"{where}: {e}" for e in problems]
        named = tuple(columns) if isinstance(columns, list) and all(isinstance(c, str) for c in columns) else ()
        return PartyConfig(name=pname, source="", columns=named, method=method,
                           params=params, normalize=entry.get("normalize", "zscore"),
                           dtype=entry.get("dtype", "float64"), seed=None)
    if own is not None and not isinstance(own, str):
        errors.append(f"{where}: 'data' must be a CSV path")
        own = None
    src = _resolve_source(own, base) if own else shared
    if src is None:
        errors.append(f"{where}: no data: give the party 'data = \"file.csv\"' or the scenario a [data] source")
        return None
    if own and not Path(src).is_file():
        errors.append(f"{where}: data file {src} does not exist")
    own_options = {}
    if own and own_kind is not None and reads:
        own_options = own_kind.options(entry, seed)
        errors += [f"{where}: {e}" for e in own_kind.check(src, entry)]
    listed = isinstance(columns, list) and all(isinstance(c, str) for c in columns)
    if not listed:
        errors.append(f"{where}: 'columns' must be a list of column names, got {columns!r}")
    listed_columns: list[str] = list(columns) if listed else []  # type: ignore[arg-type]  # checked just above
    id_column = entry.get("id_column", data.get("id_column") if not own else None)
    if not generated(src) and not id_column and own:  # [data]'s file without one: records by row number
        errors.append(f"{where}: 'id_column' is needed for the CSV {src}: its records are joined with the other "
                      "parties' by id")
    cfg = PartyConfig(
        name=pname,
        source=src,
        columns=tuple(listed_columns),
        method=method,
        params=params,
        normalize=entry.get("normalize", "zscore"),
        dtype=entry.get("dtype", "float64"),
        id_column=None if generated(src) else id_column,
        label_column=label_column if src == shared else None,
        seed=None,
        source_options=options if src == shared else own_options,
    )
    # an empty list is a problem of its own; a value that is no list at all was named above
    errors += [f"{where}: {e}" for e in cfg.check() if listed or e != EMPTY_COLUMNS]
    return cfg


def _security(table, errors: list[str]) -> Security:
    if not isinstance(table, dict):
        errors.append("[security] must be a table")
        table = {}
    errors += check_table(table, SECURITY, "[security]: ")
    security = Security(**{k: v for k, v in table.items() if k in SECURITY and not SECURITY[k].check(k, v)})
    if security.mutual and not security.tls:
        errors.append("[security]: 'mutual' needs 'tls = true'")
    return security


def _clustering(table, seed: int, errors: list[str]) -> ClusteringSpec:
    if not isinstance(table, dict):
        errors.append("[clustering] must be a table")
        table = {}
    known = tuple(clustering_fields())  # the registered algorithms' fields, as registered now
    errors += [f"[clustering]: {unknown(k, known)}" for k in table if k not in known]
    clustering = ClusteringSpec.of({k: v for k, v in table.items() if k in known}, seed=clustering_seed(seed))
    errors += [f"[clustering]: {e}" for e in clustering.check()]
    return clustering
