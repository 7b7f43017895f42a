"""``ppc coordinator`` and ``ppc party``: the roles run by hand, each on its own host."""

from __future__ import annotations

import argparse
import io
import logging
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path

from coordinator.errors import SessionError
from coordinator.limits import Limits
from parties.errors import PartyError
from ppcsim.cli.commands import spu_ready
from ppcsim.errors import UsageError
from ppcsim.run.outdir import claim
from ppcsim.scenario.load import load_scenario

# Each command imports what it needs inside its function: a party process, which runs
# 'ppc party', then starts without matplotlib, scikit-learn or the observer's attacks.

#: Seconds between a waiting party's lines on what it waits for (``ppc party --progress``).
PROGRESS_EVERY = 5.0


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
    from coordinator.registry import Registry
    from coordinator.security import load_token_digests
    from coordinator.server import start_server
    from coordinator.session import DONE, FAILED
    from coordinator.summary import summarise
    from ppcsim.report.outputs import build, summary_table, write_atomic, write_outputs

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    scenarios = [load_scenario(path, role="coordinator") for path in args.scenario]
    for scenario in scenarios:
        if scenario.clustering.helper:
            spu_ready(scenario, "the coordinator's helper runs")
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
        report = build(scenario, summarise(session), by_hand=True)
        if args.out:
            write_outputs(Path(args.out) / scenario.name if several else Path(args.out), report, session.outcome,
                          session.contributions, sent=not args.no_sent)
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


def secure_reveal(path: Path) -> str | None:
    """What a party's own scenario file says a secure-aggregation session opens (its [clustering] reveal, "labels"
    unless it says otherwise); None if the file names another protocol. A party reads no other [clustering] field:
    this one it holds the coordinator to (parties.secagg_labels.secure_session)."""
    import tomllib

    from protos.vocabulary import LABELS, SECURE

    table = tomllib.loads(path.read_text(encoding="utf-8")).get("clustering", {})
    if not isinstance(table, dict) or table.get("protocol") != SECURE:
        return None
    return str(table.get("reveal", LABELS))


def cmd_party(args: argparse.Namespace) -> int:
    import grpc

    from parties.client import WITHOUT_MUTUAL_TLS, ClientSecurity, rpc_message
    from parties.run import run_party
    from parties.text import escaped
    from ppcsim.scenario.terms import party_terms

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
            no_method=cfg.name in scenario.unnamed,
            ids_mode=scenario.security.ids,
            reveal=secure_reveal(scenario.path),
            terms=party_terms(scenario),
            log=io.StringIO() if args.quiet else sys.stderr,
            progress=0.0 if args.quiet else args.progress,
        )
    except PartyError as exc:  # it may quote the coordinator or another party: escaped (parties.text)
        raise PartyError(f"party '{cfg.name}': {escaped(str(exc))}") from None
    except grpc.RpcError as exc:
        print(f"ppc party {cfg.name}: error: {rpc_message(exc)}", file=sys.stderr)
        return 1
    return 0
