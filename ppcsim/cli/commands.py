"""``ppc``: run scenarios, or the coordinator and party roles by hand."""

from __future__ import annotations

import argparse
import io
import logging
import signal
import sys
import threading
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from coordinator.errors import SessionError
from coordinator.limits import Limits
from parties.errors import PartyError
from ppcsim.errors import RunError, UsageError
from ppcsim.evaluate.settings import Settings
from ppcsim.run.outdir import OutputError, claim
from ppcsim.scenario.load import ScenarioError, load_scenario
from protos.serde import WireError

if TYPE_CHECKING:
    from ppcsim.report.model import Report

# Each command imports what it needs inside its function: a party process, which runs
# 'ppc party', then starts without matplotlib, scikit-learn or the observer's attacks.

DEMO = "demo.toml"
#: Seconds between a waiting party's lines on what it waits for (``ppc party --progress``).
PROGRESS_EVERY = 5.0

def description() -> str:
    """``ppc --help``'s text: the disguise methods and clustering algorithms as registered."""
    import textwrap

    from coordinator.clustering import ALGORITHMS
    from parties.methods import METHODS

    methods = "; ".join(f"{name}: {cls.summary}" if cls.summary else name for name, cls in METHODS.items())
    text = (f"Each party is its own process: it loads only its own columns, disguises them ({methods}) and sends "
            "them over gRPC (TLS, a token per party) to a coordinator, which joins the records on id, clusters "
            f"them ({', '.join(ALGORITHMS)}), returns the result to every party and counts every byte that "
            "crossed the wire.")
    return ("Simulate privacy-preserving clustering over vertically partitioned data.\n\n"
            + textwrap.fill(text, 88) + "\n")


EPILOG = """\
examples:
  ppc demo                              run the bundled demo (wine data, 3 parties)
  ppc run scenarios/wine-osbr.toml --out runs/wine --html
  ppc sweep scenarios/sweep-wine-k.toml --out runs/sweep --in-process
  ppc sweep scenarios/sweep-wine-k.toml --out runs/sweep --in-process --scheduler local:2
  ppc reproduce --mushroom mushroom.csv --chess chess.csv --out docs/
  ppc credentials s.toml --out creds --host coord.example.org
  ppc coordinator --listen 0.0.0.0:50051 --scenario s.toml --credentials creds --out runs/s
  ppc party --coordinator coord.example.org:50051 --scenario s.toml --party lab --credentials creds/parties/lab
"""


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
    from ppcsim.run.launcher import run_scenario

    scenario = load_scenario(args.scenario or demo_path())
    settings = settings_from(args)
    out = Path(args.out) if args.out else default_out(scenario.name)
    log = io.StringIO() if args.quiet else sys.stderr
    details: dict | None = {} if args.html else None  # the arrays behind the page's pictures
    with claim(out, replace=args.replace):
        if getattr(args, "scheduler", None):  # the parties on the workers of a Dask cluster (ppcsim/run/cluster.py)
            from ppcsim.run.cluster import ClusterParties, connect, parse_local

            with connect(args.scheduler, log=log) as client:
                parties = ClusterParties(client, local=parse_local(args.scheduler) is not None)
                report = run_scenario(scenario, out, log=log, listen=f"127.0.0.1:{args.port}", settings=settings,
                                      keep_sent=not args.no_sent, parties=parties, details=details,
                                      scheduler=args.scheduler)
        else:
            report = run_scenario(scenario, out, log=log, listen=f"127.0.0.1:{args.port}", settings=settings,
                                  keep_sent=not args.no_sent, details=details)
        _write_run_page(args, out, report, details)
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


def default_out(name: str) -> Path:
    """``runs/<name>``, or the first of ``runs/<name>-2``, ``-3``, ... that does not hold files yet, so that
    running a scenario again without ``--out`` keeps the earlier run's outputs."""
    base = Path("runs") / name
    for n in range(1, 10_000):
        candidate = base if n == 1 else base.with_name(f"{name}-{n}")
        if not candidate.exists() or (candidate.is_dir() and not any(candidate.iterdir())):
            return candidate
    return base


def _write_run_page(args: argparse.Namespace, out: Path, report: Report, details: dict | None) -> None:
    from ppcsim.report.outputs import write_atomic

    if args.html:  # matplotlib is imported only for pages
        from ppcsim.report.html import run_page
        from ppcsim.report.plots import run_figures

        page = run_page(report, run_figures(report, out / "figures", details), details)
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


def _coordinator_credentials(args: argparse.Namespace, scenarios: list) -> list[Path | None]:
    """Each scenario's credentials folder, in order (None where none was given).

    One scenario: ``--credentials DIR`` is its folder. Several: either one
    ``--credentials`` per ``--scenario``, in the same order, or one folder
    holding a folder per session, named after the session (``DIR/<name>/``).
    """
    given = [Path(c) for c in args.credentials or []]
    n = len(scenarios)
    if len(given) == n:
        return list(given)
    if not given:
        return [None] * n
    if len(given) == 1 and n > 1:
        return [given[0] / s.name for s in scenarios]
    raise UsageError(f"--credentials given {len(given)} times for {n} scenario{'s' if n > 1 else ''}: give it once "
                       "per --scenario, in the same order, or once as a folder holding a folder per session name")


def _coordinator_security(args: argparse.Namespace, scenarios: list, folders: list[Path | None]):
    """The one way the coordinator listens (all its sessions share the port): ServerSecurity.

    Every session must ask for the same transport, and under TLS every
    session's credentials must hold the same coordinator certificate, key and
    CA: a listening port presents one certificate.
    """
    from coordinator.security import ServerSecurity, load_server_security

    for scenario, folder in zip(scenarios, folders):
        sec = scenario.security
        if sec.needs_credentials and folder is None:
            raise SessionError(
                f"session '{scenario.name}': the scenario's [security] asks for {'TLS' if sec.tls else 'tokens'}: "
                f"create credentials with 'ppc credentials {scenario.path} --out DIR' and pass --credentials DIR")

    def transport(s) -> str:
        return ServerSecurity(tls=s.security.tls, mutual=s.security.mutual).transport

    first = scenarios[0]
    for scenario in scenarios[1:]:
        if transport(scenario) != transport(first):
            raise SessionError(
                f"session '{scenario.name}' asks for {transport(scenario)} but session '{first.name}' for "
                f"{transport(first)}: the sessions of one coordinator share its port, so their [security] tls "
                "and mutual must agree")
    if not first.security.tls:
        return load_server_security(None, tls=False, mutual=False)
    top = Path(args.credentials[0]) if len(args.credentials) == 1 else None
    if len(scenarios) > 1 and top and (top / "coordinator.pem").exists():
        # one folder for all, with the coordinator's own files at its top
        return load_server_security(top, tls=True, mutual=first.security.mutual)
    loaded = [load_server_security(folder, tls=True, mutual=first.security.mutual) for folder in folders]
    for scenario, folder, security in zip(scenarios[1:], folders[1:], loaded[1:]):
        if security != loaded[0]:
            raise SessionError(
                f"session '{scenario.name}': its credentials ({folder}) hold another coordinator certificate or CA "
                f"than session '{first.name}' ({folders[0]}): a coordinator presents one certificate, so every "
                "session it serves needs credentials made with the same CA and coordinator certificate")
    return loaded[0]


def cmd_coordinator(args: argparse.Namespace) -> int:
    """Serve the sessions; with ``--out``, holding that folder as ``ppc run`` does (ppcsim.run.outdir.claim)."""
    if not args.out:
        return _serve(args)
    with claim(Path(args.out), replace=args.replace):
        return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    from coordinator.security import load_token_digests
    from coordinator.server import start_server
    from coordinator.servicer import Registry
    from coordinator.session import DONE, FAILED
    from ppcsim.report.outputs import build, summary_table, write_atomic, write_outputs

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    scenarios = [load_scenario(path, role="coordinator") for path in args.scenario]
    seen: dict[str, Path] = {}
    for scenario in scenarios:
        if scenario.name in seen:
            raise SessionError(f"{seen[scenario.name]} and {scenario.path} both name session '{scenario.name}': "
                               "the sessions of one coordinator need different names")
        seen[scenario.name] = scenario.path
    folders = _coordinator_credentials(args, scenarios)
    security = _coordinator_security(args, scenarios, folders)
    registry = Registry(memory=args.memory << 20)
    sessions = []
    for scenario, folder in zip(scenarios, folders):
        tokens = None
        if scenario.security.tokens:
            assert folder is not None  # _coordinator_security refused a session with tokens and no credentials
            tokens = load_token_digests(folder, scenario.name)
        spec = scenario.session_spec(tokens, keep_uploads=bool(args.out) and not args.no_sent)
        spec.memory = args.session_memory << 20
        sessions.append(registry.create(spec))
        from ppcsim.run import helper  # MPC of two parties: the coordinator's share-holder with no data

        helper.start(sessions[-1])
    limits = Limits(first_message_seconds=args.first_message_seconds, idle_seconds=args.idle_seconds,
                    party_calls=args.party_calls)
    server, port = start_server(args.listen, registry, security=security, limits=limits)
    several = len(scenarios) > 1
    if several:
        print(f"ppc coordinator: listening on port {port} ({security.transport}), {len(scenarios)} sessions",
              file=sys.stderr, flush=True)
    for scenario in scenarios:
        print(f"ppc coordinator: {'' if several else f'listening on port {port} ({security.transport}), '}"
              f"session '{scenario.name}' expects {', '.join(p.name for p in scenario.parties)}",
              file=sys.stderr, flush=True)
    if args.port_file:
        write_atomic(Path(args.port_file), str(port).encode())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.is_set() and not all(s.state in (DONE, FAILED) for s in sessions):
            stop.wait(0.2)
        if stop.is_set():
            for session in sessions:
                session.fail("the coordinator was stopped (SIGTERM) before the session ended")
        # let the parties fetch their results (or hear why not) before the server goes away; after a SIGTERM
        # too (stop is set then, so its own wait would return at once), or a party between two calls would
        # find no server instead of the reason
        threading.Event().wait(args.linger)
    except KeyboardInterrupt:
        for session in sessions:
            session.fail("the coordinator was interrupted before the session ended")
    finally:
        # stop() returns at once; waiting lets the calls in flight (a party hearing why its session
        # failed) finish, for up to the grace period, before this process exits under them
        server.stop(grace=2.0).wait()
    failed = []
    for scenario, session in zip(scenarios, sessions):
        report = build(scenario, session, by_hand=True)
        if args.out:
            write_outputs(Path(args.out) / scenario.name if several else Path(args.out), report, session,
                          sent=not args.no_sent)
        if session.error:
            failed.append(f"session '{scenario.name}' failed: {session.error}")
        else:
            if several:
                print(f"ppc coordinator: session '{scenario.name}' done", file=sys.stderr)
            print(summary_table(report), file=sys.stderr)
    for line in failed:
        print(f"ppc coordinator: error: {line}", file=sys.stderr)
    return 1 if failed else 0


def party_seed_from(args: argparse.Namespace) -> int | None:
    """The seed ``--seed`` or ``--seed-file`` gives (a file of one integer; ``-``: standard input), else None."""
    if args.seed is not None and args.seed_file is not None:
        raise PartyError("give --seed or --seed-file, not both")
    if args.seed_file is None:
        return args.seed
    where = "standard input" if args.seed_file == "-" else args.seed_file
    try:
        text = sys.stdin.readline() if args.seed_file == "-" else Path(args.seed_file).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise PartyError(f"--seed-file: cannot read {where}: {exc}") from None
    try:
        seed = int(text.strip())
    except ValueError:
        raise PartyError(f"--seed-file: {where} must hold one non-negative integer") from None
    if seed < 0:
        raise PartyError(f"--seed-file: {where} must hold one non-negative integer, got {seed}")
    return seed


def cmd_party(args: argparse.Namespace) -> int:
    import grpc

    from parties.client import WITHOUT_MUTUAL_TLS, ClientSecurity
    from parties.run import rpc_message, run_party

    scenario = load_scenario(args.scenario, role="party", party=args.party)
    seed = party_seed_from(args)
    if args.state:
        from parties.state import session_seed

        seed = session_seed(Path(args.state), args.session or scenario.name, args.party, seed)
    cfg = replace(scenario.party(args.party), seed=seed)
    if not scenario.security.mutual and not args.quiet:
        print(f"ppc party {cfg.name}: security: {WITHOUT_MUTUAL_TLS}", file=sys.stderr)
    if scenario.security.needs_credentials and not args.credentials:
        raise PartyError(f"party '{cfg.name}': the scenario's [security] needs credentials: pass --credentials "
                         "with this party's folder from 'ppc credentials'")
    security = ClientSecurity.load(Path(args.credentials), cfg.name) if args.credentials else None
    try:
        run_party(
            cfg,
            args.coordinator,
            args.session or scenario.name,
            timeout=args.timeout or scenario.deadline,
            timeout_name="--timeout" if args.timeout else "scenario's deadline",
            labels_out=Path(args.labels_out) if args.labels_out else None,
            summary_out=Path(args.summary) if args.summary else None,
            security=security,
            tls=scenario.security.tls,
            mutual=scenario.security.mutual,
            secure_only=cfg.name in scenario.unnamed,
            ids_mode=scenario.security.ids,
            log=io.StringIO() if args.quiet else sys.stderr,
            progress=0.0 if args.quiet else args.progress,
        )
    except PartyError as exc:
        raise PartyError(f"party '{cfg.name}': {exc}") from None
    except grpc.RpcError as exc:
        print(f"ppc party {cfg.name}: error: {rpc_message(exc)}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppc", description=description(), epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add_measure_options(p):
        p.add_argument("--no-attacks", action="store_true",
                       help="measure utility only; skip the privacy attacks (faster on large data)")
        p.add_argument("--known-fraction", type=float, default=0.05, metavar="F",
                       help="share of records the known input-output attacker knows (default: 0.05)")
        p.add_argument("--known-draws", type=int, default=Settings.known_draws, metavar="N",
                       help="repeat each known-record attack over N draws of the known records and report the "
                       f"mean and spread (default: {Settings.known_draws}; fewer above 4,000 records, at least 10; "
                       "multilateration at most 10)")

    def add_replace_option(p):
        p.add_argument("--replace", action="store_true",
                       help="delete an earlier run's outputs in the --out folder first (without it, a folder that "
                       "holds files is refused, and so is one another ppc command is writing into)")

    def add_run_options(p):
        p.add_argument("--out", metavar="DIR", help="where to write report.json, labels.csv, sent/ and logs/: an "
                       "empty or new folder (default: runs/<scenario name>, or runs/<scenario name>-2, -3, ... "
                       "when that holds an earlier run)")
        add_replace_option(p)
        p.add_argument("--port", type=int, default=0, help="coordinator port on 127.0.0.1 (default: a free one)")
        p.add_argument("--html", action="store_true", help="also write report.html (tables and figures, self-contained)")
        p.add_argument("--no-eval", action="store_true",
                       help="measure neither utility nor privacy: only the protocol's own work (for timing)")
        p.add_argument("--no-sent", action="store_true",
                       help="write no sent/; with --no-eval the coordinator then keeps only the sum of the parties' "
                       "dissimilarities, not each party's (for large osbr runs)")
        p.add_argument("--quiet", action="store_true", help="print nothing but errors")
        add_measure_options(p)

    run = sub.add_parser("run", help="run a scenario: coordinator plus one process per party",
                         description="Run a scenario file: start the coordinator and one OS process per party on "
                         "this machine, wait for the clustering, print a per-party summary and write the outputs.")
    run.add_argument("scenario", nargs="?", help="scenario TOML file (default: the bundled demo)")
    add_run_options(run)
    run.add_argument("--scheduler", metavar="ADDRESS",
                     help="start each party on a worker of a Dask cluster (a scheduler's address, tcp://host:8786, or "
                     "local:N for N worker processes here), round-robin or on its [[parties]] 'host'; the "
                     "coordinator and its counting relays stay here (see docs/cluster.md)")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser("demo", help="run the bundled demo scenario (no files needed)",
                          description="Run the bundled demo: the wine data split over 3 parties using drbt and none. "
                          "It also writes report.html (--no-html: not).")
    add_run_options(demo)
    demo.add_argument("--no-html", dest="html", action="store_false", help="write no report.html")
    demo.set_defaults(func=cmd_run, scenario=None, html=True)

    sw = sub.add_parser("sweep", help="run a scenario over the grid in its [sweep] table",
                        description="Run every combination of the values in the scenario's [sweep] table (k, "
                        "projection, method, normalize, seed, parties, rows, or '<party>.<field>'), and write "
                        "sweep.csv (one row per run, with its seed and parameters), figures/ and sweep.html.")
    sw.add_argument("scenario", help="scenario TOML file with a [sweep] table")
    sw.add_argument("--out", required=True, metavar="DIR", help="where to write the sweep's outputs (an empty or "
                    "new folder)")
    add_replace_option(sw)
    sw.add_argument("--in-process", action="store_true",
                    help="run each point in this process through the same code, without gRPC or party "
                    "processes: the same numbers (but timings), much faster")
    sw.add_argument("--scheduler", metavar="ADDRESS",
                    help="run each point as a task on a Dask cluster: a scheduler's address (tcp://host:8786) or "
                    "local:N for N worker processes on this machine; needs pip install 'ppc-sim[dask]' (see "
                    "docs/cluster.md). A failed point is reported and the others go on")
    add_measure_options(sw)
    sw.set_defaults(func=cmd_sweep)

    cred = sub.add_parser("credentials", help="create a throw-away CA, certificates and tokens for a scenario",
                          description="Create a throw-away certificate authority, a certificate for the coordinator, "
                          "and a certificate and token for each party of the scenario, for running the roles by "
                          "hand over TLS. 'ppc run' makes its own for every run.")
    cred.add_argument("scenario", nargs="+", help="scenario TOML file (its name and parties); several for one "
                      "coordinator serving several sessions (one CA, one folder per session)")
    cred.add_argument("--out", required=True, metavar="DIR")
    cred.add_argument("--host", action="append", default=[], metavar="NAME",
                      help="a host name or address the coordinator is reached at (repeatable)")
    cred.set_defaults(func=cmd_credentials)

    coord = sub.add_parser("coordinator", help="run the coordinator for one or more scenarios' sessions",
                           description="Serve the session each scenario file describes until every one has\n"
                           "ended (done, failed or past its deadline), then write their reports. Parties\n"
                           "connect with 'ppc party'. Repeat --scenario to serve several sessions at once\n"
                           "on one port (their names must differ). Exits 0 when every session is done, 1\n"
                           "when any failed, with one 'error:' line per failed session, naming it.",
                           epilog="several sessions:\n"
                           "  ppc coordinator --listen 0.0.0.0:50051 --scenario a.toml --scenario b.toml \\\n"
                           "      --credentials creds/a --credentials creds/b --out runs\n"
                           "\n"
                           "  writes runs/<session name>/ for each session. --credentials is given once per\n"
                           "  --scenario, in the same order, or once as a folder holding one folder per\n"
                           "  session, named after it (DIR/<name>/); the coordinator's own TLS files\n"
                           "  (ca.pem, coordinator.pem, coordinator.key) are then read from the top of DIR\n"
                           "  when they are there, else from each session's folder. The tokens are per\n"
                           "  session, but a port presents one certificate: under TLS every session's\n"
                           "  folder must carry the same coordinator certificate, key and CA, and every\n"
                           "  party the same ca.pem ('ppc credentials' makes a new CA each time, so copy the\n"
                           "  first folder's three files over the others' and its ca.pem into each party\n"
                           "  folder; under mutual TLS the party certificates must come from that CA too).\n"
                           "  The sessions must agree on [security] tls and mutual.",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    coord.add_argument("--listen", required=True, metavar="HOST:PORT", help="address to serve on (port 0: any free one)")
    coord.add_argument("--scenario", required=True, action="append", metavar="FILE",
                       help="scenario TOML file (parties expected, clustering); repeat to serve several sessions")
    coord.add_argument("--out", metavar="DIR", help="write report.json, labels.csv and sent/ here when done "
                       "(with several scenarios: into DIR/<session name>/)")
    add_replace_option(coord)
    coord.add_argument("--no-sent", action="store_true",
                       help="with --out, write no sent/ (without --out none is written, and the coordinator keeps "
                       "only the sum of the parties' dissimilarities, not each party's)")
    coord.add_argument("--credentials", metavar="DIR", action="append",
                       help="folder from 'ppc credentials' (needed unless the scenario turns [security] tls and "
                       "tokens off); with several scenarios: once per --scenario in the same order, or once as a "
                       "folder of DIR/<session name>/ folders (see below)")
    coord.add_argument("--port-file", metavar="FILE", help="write the port actually bound to FILE")
    coord.add_argument("--linger", type=float, default=2.0, metavar="S",
                       help="seconds to keep serving after the last session ends, for parties to fetch results")
    limits = coord.add_argument_group("limits", "what one caller, one session and the whole coordinator may take "
                                      "(docs/protocol.md, 'Limits')")
    limits.add_argument("--session-memory", type=int, default=4096, metavar="MIB",
                        help="MiB each session may hold as stored: decoded ids, arrays, the ledger (default: 4096); "
                        "an upload past it is refused with RESOURCE_EXHAUSTED naming it")
    limits.add_argument("--memory", type=int, default=0, metavar="MIB",
                        help="MiB all sessions together may hold (default: half this machine's memory)")
    limits.add_argument("--first-message-seconds", type=float, default=Limits.first_message_seconds, metavar="S",
                        help="seconds a stream may take to send its first message (default: %(default)g)")
    limits.add_argument("--idle-seconds", type=float, default=Limits.idle_seconds, metavar="S",
                        help="seconds a stream may go without a message once started (default: %(default)g)")
    limits.add_argument("--party-calls", type=int, default=Limits.party_calls, metavar="N",
                        help="calls one party may have in flight (default: %(default)d)")
    coord.set_defaults(func=cmd_coordinator)

    party = sub.add_parser("party", help="run one party against a coordinator",
                           description="Load this party's own columns, disguise them, upload them to the "
                           "coordinator and wait for the shared clustering.")
    party.add_argument("--coordinator", required=True, metavar="HOST:PORT")
    party.add_argument("--scenario", required=True, help="scenario TOML file with this party's [[parties]] table "
                       "(other parties' tables, if any, are not read)")
    party.add_argument("--party", required=True, metavar="NAME", help="which party of the scenario to be")
    party.add_argument("--session", help="session name (default: the scenario's name)")
    party.add_argument("--credentials", metavar="DIR", help="this party's folder from 'ppc credentials' "
                       "(or the whole folder)")
    party.add_argument("--labels-out", metavar="FILE", help="write id,cluster for this party's records")
    party.add_argument("--summary", metavar="FILE", help="write this party's summary as JSON")
    party.add_argument("--timeout", type=float, help="seconds to wait for the whole exchange (default: the "
                       "scenario's deadline)")
    party.add_argument("--seed", type=int, metavar="N",
                       help="seed this party's disguise and pseudonym key with N, to repeat a run on purpose "
                       "(default: a fresh seed from this machine's entropy, which nobody else can regenerate)")
    party.add_argument("--seed-file", metavar="FILE",
                       help="read the seed from FILE, one integer ('-': standard input; 'ppc run' hands each party "
                       "its seed this way)")
    party.add_argument("--state", metavar="DIR",
                       help="keep this party's session state (its seed, from which its keys derive) in a 0600 file "
                       "in DIR, so that the party started again with the same DIR rejoins its session")
    party.add_argument("--progress", type=float, default=PROGRESS_EVERY, metavar="SECONDS",
                       help=f"while waiting, say every SECONDS what for (the coordinator unreachable, the parties "
                       f"present, the round; default {PROGRESS_EVERY:g}; 0: never)")
    party.add_argument("--quiet", action="store_true", help="print nothing but errors")
    party.set_defaults(func=cmd_party)

    rep = sub.add_parser("reproduce", help="recompute the papers' tables and figures next to the printed values",
                         description="Recompute 004's Table 1 / eq. 11, Tables 2-3 and Figs 1-2 over many seeds "
                         "(with both readings of its eq. 6) and the thesis' Tables 5.8 and 5.13 on wine and iris, and "
                         "write reproduction.md and reproduction.json (the UCI files are not bundled; without them "
                         "Figs 1-2 are left out).")
    rep.add_argument("--mushroom", type=Path, metavar="CSV", help="UCI mushroom file (23 columns, header row)")
    rep.add_argument("--chess", type=Path, metavar="CSV", help="UCI chess kr-vs-kp file (37 columns, no header)")
    rep.add_argument("--out", type=Path, required=True, metavar="DIR",
                     help="where to write reproduction.md and reproduction.json")
    rep.add_argument("--seeds", type=int, default=50, metavar="N", help="use seeds 0..N-1 (default: 50)")
    rep.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: the CPU count, at most 4)")
    rep.add_argument("--scheduler", metavar="ADDRESS",
                     help="run the projections on a Dask cluster instead of --jobs processes: a scheduler's address "
                     "(tcp://host:8786) or local:N; needs pip install 'ppc-sim[dask]' (see docs/cluster.md)")
    rep.set_defaults(func=cmd_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prog = "ppc " + args.command
    try:
        return args.func(args)
    except ScenarioError as exc:
        for line in str(exc).splitlines():
            print(f"{prog}: error: {line}", file=sys.stderr)
        return 2
    except (PartyError, SessionError, WireError, OutputError, UsageError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except RunError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
