"""``ppc``: run scenarios, or the coordinator and party roles by hand. The parser of every command, and
``main``, which runs one and turns a user's mistake into one line (exit status 2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from coordinator.errors import SessionError
from coordinator.limits import Limits
from parties.errors import PartyError
from ppcsim.cli.commands import cmd_credentials, cmd_reproduce, cmd_run, cmd_sweep
from ppcsim.cli.roles import PROGRESS_EVERY, cmd_coordinator, cmd_party
from ppcsim.cli.spu_env import add_parser as add_spu_env
from ppcsim.errors import RunError, UsageError
from ppcsim.evaluate.settings import Settings
from ppcsim.run.outdir import OutputError
from ppcsim.scenario.load import ScenarioError
from protos.serde import WireError


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

    def add_run_options(p, html: bool = True):
        p.add_argument("--out", metavar="DIR", help="where to write report.json, labels.csv, sent/ and logs/: an "
                       "empty or new folder (default: runs/<scenario name>, or runs/<scenario name>-2, -3, ... "
                       "when that holds an earlier run)")
        add_replace_option(p)
        p.add_argument("--port", type=int, default=0, help="coordinator port on 127.0.0.1 (default: a free one)")
        if html:  # the demo always writes it (its own --no-html turns that off)
            p.add_argument("--html", action="store_true",
                           help="also write report.html (tables and figures, self-contained)")
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
    add_run_options(demo, html=False)
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
    cred.add_argument("--out", required=True, metavar="DIR",
                      help="a new folder for ca.pem, coordinator.pem and coordinator.key, tokens.json (the session "
                      "and a SHA-256 of each party's token) and parties/<name>/ (ca.pem, cert.pem, key.pem, token: "
                      "give each party its own folder and nothing else); every file is created 0600")
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
    party.add_argument("--coordinator", required=True, metavar="HOST:PORT",
                       help="where the coordinator listens (what 'ppc coordinator --listen' serves)")
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
                         "(with both readings of its eq. 6) and the thesis' Tables 5.6-5.9 and 5.13 and Figs 5.1-5.3 on wine "
                         "and iris, and write reproduction.md, reproduction.json and figures/ (the UCI files are not "
                         "bundled; without them Figs 1-2 are left out).")
    rep.add_argument("--mushroom", type=Path, metavar="CSV", help="UCI mushroom file (23 columns, header row)")
    rep.add_argument("--chess", type=Path, metavar="CSV", help="UCI chess kr-vs-kp file (37 columns, no header)")
    rep.add_argument("--out", type=Path, required=True, metavar="DIR",
                     help="where to write reproduction.md, reproduction.json and figures/")
    rep.add_argument("--seeds", type=int, default=50, metavar="N", help="use seeds 0..N-1 (default: 50)")
    rep.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: the CPU count, at most 4)")
    rep.add_argument("--scheduler", metavar="ADDRESS",
                     help="run the projections on a Dask cluster instead of --jobs processes: a scheduler's address "
                     "(tcp://host:8786) or local:N; needs pip install 'ppc-sim[dask]' (see docs/cluster.md)")
    rep.set_defaults(func=cmd_reproduce)
    add_spu_env(sub)
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
