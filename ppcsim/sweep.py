"""Sweeps: run a scenario over a grid of parameters and tabulate utility, privacy and bytes.

The grid is the scenario's ``[sweep]`` table; every combination is one run:

``k``, ``projection``     every drbt party's output dims / projection
``method``                every party's method (parameters the method does not take are dropped)
``normalize``             every party's normalisation
``seed``                  the scenario seed (and so every party's seed)
``parties``               re-split all columns, in order, over this many parties ``p1..pN`` that
                          take the first party's settings; a drbt ``k`` is then the total output
                          dims, shared out in proportion to each party's column count (004 §6.2)
``rows``                  rows of a ``synthetic:blobs`` source
``<party>.<field>``       one field of one party, e.g. ``"lab.k"``
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

from coordinator.clustering import SECURE
from coordinator.errors import SessionError
from parties.errors import PartyError
from parties.methods import method_class
from ppcsim.evaluate.observer import Settings, evaluate
from ppcsim.errors import RunError
from ppcsim.launcher import run_scenario
from ppcsim.partition import share_k, split_sizes
from ppcsim.report import build_report, write_atomic
from ppcsim.scenario import ScenarioError, load_scenario
from ppcsim.simulate import simulate

GLOBAL_KEYS = ("method", "parties", "k", "projection", "normalize", "seed", "rows")


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
    known = set(method_class(method).params)
    for key in [k for k in party if k not in ("name", "data", "id_column", "columns", "method", "normalize")]:
        if key not in known:
            party.pop(key)
    party["method"] = method


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
        if template.get("method") == "drbt" and "k" not in values:
            for p, k in zip(parties, share_k([len(g) for g in groups], template["k"])):
                p["k"] = k
    for key, value in values.items():
        if key in ("k", "projection"):
            drbt = [p for p in parties if p.get("method") == "drbt"]
            if key == "k" and "parties" in values:
                for p, k in zip(drbt, share_k([len(p["columns"]) for p in drbt], value)):
                    p["k"] = k
            else:
                for p in drbt:
                    p[key] = value
        elif key == "normalize":
            for p in parties:
                p["normalize"] = value
        elif key == "seed":
            raw["seed"] = value
        elif key == "rows":
            raw.setdefault("data", {})["rows"] = value
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
    names = {p.get("name") for p in raw.get("parties", []) if isinstance(p, dict)}
    for key, values in grid.items():
        if key not in GLOBAL_KEYS and not ("." in key and key.split(".", 1)[0] in names):
            errors.append(f"[sweep]: unknown key '{key}' (known: {', '.join(GLOBAL_KEYS)}, or '<party>.<field>')")
        if not isinstance(values, list) or not values:
            errors.append(f"[sweep]: '{key}' must be a non-empty list of values")
    if errors:
        raise ScenarioError(Path(path), errors)
    return raw, grid


def plan(path: Path, out: Path) -> list[Point]:
    """Write every grid point's scenario file under ``out/points`` and validate them all first."""
    raw, grid = load_sweep(path)
    base = Path(path).resolve().parent
    points, errors = [], []
    for index, combo in enumerate(itertools.product(*grid.values())):
        values = dict(zip(grid, combo))
        point = apply_point(raw, values)
        point["name"] = f"{raw.get('name', Path(path).stem)}-{index:03d}"
        for entry in [point.get("data", {}), *point["parties"]]:
            key = "source" if entry is point.get("data") else "data"
            src = entry.get(key)
            if isinstance(src, str) and not src.startswith(("sklearn:", "synthetic:")) and not Path(src).is_absolute():
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


def row(point: Point, report: dict) -> dict:
    """One CSV row: the point's parameters, then its utility, privacy and bytes."""
    out = {"point": point.index, "scenario": report["scenario"], "seed": report["seed"]}
    out.update({f"param_{k}": v for k, v in point.values.items()})
    parties = report["parties"]
    out["rows"] = report["join"]["rows_joined"]
    out["methods"] = "+".join(sorted({p["method"] for p in parties}))
    out["parties"] = len(parties)
    out["input_dims"] = sum(len(p["columns"]) for p in parties)
    out["output_dims"] = sum(p["output_dims"] for p in parties if p["sends"] == "features") or None
    u = report.get("utility", {})
    out["stress"] = u.get("stress")
    for key in ("misclassification", "ari", "nmi", "variation_of_information", "f_measure"):
        out[key] = u.get("vs_original", {}).get(key)
    out["ari_truth"] = u.get("vs_truth", {}).get("ari")
    privacy = report.get("privacy", {})
    for attack in ("known_io", "ica", "multilateration"):
        found = [v["attacks"][attack] for v in privacy.values() if isinstance(v, dict)
                 and attack in v.get("attacks", {}) and "min" in v["attacks"][attack]]
        out[f"privacy_{attack}_min"] = min((a["min"] for a in found), default=None)
        out[f"privacy_{attack}_mean"] = sum(a["mean"] for a in found) / len(found) if found else None
    # the strongest attack that applies to each party, averaged over parties: one figure for any method
    worst = [min(a["mean"] for a in v["attacks"].values() if "mean" in a)
             for v in privacy.values() if isinstance(v, dict) and any("mean" in a for a in v.get("attacks", {}).values())]
    out["privacy_worst_mean"] = sum(worst) / len(worst) if worst else None
    for key in ("predicted", "payload", "serialized"):
        out[f"bytes_{key}"] = sum(p["bytes"][key] or 0 for p in parties)
    out["seconds"] = report["timing"].get("total")
    if "secure_aggregation" in report:
        out["rounds"] = report["secure_aggregation"].get("rounds")
        out["labels_equal_same_init"] = u.get("labels_equal_same_init")
    return out


def run_point(point: Point, out: Path, settings: Settings, in_process: bool) -> dict:
    """The report of one point, from a real multi-process run or the in-process simulation."""
    scenario = load_scenario(point.path)
    if not in_process:
        return run_scenario(scenario, out / "runs" / scenario.name, log=io.StringIO(), settings=settings)
    t0 = time.perf_counter()
    if scenario.clustering.protocol == SECURE:  # rounds, each party a thread (ppcsim.simulate.simulate_secure)
        from ppcsim.evaluate.secure import evaluate_secure
        from ppcsim.simulate import simulate_secure

        session, _, own = simulate_secure(scenario)
        session.wait(0)
        report = build_report(scenario, session, {}, {})
        report.update(evaluate_secure(scenario, session, settings, own=own))
        report["timing"]["total"] = time.perf_counter() - t0
        return report
    session, own = simulate(scenario)
    outcome = session.wait(0)
    report = build_report(scenario, session, {}, {})
    report.update(evaluate(scenario, outcome, session.contributions, settings, own=own))
    report["timing"]["total"] = time.perf_counter() - t0
    return report


def sweep(path: Path, out: Path, *, settings: Settings = Settings(), in_process: bool = False, log=sys.stderr) -> list[dict]:
    """Run every point of ``path``'s grid; write ``out/sweep.csv`` (one row per run) and return the rows."""
    points = plan(path, out)
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
              f"ari={rows[-1]['ari']:.3f} bytes={rows[-1]['bytes_payload']:,} (about {eta:.0f} s left)",
              file=log, flush=True)
    buf = io.StringIO()
    fields = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(out / "sweep.csv", buf.getvalue().encode())
    return rows
