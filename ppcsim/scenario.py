"""Scenario files (TOML): read, validate at once with every error named, derive seeds."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from coordinator.clustering import SECURE, ClusteringSpec
from coordinator.session import SessionSpec
from parties.config import PartyConfig
from parties.data import BUILTIN, SYNTHETIC
from parties.methods import METHODS
from ppcsim.relay import Link

PARTY_FIELDS = ("name", "data", "id_column", "columns", "method", "normalize", "dtype")
CLUSTERING_FIELDS = ("algorithm", "n_clusters", "linkage", "eps", "min_samples", "n_init", "protocol", "max_iter", "tol",
                     "init", "scale_bits")
TOP_FIELDS = ("name", "seed", "deadline", "description", "data", "parties", "clustering", "security", "network", "sweep")
LINK_FIELDS = ("bandwidth_mbit", "latency_ms")
SECURITY_FIELDS = ("tls", "mutual", "tokens")
DATA_FIELDS = ("source", "id_column", "label_column", "rows", "columns", "clusters", "cluster_std")
BLOB_FIELDS = {"rows": 2, "columns": 1, "clusters": 1}
#: What a party of a secure-aggregation session runs before its rounds: normalisation only.
SECURE_METHOD = "none"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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

    def link(self, party: str) -> Link:
        return self.links.get(party, Link())

    def session_spec(self, tokens: dict[str, str] | None = None, keep_uploads: bool = True) -> SessionSpec:
        """The coordinator's view; ``tokens`` are the parties' token digests when [security] uses tokens;
        ``keep_uploads`` keeps each party's dissimilarities besides their sum (see SessionSpec)."""
        return SessionSpec(
            name=self.name,
            parties=tuple(p.name for p in self.parties),
            clustering=self.clustering,
            deadline=self.deadline,
            tokens=tokens if self.security.tokens else None,
            mutual=self.security.mutual,
            keep_uploads=keep_uploads,
        )

    def party(self, name: str) -> PartyConfig:
        for p in self.parties:
            if p.name == name:
                return p
        raise ScenarioError(self.path, [f"no party '{name}' (parties: {', '.join(p.name for p in self.parties)})"])


def party_seeds(seed: int, n: int) -> list[int]:
    """Independent per-party seeds spawned from the scenario seed (recorded in the report)."""
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n)]


def generated(source: str) -> bool:
    """Whether ``source`` is a data set that ships or is generated, not a file."""
    return source.startswith(("sklearn:", "synthetic:"))


def _blob_options(data: dict, seed: int, errors: list[str]) -> dict:
    """rows, columns, clusters, cluster_std of a synthetic:blobs [data] table."""
    options = {"seed": seed, "cluster_std": data.get("cluster_std", 1.0)}
    for key, least in BLOB_FIELDS.items():
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            errors.append(f"[data]: synthetic:blobs needs '{key}', an integer of at least {least}, got {value!r}")
        options[key] = value
    std = options["cluster_std"]
    if isinstance(std, bool) or not isinstance(std, (int, float)) or std < 0:
        errors.append(f"[data]: 'cluster_std' must be a non-negative number, got {std!r}")
    return options


def _resolve_source(source: str, base: Path) -> str:
    if generated(source):
        return source
    path = Path(source)
    return str(path if path.is_absolute() else (base / path).resolve())


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; ScenarioError lists every problem, naming table and field."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(path, ["no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(path, [f"cannot read: {exc}"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(path, [f"not valid TOML: {exc}"]) from None
    errors: list[str] = []
    base = path.resolve().parent

    errors += [f"unknown top-level field '{k}' (known: {', '.join(TOP_FIELDS)})" for k in raw if k not in TOP_FIELDS]
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not NAME.match(name):
        errors.append(f"'name' must be letters, digits, '_', '.' or '-', got {name!r}")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        errors.append(f"'seed' must be a non-negative integer, got {seed!r}")
        seed = 0
    deadline = raw.get("deadline", 600)
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or deadline <= 0:
        errors.append(f"'deadline' must be a positive number of seconds, got {deadline!r}")
        deadline = 600

    data = raw.get("data", {})
    if not isinstance(data, dict):
        errors.append("[data] must be a table")
        data = {}
    errors += [f"[data]: unknown field '{k}' (known: {', '.join(DATA_FIELDS)})" for k in data if k not in DATA_FIELDS]
    source = data.get("source")
    if isinstance(source, str) and source.startswith("sklearn:") and source[8:] not in BUILTIN:
        errors.append(f"[data]: unknown source {source!r} (built-in: {', '.join('sklearn:' + b for b in BUILTIN)})")
    if isinstance(source, str) and source.startswith("synthetic:") and source[10:] not in SYNTHETIC:
        errors.append(f"[data]: unknown source {source!r} (generated: {', '.join('synthetic:' + b for b in SYNTHETIC)})")
    shared = _resolve_source(source, base) if isinstance(source, str) else None
    options = _blob_options(data, seed, errors) if shared == "synthetic:blobs" else {}
    if shared and not generated(shared) and not Path(shared).is_file():
        errors.append(f"[data]: source file {shared} does not exist")
    label_column = data.get("label_column")
    if shared and generated(shared) and label_column not in (None, "target"):
        errors.append(f"[data]: built-in sets have the label column 'target', not {label_column!r}")

    table = raw.get("clustering")
    secure = isinstance(table, dict) and table.get("protocol") == SECURE
    raw_parties = raw.get("parties", [])
    if not isinstance(raw_parties, list) or not raw_parties:
        errors.append("no [[parties]]: a scenario needs at least one party")
        raw_parties = []
    parties: list[PartyConfig] = []
    seeds = party_seeds(seed, len(raw_parties))
    names: list[str] = []
    for i, (entry, party_seed) in enumerate(zip(raw_parties, seeds)):
        pname = entry.get("name", f"#{i + 1}") if isinstance(entry, dict) else f"#{i + 1}"
        where = f"[[parties]] '{pname}'"
        if not isinstance(entry, dict):
            errors.append(f"{where} must be a table")
            continue
        if not isinstance(pname, str) or not NAME.match(pname):
            errors.append(f"{where}: 'name' must be letters, digits, '_', '.' or '-'")
        names.append(pname)
        own = entry.get("data")
        if own is not None and not isinstance(own, str):
            errors.append(f"{where}: 'data' must be a CSV path")
            own = None
        src = _resolve_source(own, base) if own else shared
        if src is None:
            errors.append(f"{where}: no data: give the party 'data = \"file.csv\"' or the scenario a [data] source")
            continue
        if own and not Path(src).is_file():
            errors.append(f"{where}: data file {src} does not exist")
        columns = entry.get("columns")
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            errors.append(f"{where}: 'columns' must be a list of column names")
            columns = []
        method = entry.get("method")
        if secure:  # the party keeps its normalised columns at home: no disguise, nothing uploaded but ids
            if method is not None:
                errors.append(f"{where}: a party of a secure_aggregation session keeps its columns at home and "
                              f"sends no disguised data; remove 'method' ({method!r})")
            method = SECURE_METHOD
        if not isinstance(method, str):
            errors.append(f"{where}: 'method' is missing (one of {', '.join(METHODS)})")
            continue
        id_column = entry.get("id_column", data.get("id_column") if not own else None)
        if not generated(src) and not id_column:
            errors.append(f"{where}: 'id_column' is needed for the CSV {src}")
        cfg = PartyConfig(
            name=pname,
            source=src,
            columns=tuple(columns),
            method=method,
            params={k: v for k, v in entry.items() if k not in PARTY_FIELDS},
            normalize=entry.get("normalize", "zscore"),
            dtype=entry.get("dtype", "float64"),
            id_column=None if generated(src) else id_column,
            label_column=label_column if src == shared else None,
            seed=party_seed,
            source_options=options if src == shared else {},
        )
        errors += [f"{where}: {e}" for e in cfg.check()]
        parties.append(cfg)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        errors.append(f"party names repeat: {', '.join(repeated)}")
    by_column: dict[tuple[str, str], str] = {}
    for p in parties:
        for c in p.columns:
            other = by_column.setdefault((p.source, c), p.name)
            if other != p.name:
                errors.append(f"column '{c}' is given to both '{other}' and '{p.name}' (004 §5.3: attribute sets are disjoint)")

    security = raw.get("security", {})
    if not isinstance(security, dict):
        errors.append("[security] must be a table")
        security = {}
    errors += [f"[security]: unknown field '{k}' (known: {', '.join(SECURITY_FIELDS)})" for k in security if k not in SECURITY_FIELDS]
    errors += [f"[security]: '{k}' must be true or false, got {v!r}" for k, v in security.items()
               if k in SECURITY_FIELDS and not isinstance(v, bool)]
    security = Security(**{k: v for k, v in security.items() if k in SECURITY_FIELDS and isinstance(v, bool)})
    if security.mutual and not security.tls:
        errors.append("[security]: 'mutual' needs 'tls = true'")

    links = _links(raw.get("network", {}), [p.name for p in parties], errors)

    table = raw.get("clustering", {})
    if not isinstance(table, dict):
        errors.append("[clustering] must be a table")
        table = {}
    errors += [
        f"[clustering]: unknown field '{k}' (known: {', '.join(CLUSTERING_FIELDS)})" for k in table if k not in CLUSTERING_FIELDS
    ]
    defaults = ClusteringSpec()
    clustering = ClusteringSpec(
        **{k: table.get(k, getattr(defaults, k)) for k in CLUSTERING_FIELDS},
        seed=seed,
    )
    errors += [f"[clustering]: {e}" for e in clustering.check()]

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
    )


def _link(table: dict, where: str, base: Link, errors: list[str]) -> Link:
    values = {"bandwidth_mbit": base.bandwidth_mbit, "latency_ms": base.latency_ms}
    for key in LINK_FIELDS:
        if key in table:
            v = table[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (key == "bandwidth_mbit" and v == 0):
                errors.append(f"{where}: '{key}' must be a positive number, got {v!r}")
            else:
                values[key] = float(v)
    return Link(**values)


def _links(table, parties: list[str], errors: list[str]) -> dict[str, Link]:
    """``[network]`` (every party's link) and ``[network.<party>]`` (one party's), by party."""
    if not isinstance(table, dict):
        errors.append("[network] must be a table")
        return {}
    for key, value in table.items():
        if key not in LINK_FIELDS and not (isinstance(value, dict) and key in parties):
            errors.append(f"[network]: unknown field '{key}' (known: {', '.join(LINK_FIELDS)}, or a party's table)")
    shared = _link(table, "[network]", Link(), errors)
    return {p: _link(table.get(p, {}), f"[network.{p}]", shared, errors) if isinstance(table.get(p), dict) else shared
            for p in parties}
