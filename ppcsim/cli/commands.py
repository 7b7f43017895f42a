"""``ppc run``, ``demo``, ``sweep``, ``reproduce`` and ``credentials``: the commands that run scenarios."""

from __future__ import annotations

import argparse
import importlib
import io
import sys
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ppcsim.errors import RunError, UsageError
from ppcsim.evaluate.artifacts import RunArtifacts
from ppcsim.evaluate.settings import Settings
from ppcsim.run.outdir import claim
from ppcsim.scenario.load import ScenarioError, load_scenario
from protos.vocabulary import SPU

if TYPE_CHECKING:
    from ppcsim.report.model import Report

# Each command imports what it needs inside its function: a party process, which runs
# 'ppc party', then starts without matplotlib, scikit-learn or the observer's attacks.

DEMO = "demo.toml"


def demo_path() -> Path:
    """The bundled demo scenario (installed with the package)."""
    return Path(str(resources.files("scenarios") / DEMO))


def settings_from(args: argparse.Namespace) -> Settings | None:
    """What the observer measures after a run; None with ``--no-eval``."""
    settings = measure_settings(args)
    return None if getattr(args, "no_eval", False) else settings


def measure_settings(args: argparse.Namespace) -> Settings:
    """The measurement options (``--no-attacks``, ``--known-fraction``, ``--known-draws``), checked."""
    if not 0 < args.known_fraction <= 1:
        raise UsageError(f"--known-fraction: must be in (0, 1], got {args.known_fraction}")
    if getattr(args, "known_draws", 1) < 1:
        raise UsageError(f"--known-draws: must be at least 1, got {args.known_draws}")
    return Settings(attacks=not args.no_attacks, known_fraction=args.known_fraction,
                    known_draws=getattr(args, "known_draws", Settings.known_draws))


def cmd_reproduce(args: argparse.Namespace) -> int:
    from ppcsim.reproduce import reproduction  # scipy's distances: imported only for this command

    return reproduction.run(args)


def cmd_run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario or demo_path())
    # the launcher's imports (a tenth of a second) while SPU's interpreter starts for the check, if it does
    spu_ready(scenario, "the parties run", meanwhile=lambda: importlib.import_module("ppcsim.run.launcher"))
    from ppcsim.run.launcher import run_scenario

    settings = settings_from(args)
    out = Path(args.out) if args.out else default_out(scenario.name)
    log = io.StringIO() if args.quiet else sys.stderr
    artifacts = RunArtifacts() if args.html else None  # the arrays behind the page's pictures
    with claim(out, replace=args.replace):
        if getattr(args, "scheduler", None):  # the parties on the workers of a Dask cluster (ppcsim/run/cluster.py)
            from ppcsim.run.cluster import ClusterParties, connect, parse_local

            with connect(args.scheduler, log=log) as client:
                parties = ClusterParties(client, local=parse_local(args.scheduler) is not None)
                report = run_scenario(scenario, out, log=log, listen=f"127.0.0.1:{args.port}", settings=settings,
                                      keep_sent=not args.no_sent, parties=parties, artifacts=artifacts,
                                      scheduler=args.scheduler)
        else:
            report = run_scenario(scenario, out, log=log, listen=f"127.0.0.1:{args.port}", settings=settings,
                                  keep_sent=not args.no_sent, artifacts=artifacts)
        _write_run_page(args, out, report, artifacts)
    written = "report.json, labels.csv" + (", clustered.npz" if (out / "clustered.npz").exists() else "")
    written += ", sent/<party>.npz" if (out / "sent").is_dir() else ""
    written += ", logs/<party>.log" if (out / "logs").is_dir() else ""
    written += ", report.html, figures/" if args.html else ""
    if not args.quiet:
        if not scenario.security.mutual:
            from parties.client import WITHOUT_MUTUAL_TLS

            print(f"ppc: security: {WITHOUT_MUTUAL_TLS}", file=sys.stderr)
        print(f"ppc: wrote {out}/: {written}", file=sys.stderr)
    return 0


def spu_ready(scenario, who: str, meanwhile: Callable[[], object] | None = None) -> None:
    """RunError, before anything starts, if ``scenario`` runs its MPC on SPU and SPU cannot run here: why, and
    what to do (parties.spu_env); if it can, the processes this one starts from now on need not check again
    (``parties.spu_env.checked``). ``meanwhile``, when given, runs in this thread during the check, which mostly
    waits for SPU's interpreter to start (a fifth of a second)."""
    spec = scenario.clustering
    if not (spec.relayed and spec.engine == SPU):  # an MPC, or secure aggregation's labels-only argmin
        if meanwhile is not None:
            meanwhile()
        return
    from parties.spu_env import checked, problem

    found: dict[str, str | None] = {}

    def check() -> None:
        try:
            found["problem"] = problem()
        except Exception:  # noqa: BLE001 - checked again below, where it is raised as it always was
            pass

    checking = threading.Thread(target=check, name="spu-check", daemon=True)
    checking.start()
    try:
        if meanwhile is not None:
            meanwhile()
    finally:
        checking.join()
    why = found["problem"] if "problem" in found else problem()  # what the check raised, raised here
    if why:
        raise RunError(f"{scenario.path}: [clustering] engine = \"spu\": {who} SPU here, but {why}")
    checked()


def default_out(name: str) -> Path:
    """``runs/<name>``, or the first of ``runs/<name>-2``, ``-3``, ... that does not hold files yet, so that
    running a scenario again without ``--out`` keeps the earlier run's outputs."""
    base = Path("runs") / name
    for n in range(1, 10_000):
        candidate = base if n == 1 else base.with_name(f"{name}-{n}")
        if not candidate.exists() or (candidate.is_dir() and not any(candidate.iterdir())):
            return candidate
    return base


def _write_run_page(args: argparse.Namespace, out: Path, report: Report, artifacts: RunArtifacts | None) -> None:
    from ppcsim.report.outputs import write_atomic

    if args.html:  # matplotlib is imported only for pages
        from ppcsim.report.html import run_page
        from ppcsim.report.plots import run_figures

        page = run_page(report, run_figures(report, out / "figures", artifacts), artifacts)
        write_atomic(out / "report.html", page.encode())


def cmd_sweep(args: argparse.Namespace) -> int:
    from ppcsim.report.html import sweep_page
    from ppcsim.report.outputs import write_atomic
    from ppcsim.report.plots import sweep_figures
    from ppcsim.run.sweep import load_sweep, sweep, sweep_notes

    out = Path(args.out)
    settings = measure_settings(args)  # a sweep always measures: it has no --no-eval
    failed: list[dict] = []
    with claim(out, replace=args.replace) as folder:
        try:
            if args.scheduler:  # each point a task on a Dask cluster (ppcsim/run/cluster.py)
                from ppcsim.run.cluster import sweep_on_cluster

                rows, failed = sweep_on_cluster(Path(args.scenario), out, args.scheduler, settings=settings,
                                                in_process=args.in_process)
                if not rows:
                    raise RunError(f"every one of the {len(failed)} points failed (see {out}/failures.csv)")
            else:
                rows = sweep(Path(args.scenario), out, settings=settings, in_process=args.in_process)
        except ScenarioError:
            folder.discard()  # refused before any run: leave no half-planned folder behind
            raise
        figures = sweep_figures(rows, out / "figures")
        raw, grid = load_sweep(Path(args.scenario))
        write_atomic(out / "sweep.html",
                     sweep_page(Path(args.scenario).stem, rows, figures, grid, sweep_notes(raw, grid)).encode())
    print(f"ppc sweep: wrote {out}/: sweep.csv ({len(rows)} runs), sweep.html, figures/ "
          f"({', '.join(figures) or 'no figure: the grid varies no plotted axis'})", file=sys.stderr)
    if failed:
        raise RunError(f"{len(failed)} of {len(failed) + len(rows)} points failed (listed in {out}/failures.csv)")
    return 0


def cmd_credentials(args: argparse.Namespace) -> int:
    from ppcsim.run.credentials import make_credentials, make_shared_credentials

    scenarios = [load_scenario(path, role="coordinator") for path in args.scenario]
    out = Path(args.out)
    if len(scenarios) == 1:
        make_credentials(out, scenarios[0].name, [p.name for p in scenarios[0].parties], args.host)
        where = f"{out}/parties/<name>/"
    else:
        names = [s.name for s in scenarios]
        if len(set(names)) != len(names):
            raise UsageError(f"two scenarios have the same session name: {', '.join(names)}")
        make_shared_credentials(out, {s.name: [p.name for p in s.parties] for s in scenarios}, args.host)
        where = f"{out}/<session>/parties/<name>/"
    print(f"ppc credentials: wrote {out}/ (the coordinator's files at the top; each party's in "
          f"{where}: give every party only its own folder)", file=sys.stderr)
    return 0
