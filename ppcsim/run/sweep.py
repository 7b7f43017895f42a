"""Sweeps: run a scenario over a grid of parameters and tabulate utility, privacy and bytes.

The grid is the scenario's ``[sweep]`` table; every combination is one run:

- ``k``: every party's output dims, whatever its method, if the method takes ``k``
  (drbt, pca, svd, dct);
- ``projection``: every party's projection, if its method takes one (drbt);
- ``tries``: every party's draws of its projection, if its method takes them (drbt, 004 §5.2 step 3);
- ``method``: every party's method (parameters the new method does not take are dropped;
  the party's own fields, ``dtype`` among them, are kept);
- ``normalize``: every party's normalisation;
- ``seed``: the scenario seed (and so every party's seed);
- ``parties``: re-split all columns, in order, over this many parties ``p1..pN`` that
  take the first party's settings (method, projection, normalisation...:
  the other parties' settings are dropped); a drbt ``k`` is then the total
  output dims, shared out in proportion to each party's column count
  (004 §6.2). Refused beside a ``<party>.<field>`` key (that party no
  longer exists) and when a party reads its own ``data`` file;
- ``rows``: rows of a ``synthetic:blobs`` source;
- ``known_extra``, ``known_sample``: what the observer's attacker knows (the
  scenario's ``[attacks]`` table): j of the n + 1 + j records multilateration
  knows (000 Figs. 4.12-4.13), the share of records the PCA attack holds;
- ``<party>.<field>``: one field of one party, e.g. ``"lab.k"``.
"""

from __future__ import annotations

import copy
import csv
import io
import itertools
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from coordinator.errors import SessionError
from coordinator.summary import summarise
from parties.errors import PartyError
from parties.methods import METHODS, method_class
from parties.metrics import peak_rss
from ppcsim.errors import RunError
from ppcsim.evaluate.agreement import AGREEMENT
from ppcsim.evaluate.attackers import ATTACKS
from ppcsim.evaluate.scores import per_column_figures, single_figures
from ppcsim.report.model import ABSENT, AttackScore, Classification, Profile, Report, as_report, given
from ppcsim.report.outputs import build, own_checks, write_atomic
from ppcsim.run.launcher import run_scenario
from ppcsim.run.observer import Settings
from ppcsim.run.observers import observer
from ppcsim.scenario.load import PARTY, ScenarioError, generated, load_scenario
from ppcsim.scenario.partition import share_k, split_sizes
from protos.schema import unknown

GLOBAL_KEYS = ("method", "parties", "k", "projection", "tries", "normalize", "seed", "rows", "known_extra",
               "known_sample")


@dataclass
class Point:
    index: int
    values: dict
    path: Path


def split_columns(columns: list[str], n: int) -> list[list[str]]:
    """``columns`` in order over ``n`` contiguous groups whose sizes differ by at most one (``split_sizes``)."""
    if not 1 <= n <= len(columns):
        raise ValueError(f"cannot split {len(columns)} columns over {n} parties")
    starts = list(itertools.accumulate([0, *split_sizes(len(columns), n)]))
    return [columns[a:b] for a, b in zip(starts, starts[1:])]


def _set_method(party: dict, method: str) -> None:
    """``party`` with ``method``: its own fields (the scenario schema's, ``PARTY``) kept, and of its old method's
    parameters those the new one takes."""
    known = set(method_class(method).params)
    for key in [k for k in party if k not in PARTY]:
        if key not in known:
            party.pop(key)
    party["method"] = method


def _takes(party: dict, key: str) -> bool:
    """Whether ``party``'s method takes the parameter ``key``."""
    return party.get("method") in METHODS and key in method_class(party["method"]).params


#: Swept keys set on every party whose method takes them (and on no other).
PER_METHOD = ("k", "projection", "tries")


def apply_point(raw: dict, values: dict) -> dict:
    """A copy of the scenario table ``raw`` with one grid point's ``values`` applied."""
    raw = copy.deepcopy(raw)
    raw.pop("sweep", None)
    parties = raw["parties"]
    if "method" in values:
        for p in parties:
            _set_method(p, values["method"])
    if "parties" in values:
        template = parties[0]
        groups = split_columns([c for p in parties for c in p["columns"]], values["parties"])
        parties = raw["parties"] = [{**copy.deepcopy(template), "name": f"p{i + 1}", "columns": g} for i, g in enumerate(groups)]
        if _takes(template, "k") and "k" in template and "k" not in values:
            if isinstance(template["k"], int) and not len(groups) <= template["k"] <= sum(map(len, groups)):
                raise ValueError(f"[[parties]] '{template.get('name')}': its k = {template['k']}, the total output "
                                 f"dimensions, cannot be shared out over {len(groups)} parties (at least 1 each, at "
                                 f"most their columns): give it a k from {len(groups)} to {sum(map(len, groups))}")
            for p, k in zip(parties, share_k([len(g) for g in groups], template["k"])):
                p["k"] = k
    for key, value in values.items():
        if key in PER_METHOD:
            taking = [p for p in parties if _takes(p, key)]
            if key == "k" and "parties" in values:
                for p, k in zip(taking, share_k([len(p["columns"]) for p in taking], value)):
                    p["k"] = k
            else:
                for p in taking:
                    p[key] = value
        elif key == "normalize":
            for p in parties:
                p["normalize"] = value
        elif key == "seed":
            raw["seed"] = value
        elif key == "rows":
            raw.setdefault("data", {})["rows"] = value
        elif key in ("known_extra", "known_sample"):
            raw.setdefault("attacks", {})[key] = value
        elif "." in key:
            name, field = key.split(".", 1)
            for p in parties:
                if p.get("name") == name:
                    p[field] = value
    return raw


def load_sweep(path: Path) -> tuple[dict, dict[str, list]]:
    """The scenario table and its ``[sweep]`` grid; ScenarioError naming each bad key."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(Path(path), ["no such file"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(Path(path), [f"not valid TOML: {exc}"]) from None
    grid = raw.get("sweep")
    errors = []
    if not isinstance(grid, dict) or not grid:
        errors.append("no [sweep] table: give it lists of values, e.g. k = [1, 2, 3]")
        grid = {}
    # a party without a name (or with one that is not text) is reported by the scenario's own check
    names = [p["name"] for p in raw.get("parties", []) if isinstance(p, dict) and isinstance(p.get("name"), str)]
    fields = (*PARTY, *dict.fromkeys(k for m in METHODS for k in method_class(m).params))
    for key, values in grid.items():
        if "." in key:
            name, field = key.split(".", 1)
            if name not in names:
                errors.append(f"[sweep]: '{key}' names no party: {unknown(name, names).replace('field', 'party', 1)}")
            elif field not in fields or field == "name":
                errors.append(f"[sweep]: '{key}': {unknown(field, tuple(f for f in fields if f != 'name'))}")
        elif key not in GLOBAL_KEYS:
            errors.append(f"[sweep]: {unknown(key, (*GLOBAL_KEYS, '<party>.<field>')).replace('field', 'key', 1)}")
        if not isinstance(values, list) or not values:
            errors.append(f"[sweep]: '{key}' must be a non-empty list of values")
    if "parties" in grid:
        errors += _parties_conflicts(raw, grid)
    if errors:
        raise ScenarioError(Path(path), errors)
    return raw, grid


def _parties_conflicts(raw: dict, grid: dict) -> list[str]:
    """What a ``parties`` key would silently ignore: fields of parties it replaces, files it cannot split."""
    errors = []
    for key in grid:
        if "." in key:
            errors.append(f"[sweep]: '{key}' cannot be swept beside 'parties': 'parties' replaces every party by "
                          "p1..pN with the first party's settings, so party '" + key.split(".", 1)[0]
                          + "' does not exist in those runs (sweep 'k', 'projection', 'method' or 'normalize' "
                          "for all parties instead)")
    own = [p.get("name") for p in raw.get("parties", []) if isinstance(p, dict) and p.get("data")]
    if own:
        errors.append(f"[sweep]: 'parties' re-splits the columns of [data] by position, but "
                      f"{', '.join(map(str, own))} read{'s' if len(own) == 1 else ''} its own data file; give the "
                      "columns in [data] or sweep without 'parties'")
    return errors


def describe_parties_rewrite(raw: dict, grid: dict) -> str | None:
    """In words: what a ``parties`` key does to the scenario's parties, or None without one."""
    if "parties" not in grid:
        return None
    parties = [p for p in raw.get("parties", []) if isinstance(p, dict)]
    if not parties:
        return None
    first = parties[0]
    settings = ", ".join(f"{k} {v}" for k, v in first.items() if k not in ("name", "columns"))
    columns = sum(len(p.get("columns", [])) for p in parties)
    differ = sorted({k for p in parties[1:] for k, v in p.items()
                     if k not in ("name", "columns") and first.get(k) != v})
    total = (f"; its k {first['k']} becomes the total output dims, shared out in proportion to the columns"
             if _takes(first, "k") and "k" in first and "k" not in grid else "")
    return (f"'parties' re-splits the {columns} columns over p1..pN, each with {first.get('name')}'s settings "
            f"({settings}){total}" + (f"; the other parties' {', '.join(differ)} are not used" if differ else ""))


def describe_partial_keys(raw: dict, grid: dict) -> list[str]:
    """In words: each swept key (``k``, ``projection``) that only some parties' methods take, which parties it
    applies to and why not to the others (a sweep of ``method`` changes the methods, so it is not said then)."""
    if "method" in grid:
        return []
    parties = [p for p in raw.get("parties", []) if isinstance(p, dict)]
    if "parties" in grid and parties:
        parties = parties[:1]  # every point's parties take the first one's settings
    found = []
    for key in (k for k in PER_METHOD if k in grid):
        taking = [p for p in parties if _takes(p, key)]
        others = [p for p in parties if not _takes(p, key)]
        if others:
            found.append(f"'{key}' applies to {', '.join(str(p.get('name')) for p in taking) or 'no party'} only: "
                         + ", ".join(f"{p.get('name')} ({p.get('method')})" for p in others)
                         + f" take{'s' if len(others) == 1 else ''} no '{key}'")
    return found


def sweep_notes(raw: dict, grid: dict) -> list[str]:
    """What a sweep changes beyond its grid's plain reading: the ``parties`` rewrite and partly applied keys."""
    note = describe_parties_rewrite(raw, grid)
    return ([note] if note else []) + describe_partial_keys(raw, grid)


def plan(path: Path, out: Path) -> list[Point]:
    """Write every grid point's scenario file under ``out/points`` and validate them all first."""
    raw, grid = load_sweep(path)
    base = Path(path).resolve().parent
    points, errors = [], []
    for index, combo in enumerate(itertools.product(*grid.values())):
        values = dict(zip(grid, combo))
        try:
            point = apply_point(raw, values)
        except ValueError as exc:  # a k that cannot be shared out over the swept parties
            errors.append(f"point {index} {values}: {exc}")
            continue
        point["name"] = f"{raw.get('name', Path(path).stem)}-{index:03d}"
        for entry in [point.get("data", {}), *point["parties"]]:
            key = "source" if entry is point.get("data") else "data"
            src = entry.get(key)
            if isinstance(src, str) and not generated(src) and not Path(src).is_absolute():
                entry[key] = str((base / src).resolve())
        target = out / "points" / f"{point['name']}.toml"
        write_atomic(target, tomli_w.dumps(point).encode())
        try:
            load_scenario(target)
        except ScenarioError as exc:
            errors += [f"point {index} {values}: {e}" for e in exc.errors]
        except ValueError as exc:
            errors.append(f"point {index} {values}: {exc}")
        points.append(Point(index, values, target))
    if errors:
        raise ScenarioError(Path(path), errors)
    return points


def row(point: Point, report: Report | dict) -> dict:
    """One CSV row: the point's parameters, then its utility, privacy and bytes."""
    report = as_report(report)
    out = {"point": point.index, "scenario": report.scenario, "seed": report.seed}
    out.update({f"param_{k}": v for k, v in point.values.items()})
    parties = report.parties
    out["rows"] = report.join.rows_joined
    out["methods"] = "+".join(sorted({p.method for p in parties}))
    out["parties"] = len(parties)
    out["input_dims"] = sum(len(p.columns) for p in parties)
    out["output_dims"] = sum(p.output_dims or 0 for p in parties if p.sends == "features") or None
    u = report.utility if report.utility is not ABSENT else None
    out["stress"] = given(u.stress) if u else None
    for key in AGREEMENT:
        out[key] = u.vs_original.get(key) if u else None
    out["ari_truth"] = given(u.vs_truth, {}).get("ari") if u else None
    out["nmds_stress_1"] = (report.clustering.embedding or {}).get("kruskal_stress_1")
    # what each party measured of its own disguise (drbt: 004 §5.2 step 3; nmds: 000 eq. 3.12), mean over parties
    checks = [p.own_check for p in parties if p.own_check is not ABSENT]
    for key in ("local_stress", "tries_used", "stress_1"):
        if any(key in c for c in checks):
            out[f"own_{key}"] = _mean_of_given([c.get(key) for c in checks])
    for key, profile in (("np", u and u.np), ("cc", u and u.cc), ("cc_original", u and u.cc_original)):
        out[key] = profile.mean if isinstance(profile, Profile) else None  # 000 eqs. 5.21-5.23, mean over k = 3..10
    if u and isinstance(u.classification, Classification):  # cross-validated accuracy, disguised and original
        for name, accuracy in u.classification.classifiers.items():
            out[f"accuracy_{name}"], out[f"accuracy_{name}_original"] = accuracy.disguised, accuracy.original
    entries = list(report.privacy.values()) if isinstance(report.privacy, dict) else []
    for attack in ATTACKS:
        found = [a for v in entries if isinstance(a := v.attacks.get(attack), AttackScore)]
        out[f"privacy_{attack}_min"] = min((a.min for a in found), default=None)
        out[f"privacy_{attack}_mean"] = sum(a.mean for a in found) / len(found) if found else None
        for figure in ("median", "iqr"):  # of the mean column privacy over the draws, averaged over parties
            out[f"privacy_{attack}_{figure}"] = _mean_of_given([(a.get(figure) or {}).get("mean") for a in found])
        for key in per_column_figures():  # e.g. privacy_002_<attack>_mean
            out[f"{key}_{attack}_mean"] = sum(a[key]["mean"] for a in found) / len(found) if found else None
        for key in single_figures():  # e.g. 001 eqs. 2.7-2.11 of the attacker's estimate
            out[f"{attack}_{key}"] = _mean_of_given([a.get(key) for a in found])
        for figure in ("object_privacy_mean", "distance_error", "md_eigenvalues", "md_eigenvectors"):
            measured = [a.get(figure) for a in found if a.get(figure) is not None]
            if measured:  # an attack's own figures (000 eqs. 4.21, 4.25-4.26), averaged over the parties
                out[f"{attack}_{figure}"] = _mean_of_given(measured)
    # 000's object privacy against its distance-based attack, whatever the parties send (000 eq. 4.21)
    out["object_privacy_mean"] = out.get("multilateration_object_privacy_mean")
    sent = [v.sent_distortion for v in entries if v.sent_distortion is not ABSENT]
    for key in single_figures():  # the same of what was sent (CCA and knnM also of fewer columns)
        out[f"sent_{key}"] = _mean_of_given([s.get(key) for s in sent])
    # the strongest attack that applies to each party, averaged over parties: one figure for any method
    scored = [[a for a in v.attacks.values() if isinstance(a, AttackScore)] for v in entries]
    worst = [min(a.mean for a in found) for found in scored if found]
    out["privacy_worst_mean"] = sum(worst) / len(worst) if worst else None
    out["bytes_predicted"] = sum(p.bytes.predicted or 0 for p in parties)
    out["bytes_payload"] = sum(p.bytes.payload for p in parties)
    out["bytes_serialized"] = sum(p.bytes.serialized for p in parties)
    # what the parties' TCP connections carried: measured only when the point ran as processes
    wire = [p.bytes.wire for p in parties]
    out["bytes_wire"] = sum(w for w in wire if w is not ABSENT) if wire and ABSENT not in wire else None
    for p in parties:  # what each party sent (a cost per party), beside the sums above
        out[f"bytes_payload_{p.name}"] = p.bytes.payload
    out["seconds"] = given(report.timing.total)
    if report.secure_aggregation is not ABSENT:
        out["rounds"] = report.secure_aggregation.rounds
        out["labels_equal_same_init"] = given(u.labels_equal_same_init) if u else None
    return out


def _mean_of_given(values: list) -> float | None:
    """The mean of the values that were measured (a metric not meaningful for a party is None there)."""
    given_values = [v for v in values if isinstance(v, (int, float))]
    return sum(given_values) / len(given_values) if given_values else None


def run_point(point: Point, out: Path, settings: Settings, in_process: bool) -> Report:
    """The report of one point, from a real multi-process run or the in-process simulation."""
    scenario = load_scenario(point.path)
    if not in_process:
        return run_scenario(scenario, out / "runs" / scenario.name, log=io.StringIO(), settings=settings)
    watcher = observer(scenario.clustering.protocol)
    if what := watcher.needs_processes(scenario):
        raise RunError(f"{point.path}: {what} runs each MPC party as its own OS process; sweep it without "
                       "--in-process, or set reveal = \"distances\"")
    t0 = time.perf_counter()
    session, own = watcher.in_process(scenario, io.StringIO())  # the parties' round lines: not the sweep's
    session.wait(0)
    memory = peak_rss()
    evaluation = watcher.evaluate(scenario, session, settings, own=own)
    return build(scenario, summarise(session), timing={"total": time.perf_counter() - t0}, evaluation=evaluation,
                 observer=True, coordinator_peak_rss=memory, summaries=own_checks(own))


def sweep(path: Path, out: Path, *, settings: Settings = Settings(), in_process: bool = False, log=sys.stderr) -> list[dict]:
    """Run every point of ``path``'s grid; write ``out/sweep.csv`` (one row per run) and return the rows."""
    points = plan(path, out)
    for note in sweep_notes(*load_sweep(path)):
        print(f"ppc sweep: {note}", file=log, flush=True)
    rows = []
    t0 = time.perf_counter()
    for point in points:
        try:
            report = run_point(point, out, settings, in_process)
        except (RunError, SessionError, PartyError) as exc:
            raise RunError(f"point {point.index} {point.values}: {exc}") from None
        rows.append(row(point, report))
        eta = (time.perf_counter() - t0) / len(rows) * (len(points) - len(rows))
        stress = rows[-1]["stress"]
        print(f"ppc sweep: {len(rows)}/{len(points)} {point.values} "
              + (f"stress={stress:.4f} " if stress is not None else f"rounds={rows[-1].get('rounds')} ") +
              f"ari={rows[-1]['ari']:.3f} bytes={rows[-1]['bytes_payload']:,} ({_left(eta, len(points) - len(rows))})",
              file=log, flush=True)
    write_csv(out, rows)
    return rows


def _left(eta: float, points: int) -> str:
    """The time a sweep has left, in words: ``done``, ``under a second left``, ``about 12 s left``."""
    if points == 0:
        return "done"
    return "under a second left" if eta < 1 else f"about {eta:.0f} s left"


def _attack_column(key: str) -> bool:
    """Whether ``key`` is one of the privacy attacks' columns of a row (its scores, figures, or what was sent)."""
    return key.startswith(("privacy_", "sent_")) or key == "object_privacy_mean" or any(
        key.startswith(f"{attack}_") for attack in ATTACKS)


def write_csv(out: Path, rows: list[dict]) -> None:
    """``out/sweep.csv``: one line per run, every column any row has, but an attack's columns that no run measured
    (all of them with ``--no-attacks``: they were three quarters of the columns, every cell empty)."""
    buf = io.StringIO()
    fields = [k for k in dict.fromkeys(k for r in rows for k in r)
              if not _attack_column(k) or any(r.get(k) not in (None, "") for r in rows)]
    writer = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(out / "sweep.csv", buf.getvalue().encode())
