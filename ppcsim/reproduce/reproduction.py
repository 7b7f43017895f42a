"""``ppc reproduce``: recompute 004's Table 1 / eq. 11, Tables 2-3 and Figs 1-2, and 000's Tables 5.8 and 5.13.

Every random projection runs over seeds 0..N-1 and each cell is reported as
mean, spread and range, beside the paper's single draw. The UCI files
(``UCI_SOURCES``: the Mushroom data with a header row, the Chess (King-Rook vs.
King-Pawn) data without) are not bundled; without them only Table 1 / eq. 11
and Tables 2-3 run. This module
computes; ``ppcsim.reproduce.markdown`` writes the numbers up as ``reproduction.md``.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np
import scipy
from scipy.spatial.distance import pdist
from threadpoolctl import threadpool_limits

from parties.methods.osbr import OSBR
from parties.normalize import normalize
from ppcsim.reproduce.figures000 import vi_figures
from ppcsim.reproduce.markdown import render_markdown
from ppcsim.reproduce.on_cluster import processes
from ppcsim.reproduce.paper004 import (  # noqa: F401 (the paper's numbers stay importable from here)
    EQ11,
    FIG1_BOUND,
    FIG1_K,
    FIG2_BOUND,
    FIG2_K,
    FIG2_PARTIES,
    HEADER,
    MUSHROOM_COLUMNS,
    NORMALIZATIONS,
    ORTHONORMAL,
    PAPER_ROW,
    PROJECTIONS,
    SPARSE_UNIT,
    TABLE1,
    TABLE1_COLUMNS,
    TABLE1_IDS,
    TABLE2_K,
    TABLE2_PAPER,
    TABLE3_RP2,
    TIE,
    UCI_SOURCES,
    is_tie,
    stress_estimate,
)
from ppcsim.reproduce.projection import project_blocks, projection_stress  # noqa: F401 (importable from here)
from ppcsim.reproduce.thesis000 import tables as thesis_tables
from ppcsim.reproduce.thesis000_utility import run as thesis_utility
from ppcsim.reproduce.tries import SEEDS as TRIES_SEEDS
from ppcsim.reproduce.tries import table1_tries
from ppcsim.scenario.partition import share_k, split_sizes

if TYPE_CHECKING:  # Dask is needed only with --scheduler
    from ppcsim.reproduce.on_cluster import ClusterTasks

Progress = Callable[[str], object]

#: Draws per Table 2 cell (at least): enough to place the paper's single draw to a percent.
TABLE2_DRAWS = 2000
#: Seeds for the thesis' Tables 5.8 and 5.13 at most (each seed redraws RP and the CV folds).
THESIS_SEEDS = 20
#: A cell keeps every draw's value in the JSON only up to this many draws.
KEEP_VALUES = 200


# --- data -----------------------------------------------------------------------------------


@dataclass
class Encoded:
    """A categorical CSV as integer codes: ``X[i, j]`` indexes ``categories[j]``."""

    X: np.ndarray
    columns: list[str]
    categories: list[list[str]]


def encode_categorical(source: Path | str | TextIO, *, header: bool) -> Encoded:
    """Read a categorical CSV and map each column's values to 0..c-1 in sorted (ASCII) order.

    Every column is kept, the class column included (004 §6 counts 23 attributes
    for mushroom and 37 for chess). A missing value ``?`` is a category of its
    own; it sorts before digits and letters, so it gets code 0. Digits sort as
    text, so a column holding 0/1/2 keeps its values as codes.

    Parameters
    ----------
    source : path or text stream
    header : bool
        Whether the first row names the columns (otherwise they are ``c0``, ``c1``, ...).

    Returns
    -------
    Encoded
        ``X`` of shape (n_rows, n_columns), float64.
    """
    if isinstance(source, (str, Path)):
        with open(source, newline="") as f:
            return encode_categorical(f, header=header)
    rows = [[cell.strip() for cell in row] for row in csv.reader(source) if row]
    columns = rows.pop(0) if header and rows else []
    if not rows:
        raise ValueError("the CSV has no data rows")
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"data row {i + 1} has {len(row)} fields, expected {width}")
    columns = columns or [f"c{j}" for j in range(width)]
    if len(columns) != width:
        raise ValueError(f"the header names {len(columns)} columns but the rows have {width}")
    cells = np.array(rows, dtype=str)
    categories, X = [], np.empty(cells.shape, dtype=np.float64)
    for j in range(width):
        values, codes = np.unique(cells[:, j], return_inverse=True)
        categories.append(values.tolist())
        X[:, j] = codes
    return Encoded(X, columns, categories)


# --- projections and their stress -----------------------------------------------------------


#: A worker's data and original distances, handed over once per pool (inherited on fork).
_STATE: dict[str, np.ndarray] = {}


def _init_worker(X: np.ndarray, d: np.ndarray) -> None:
    # one BLAS thread per worker: the products are small, and idle BLAS threads spin on the other cores
    threadpool_limits(1)
    _STATE["X"], _STATE["d"] = X, d


def _task(task: tuple) -> float:
    sizes, ks, projection, seed = task
    if "out" not in _STATE:
        _STATE["out"] = np.empty_like(_STATE["d"])
    return projection_stress(_STATE["X"], _STATE["d"], list(sizes), list(ks), projection, seed, out=_STATE["out"])


def run_tasks(X: np.ndarray, d: np.ndarray, tasks: list[tuple], *, jobs: int | ClusterTasks, label: str,
              progress: Progress) -> list[float]:
    """Stress of every ``(sizes, ks, projection, seed)`` task, in order, on ``jobs`` processes.

    ``jobs`` may also be a ``ppcsim.reproduce.on_cluster.ClusterTasks``: the tasks then run on its Dask cluster.
    """
    start, results, step = time.perf_counter(), [], max(1, len(tasks) // 10)

    def report(done: int) -> None:
        if done % step == 0 or done == len(tasks):
            elapsed = time.perf_counter() - start
            eta = elapsed / done * (len(tasks) - done)
            progress(f"  {label}: {done}/{len(tasks)} projections, {elapsed:.0f} s"
                     + (f", about {eta:.0f} s left" if done < len(tasks) else ""))

    if not isinstance(jobs, int):
        return jobs.stress(X, d, tasks, report)
    if jobs <= 1:
        with threadpool_limits(1):
            _STATE["X"], _STATE["d"] = X, d
            try:
                for i, task in enumerate(tasks, 1):
                    results.append(_task(task))
                    report(i)
            finally:
                _STATE.clear()
        return results
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker, initargs=(X, d)) as pool:
        for i, value in enumerate(pool.map(_task, tasks), 1):
            results.append(value)
            report(i)
    return results


def summarize(values: Iterable[float]) -> dict:
    """Mean, sample standard deviation, min and max of one cell over the seeds (and the values).

    ``mean_squared`` is the mean of the squared values: the cell under the
    reading of eq. 6 as printed, which defines stress squared.
    """
    v = np.asarray(list(values), dtype=np.float64)
    out: dict[str, float | int | list[float]] = {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
           "min": float(v.min()), "max": float(v.max()), "mean_squared": float(np.mean(v**2)), "draws": int(v.size)}
    if v.size <= KEEP_VALUES:
        out["values"] = [round(float(x), 6) for x in v]
    return out


# --- the experiments ------------------------------------------------------------------------


def table1_eq11() -> dict:
    """OSBR on Table 1: z-score (sample std), Euclidean distances (eq. 3), against eq. 11."""
    X = normalize(TABLE1, "zscore")
    ours = np.sqrt(OSBR(metric="euclidean").disguise(X, TABLE1_COLUMNS)[0].array)
    return {"normalize": "zscore", "ours": [round(float(x), 6) for x in ours], "paper": EQ11.tolist(),
            "max_abs_diff": float(np.abs(ours - EQ11).max())}


def table2(seeds: int) -> dict:
    """RP1, RP2 (both constructions) and the orthonormal diagnostic on Table 1 at k = 6..3, raw and z-scored.

    Each cell is ``seeds`` draws. Eq. 6 as printed defines stress *squared*,
    while the text calls its root "the relative error"; Table 2 does not say
    which it prints. So for each of the paper's values we report where it
    falls among our draws under both readings: ``paper_percentile`` (the
    share of our stress values at or below it) and ``paper_percentile_squared``
    (the share of our stress² values at or below it).
    """
    paper = {p: {str(k): v for k, v in row.items()} for p, row in TABLE2_PAPER.items()}
    out: dict = {"k": list(TABLE2_K), "paper": paper, "draws": seeds}
    for how in NORMALIZATIONS:
        X = normalize(TABLE1, how)
        d = pdist(X)
        out[how] = {}
        for projection in (*PROJECTIONS, SPARSE_UNIT, ORTHONORMAL):
            out[how][projection] = {}
            for k in TABLE2_K:
                values = np.array([projection_stress(X, d, [6], [k], projection, s) for s in range(seeds)])
                cell = summarize(values)
                if projection in PAPER_ROW:
                    # where the paper's single draw falls: the share of our draws at or below it
                    v = TABLE2_PAPER[PAPER_ROW[projection]][k]
                    cell["paper_percentile"] = float(100 * np.mean(values <= v))
                    cell["paper_percentile_squared"] = float(100 * np.mean(values**2 <= v))
                out[how][projection][str(k)] = cell
    out["log_error"] = {how: _log_error(out[how]) for how in NORMALIZATIONS}
    out["log_error_squared"] = {how: _log_error(out[how], "mean_squared") for how in NORMALIZATIONS}
    out["closer"] = min(NORMALIZATIONS, key=out["log_error"].get)
    # on a tie, Table 3's evidence decides: the paper projected the raw values
    err = out["log_error"]
    out["preferred"] = "none" if is_tie(err["none"], err["zscore"]) else out["closer"]
    out["readings"] = {how: _readings(out[how]) for how in NORMALIZATIONS}
    return out


def _readings(cells: dict) -> dict:
    """For each reading of eq. 6, the paper's RP1/RP2 percentiles at k = 5, 4, 3 and how many are extreme.

    A percentile below 1 or above 99 is extreme: that draw would be rarer than 1 in 100.
    """
    out: dict[str, dict | str] = {}
    extreme: dict[str, int] = {}
    for reading, key in (("stress", "paper_percentile"), ("stress_squared", "paper_percentile_squared")):
        pct = {p: {str(k): cells[p][str(k)][key] for k in TABLE2_K[1:]} for p in PROJECTIONS}
        flat = [v for row in pct.values() for v in row.values()]
        extreme[reading] = sum(v < 1 or v > 99 for v in flat)
        out[reading] = {"percentiles": pct, "extreme": extreme[reading], "of": len(flat)}
    out["favoured"] = min(("stress", "stress_squared"), key=lambda r: extreme[r])
    return out


def table3_rp2() -> dict:
    """Which eq. 9 matrix, normalised to unit-length columns, turns Table 1 into Table 3's RP2 block.

    For each of the three columns of the block, every sign pattern s in
    {-1, 0, 1}^6 is tried: the column ``TABLE1 @ s / ||s||`` (``drbt``'s
    ``"sparse-unit"`` before eq. 8's scale) and, for comparison, ``TABLE1 @ s``,
    which is what the Achlioptas scaling (``"sparse"``, sqrt(3) s / sqrt(3))
    gives at k = 3. The best pattern of each is kept.
    """
    import itertools

    patterns = np.array([s for s in itertools.product((-1.0, 0.0, 1.0), repeat=6) if any(s)])
    unit = TABLE1 @ (patterns / np.linalg.norm(patterns, axis=1, keepdims=True)).T  # 5 x 728
    plain = TABLE1 @ patterns.T
    out: dict = {"paper": TABLE3_RP2.tolist(), "columns": []}
    for j in range(TABLE3_RP2.shape[1]):
        err_unit = np.abs(unit - TABLE3_RP2[:, [j]]).max(axis=0)
        err_plain = np.abs(plain - TABLE3_RP2[:, [j]]).max(axis=0)
        best = int(err_unit.argmin())
        out["columns"].append({"signs": patterns[best].astype(int).tolist(), "ours": unit[:, best].round(4).tolist(),
                               "max_abs_diff": float(err_unit[best]),
                               "achlioptas_max_abs_diff": float(err_plain.min())})
    out["max_abs_diff"] = max(c["max_abs_diff"] for c in out["columns"])
    # how the paper printed them: ours truncated to two decimals (toward zero) or rounded
    exact = np.column_stack([unit[:, patterns.tolist().index(c["signs"])] for c in out["columns"]])
    out["truncated_matches"] = int(np.isclose(np.trunc(exact * 100) / 100, TABLE3_RP2, rtol=0, atol=1e-9).sum())
    out["rounded_matches"] = int(np.isclose(np.round(exact, 2), TABLE3_RP2, rtol=0, atol=1e-9).sum())
    out["values"] = int(TABLE3_RP2.size)
    out["achlioptas_max_abs_diff"] = max(c["achlioptas_max_abs_diff"] for c in out["columns"])
    return out


#: Draws of a 6 x 6 eq. 9 matrix in the orthogonality count (a 1-in-100,000 event is then seen about 40 times).
ORTHOGONAL_DRAWS = 4_000_000


def rp2_orthogonal(draws: int = ORTHOGONAL_DRAWS, seed: int = 0, d: int = 6) -> dict:
    """How often a d x d eq. 9 matrix makes a distance-preserving projection at k = d (Table 2's k = 6).

    Each draw is a matrix of {+1, 0, -1} entries with probabilities 1/6,
    2/3, 1/6 (``drbt``'s ``achlioptas_signs``). ``"sparse-unit"`` (unit-length
    columns, eq. 8's factor sqrt(d/k) = 1) keeps every distance, stress 0,
    exactly when the columns are pairwise orthogonal and none is zero;
    ``"sparse"`` (sqrt(3) times the signs over sqrt(k)) only when, moreover,
    every column has exactly k/3 non-zero entries (its length is then 1).
    Counted over ``draws`` seeded draws, in chunks.
    """
    rng = np.random.default_rng(seed)
    counts = {"sparse": 0, "sparse-unit": 0}
    chunk, left = 250_000, draws
    while left > 0:
        n, left = min(chunk, left), left - min(chunk, left)
        signs = rng.choice(np.array([1.0, 0.0, -1.0]), size=(n, d, d), p=[1 / 6, 2 / 3, 1 / 6])
        gram = np.einsum("nij,nik->njk", signs, signs)
        lengths = np.einsum("njj->nj", gram)
        orthogonal = (np.abs(gram).sum(axis=(1, 2)) == lengths.sum(axis=1)) & (lengths > 0).all(axis=1)
        counts["sparse-unit"] += int(orthogonal.sum())
        counts["sparse"] += int((orthogonal & (lengths * 3 == d).all(axis=1)).sum())
    return {"d": d, "draws": draws, "seed": seed, "orthogonal": counts}


def rp2_orthogonal_exact(d: int = 6) -> dict:
    """The exact probabilities that ``rp2_orthogonal`` estimates, by enumeration (a few seconds at d = 6).

    The d columns are independent, each in {-1, 0, +1}^d with probabilities
    1/6, 2/3, 1/6 per entry. Columns that are pairwise orthogonal and non-zero
    are distinct, and v and -v have the same probability and the same
    orthogonality, so the ordered d-tuples are d! 2^d times the sets of d
    mutually orthogonal sign classes, enumerated in increasing order.
    ``"sparse"`` moreover needs each column to have d/3 non-zero entries.
    Returned as fractions (text) and floats.
    """
    import itertools
    from fractions import Fraction
    from math import factorial

    classes = np.array([v for v in itertools.product((-1, 0, 1), repeat=d) if any(v) and v[np.flatnonzero(v)[0]] == 1])
    nonzero = (classes != 0).sum(axis=1)
    later = np.triu((classes @ classes.T) == 0, k=1)
    masks = [sum(1 << int(j) for j in np.flatnonzero(row)) for row in later]
    weight = [Fraction(1, 6) ** int(z) * Fraction(2, 3) ** int(d - z) for z in nonzero]

    def total(candidates: int, depth: int, lengths: int | None) -> Fraction:
        if depth == d:
            return Fraction(1)
        out, c = Fraction(0), candidates
        while c:
            i = (c & -c).bit_length() - 1
            c &= c - 1
            if lengths is None or nonzero[i] == lengths:
                out += weight[i] * total(candidates & masks[i], depth + 1, lengths)
        return out

    everything = (1 << len(classes)) - 1
    exact = {"sparse-unit": total(everything, 0, None) * factorial(d) * 2**d,
             "sparse": total(everything, 0, d // 3) * factorial(d) * 2**d if d % 3 == 0 else Fraction(0)}
    return {"d": d, "probability": {k: float(v) for k, v in exact.items()},
            "fraction": {k: str(v) for k, v in exact.items()}}


def _log_error(cells: dict, key: str = "mean") -> float:
    """Mean |log(our mean / paper)| over RP1 and RP2 at k = 5, 4, 3 (the paper's k = 6 is 0)."""
    return float(np.mean([abs(np.log(cells[p][str(k)][key] / v))
                          for p, row in TABLE2_PAPER.items() for k, v in row.items() if v > 0]))


def distances(X: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """The normalised data and its original distances (condensed; 33 M pairs for mushroom)."""
    Xn = normalize(X, how)
    return Xn, pdist(Xn)


def normalisation_check(name: str, enc: Encoded, seeds: int, *, jobs: int | ClusterTasks, progress: Progress) -> dict:
    """RP1 and RP2 at Fig. 1's smallest k on raw codes and on z-scores; choose the one nearer the bound."""
    k, bound = FIG1_K[name][-1], FIG1_BOUND[name]
    out: dict = {"dataset": name, "k": k, "bound": bound}
    for how, label in NORMALIZATIONS.items():
        X, d = distances(enc.X, how)
        tasks = [((X.shape[1],), (k,), p, s) for p in PROJECTIONS for s in range(seeds)]
        values = run_tasks(X, d, tasks, jobs=jobs, label=f"{name} {label} k={k}", progress=progress)
        out[how] = {p: summarize(values[i * seeds : (i + 1) * seeds]) for i, p in enumerate(PROJECTIONS)}
        del X, d
    out["score"] = {how: float(np.mean([abs(out[how][p]["mean"] - bound) / bound for p in PROJECTIONS]))
                    for how in NORMALIZATIONS}
    out["chosen"] = min(NORMALIZATIONS, key=out["score"].get)
    return out


def figures(name: str, enc: Encoded, how: str, seeds: int, *, jobs: int | ClusterTasks, progress: Progress,
            known: dict | None = None) -> tuple[dict, dict]:
    """Fig. 1 (stress against k) and Fig. 2 (stress against the number of parties) for one data set.

    The original distances are computed once and shared by all projections; the
    orthonormal diagnostic runs at Fig. 1's smallest k. ``known`` maps a
    projection to its Fig. 1 cell at the smallest k when already computed (by
    the normalisation check, same seeds), which is then not run again.
    """
    known = known or {}
    X, d = distances(enc.X, how)
    full, k2 = X.shape[1], FIG2_K[name]
    splits = {p: (split_sizes(full, p), share_k(split_sizes(full, p), k2)) for p in FIG2_PARTIES}
    cells: list[tuple[str, str, str, tuple[int, ...], tuple[int, ...]]]
    cells = [("fig1", p, str(k), (full,), (k,)) for p in PROJECTIONS for k in FIG1_K[name]]
    cells += [("fig1", ORTHONORMAL, str(FIG1_K[name][-1]), (full,), (FIG1_K[name][-1],))]
    cells += [("fig2", p, str(n), tuple(c), tuple(ks)) for p in PROJECTIONS for n, (c, ks) in splits.items()]
    fig1: dict = {"k": list(FIG1_K[name]), "bound": FIG1_BOUND[name]}
    fig2: dict = {"k": k2, "bound": FIG2_BOUND[name],
                  "splits": {str(n): {"columns": c, "k": ks} for n, (c, ks) in splits.items()}}
    smallest = str(FIG1_K[name][-1])
    for p, cell in known.items():
        fig1.setdefault(p, {})[smallest] = cell
    cells = [c for c in cells if not (c[0] == "fig1" and c[2] == smallest and c[1] in known)]
    tasks = [(sizes, ks, p, s) for _, p, _, sizes, ks in cells for s in range(seeds)]
    values = run_tasks(X, d, tasks, jobs=jobs, label=f"{name} figs 1-2", progress=progress)
    for i, (fig, p, key, _, _) in enumerate(cells):
        (fig1 if fig == "fig1" else fig2).setdefault(p, {})[key] = summarize(values[i * seeds : (i + 1) * seeds])
    for p in (*PROJECTIONS, ORTHONORMAL):  # k in the paper's order
        fig1[p] = {str(k): fig1[p][str(k)] for k in FIG1_K[name] if str(k) in fig1[p]}
    return fig1, fig2


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system); 0 where unknown."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0.0
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def default_jobs() -> int:
    """Worker processes: the CPU count, at most 4 (each holds a few copies of the m(m-1)/2 distances)."""
    return max(1, min(4, os.cpu_count() or 1))


def reproduce(mushroom: Path | None, chess: Path | None, out: Path, *, seeds: int = 50,
              progress: Progress = print, jobs: int | ClusterTasks | None = None, command: str | None = None,
              table2_draws: int | None = None, thesis: bool = True) -> dict:
    """Run every experiment, write ``out/reproduction.md`` and ``out/reproduction.json``, return the numbers.

    Parameters
    ----------
    mushroom, chess : Path or None
        The UCI CSV files (mushroom with a header row, chess without); a data set
        given as None is left out of Figs 1-2.
    out : Path
        Folder for the two files (created if needed).
    seeds : int, default=50
        Seeds 0..seeds-1 for every random projection.
    progress : callable, default=print
        Receives one line per step, and several during long steps.
    jobs : int, optional
        Worker processes for the UCI experiments (default: the CPU count, at most 4).
    command : str, optional
        The command line to print in the report (default: the equivalent ``ppc reproduce``).
    table2_draws : int, optional
        Draws per Table 2 cell (default: ``seeds``, at least ``TABLE2_DRAWS``).
    thesis : bool, default=True
        Also reproduce the thesis' Tables 5.8 and 5.13 (wine and iris, at most ``THESIS_SEEDS`` seeds).

    Returns
    -------
    dict
        Everything written to ``reproduction.json``.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    jobs = default_jobs() if jobs is None else max(1, jobs) if isinstance(jobs, int) else jobs
    paths = {name: Path(p) for name, p in (("mushroom", mushroom), ("chess", chess)) if p is not None}
    started, cpu_started, times = time.perf_counter(), cpu_seconds(), {}
    results: dict = {
        "command": command or format_command(paths, Path(out), seeds),
        "seeds": list(range(seeds)),
        "jobs": jobs if isinstance(jobs, int) else jobs.workers,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "environment": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                        "cpus": os.cpu_count(), "machine": platform.machine()},
    }
    progress("table 1 / eq. 11: OSBR dissimilarities of the z-scored table 1")
    results["table1_eq11"] = table1_eq11()
    progress(f"  max |ours - paper| = {results['table1_eq11']['max_abs_diff']:.1e}")

    t = time.perf_counter()
    draws = table2_draws or max(seeds, TABLE2_DRAWS)
    progress(f"table 2: RP1 and RP2 on table 1, k = 6, 5, 4, 3, raw and z-scored, {draws} draws")
    results["table2"] = table2(draws)
    times["table 2"] = time.perf_counter() - t
    progress("table 3: which RP2 matrix gives the paper's projected table 1")
    results["table3"] = table3_rp2()
    progress(f"  max |ours - paper| = {results['table3']['max_abs_diff']:.3f}")
    progress(f"how often a 6 x 6 RP2 matrix preserves every distance ({ORTHOGONAL_DRAWS:,} draws)")
    results["rp2_orthogonal"] = {**rp2_orthogonal(), "exact": rp2_orthogonal_exact()}
    tries_seeds = min(TRIES_SEEDS, 10 * seeds)  # 500 at the default 50 seeds
    progress(f"004 §5.2 step 3: drbt's best of 1..50 tries on table 1 at k = 5, {tries_seeds} seeds")
    results["table1_tries"] = table1_tries(tries_seeds)

    t = time.perf_counter()
    if thesis:
        progress(f"thesis tables 5.8 and 5.13: NP and 4-NN accuracy on wine and iris, {min(seeds, THESIS_SEEDS)} seeds")
        results["thesis000"] = thesis_tables(min(seeds, THESIS_SEEDS), progress)
        results["thesis000_utility"] = thesis_utility(min(seeds, THESIS_SEEDS), progress=progress)
        for path in vi_figures(results["thesis000_utility"]["figures_5_1_5_3"], Path(out) / "figures").values():
            progress(f"  figs 5.1-5.3 drawn: {path} and {path.with_suffix('.svg')}")
        times["thesis tables 5.6-5.9, 5.13, figs 5.1-5.3"] = time.perf_counter() - t

    data = {name: encode_categorical(p, header=HEADER[name]) for name, p in paths.items()}
    results["encoding"] = {
        name: {"file": paths[name].name, "rows": int(enc.X.shape[0]),
               "categories": dict(zip(enc.columns, enc.categories))}
        for name, enc in data.items()
    }
    if data:
        for name, enc in data.items():
            progress(f"{name}: {enc.X.shape[0]} rows x {enc.X.shape[1]} columns from {paths[name]}")
        name = "mushroom" if "mushroom" in data else "chess"
        t = time.perf_counter()
        progress(f"normalisation check on {name}: raw codes vs z-scores ({processes(jobs)})")
        check = results["normalisation_check"] = normalisation_check(name, data[name], seeds, jobs=jobs,
                                                                     progress=progress)
        times["normalisation check"] = time.perf_counter() - t
        progress(f"  using {NORMALIZATIONS[check['chosen']]} data for figs 1-2")
        results["fig1"], results["fig2"] = {"normalize": check["chosen"]}, {"normalize": check["chosen"]}
        for name, enc in data.items():
            t = time.perf_counter()
            progress(f"figs 1-2 on {name}")
            known = {p: check[check["chosen"]][p] for p in PROJECTIONS} if name == check["dataset"] else None
            results["fig1"][name], results["fig2"][name] = figures(name, enc, check["chosen"], seeds, jobs=jobs,
                                                                   progress=progress, known=known)
            times[f"figs 1-2, {name}"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - started
    results["runtime_s"] = {key: round(v, 1) for key, v in times.items()}
    # a Dask cluster's workers are not this process's children: their CPU time is not known here
    results["cpu_s"] = round(cpu_seconds() - cpu_started, 1) if isinstance(jobs, int) else None

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reproduction.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "reproduction.md").write_text(render_markdown(results))
    progress(f"wrote {out / 'reproduction.md'} and {out / 'reproduction.json'} ({times['total']:.0f} s)")
    return results


def format_command(paths: dict[str, Path], out: Path, seeds: int) -> str:
    """The ``ppc reproduce`` command line for these arguments, with file and folder names only.

    Only the last part of each path is kept, so that the command written into
    the report names no folder of the machine it ran on.
    """
    args = [f"--{name} {shlex.quote(Path(p).name)}" for name, p in paths.items()]
    return " ".join(["ppc reproduce", *args, f"--out {shlex.quote(Path(out).name or '.')}", f"--seeds {seeds}"])


# --- command line ---------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """Handler of ``ppc reproduce``: check the arguments, run, print progress on stderr."""
    for name in ("mushroom", "chess"):
        path = getattr(args, name)
        if path is not None and not path.is_file():
            print(f"ppc reproduce: error: --{name}: no such file: {path}", file=sys.stderr)
            return 2
    if args.seeds < 1:
        print(f"ppc reproduce: error: --seeds must be at least 1, got {args.seeds}", file=sys.stderr)
        return 2
    paths = {name: getattr(args, name) for name in ("mushroom", "chess") if getattr(args, name) is not None}
    for name, path in paths.items():
        try:  # a malformed file fails here, before any long step
            encode_categorical(path, header=HEADER[name])
        except (ValueError, UnicodeDecodeError) as exc:
            print(f"ppc reproduce: error: --{name} {path}: {exc}", file=sys.stderr)
            return 2
    progress = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    command = format_command(paths, args.out, args.seeds)
    if getattr(args, "scheduler", None):  # the projections as tasks on a Dask cluster
        from ppcsim.reproduce.on_cluster import cluster_tasks

        with cluster_tasks(args.scheduler) as tasks:
            reproduce(args.mushroom, args.chess, args.out, seeds=args.seeds, jobs=tasks, command=command,
                      progress=progress)
        return 0
    reproduce(args.mushroom, args.chess, args.out, seeds=args.seeds, jobs=args.jobs, command=command,
              progress=progress)
    return 0

