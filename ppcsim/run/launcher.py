"""Run a whole scenario on this machine: the coordinator here, one OS process per party, and one for the relays."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from coordinator.embed import requested_embedding
from coordinator.errors import SessionError
from coordinator.limits import Limits
from coordinator.registry import Registry
from coordinator.security import load_server_security, load_token_digests
from coordinator.server import start_server
from coordinator.session import CLUSTERING, DONE, FAILED, Session
from coordinator.summary import summarise
from parties.metrics import peak_rss
from ppcsim.errors import RunError
from ppcsim.evaluate.artifacts import RunArtifacts
from ppcsim.evaluate.settings import Settings
from ppcsim.report.model import Evaluation, Report
from ppcsim.report.outputs import build, summary_table, write_outputs
from ppcsim.run.credentials import make_credentials
from ppcsim.run.observers import observer
from ppcsim.run.relay import RelayProcess
from ppcsim.scenario.load import Scenario

#: Seconds the parties get, after the session ends, to fetch their results and exit...
EXIT_GRACE = 30.0
#: ... and more for every record joined: the first writes its labels, one line a record (10 s a million).
EXIT_GRACE_PER_RECORD = 1e-5
#: Party processes share this machine's cores: one BLAS/OpenMP thread each keeps them from oversubscribing it.
PARTY_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def last_line(path: Path) -> str:
    """The last non-empty line a party wrote, which explains why it stopped."""
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""


def party_argv(scenario: str, name: str, session: str, timeout: float, address: str, summary: Path,
               labels: Path | None, credentials: Path | None) -> list[str]:
    """The ``ppc party`` command line of party ``name`` as ``ppc run`` starts it, here or on a Dask worker: its
    summary and labels go to the given files (the launcher's, as observer; no labels file when ``labels`` is None),
    its seed comes on its standard input (see start_party), ``credentials`` is its own folder."""
    return [
        sys.executable, "-m", "ppcsim", "party",
        "--coordinator", address,
        "--scenario", scenario,
        "--party", name,
        "--session", session,
        "--summary", str(summary),
        *(["--labels-out", str(labels)] if labels else []),
        "--timeout", str(timeout),
        "--seed-file", "-",
        "--progress", "0",  # this launcher reports the session's progress itself
        *(["--credentials", str(credentials)] if credentials else []),
    ]


def party_command(scenario: Scenario, name: str, address: str, private: Path, credentials: Path | None) -> list[str]:
    """``ppc party`` for party ``name`` on this machine, writing into the launcher's ``private`` folder: its summary,
    and for the first party its labels, which become the run's labels.csv (``run_scenario``). The others receive and
    check their labels as every party does, but write no file that nothing would read: one line a record, a third
    of a second of CPU a million records, four times over on the cores the parties share."""
    labels = private / f"{name}-labels.csv" if name == scenario.parties[0].name else None
    return party_argv(str(scenario.path), name, scenario.name, scenario.deadline, address, private / f"{name}.json",
                      labels, credentials / "parties" / name if credentials else None)


class LocalParties:
    """Starts each party as an OS process on this machine (``ppc run``'s default)."""

    #: Where the relays listen: the parties dial them from this machine.
    host = "127.0.0.1"

    def start(self, scenario: Scenario, name: str, address: str, private: Path, credentials: Path | None,
              log: Path) -> subprocess.Popen:
        """Party ``name`` dialling ``address``; its summary and labels go to ``private``, its output to ``log``."""
        seed = scenario.party(name).seed
        if seed is None:
            raise RunError(f"party '{name}' has no seed: read the scenario as the observer does")
        return start_party(party_command(scenario, name, address, private, credentials), seed, log)


def start_party(command: list[str], seed: int, log: Path) -> subprocess.Popen:
    """Start a party process and hand it its seed on its standard input, a pipe only that process reads (not its
    command line, which every user of the machine can list)."""
    with open(log, "wb") as fh:
        proc = subprocess.Popen(command, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                                env={**os.environ, **PARTY_ENV})
    stdin = proc.stdin
    assert stdin is not None  # stdin=PIPE
    try:
        stdin.write(f"{seed}\n".encode())
        stdin.close()
    except OSError:  # it died at start; _watch reports why from its log
        pass
    return proc


#: Seconds of a step without rounds (joining, embedding, clustering) after which ``ppc run`` says it is still at it.
SLOW_STEP = 10.0


class Progress:
    """Prints what happens to the session, once per event, and upload progress on long uploads."""

    def __init__(self, session: Session, log, every: float = 2.0):
        self.session, self.log, self.every = session, log, every
        #: The session's protocol's observer (ppcsim.run.observers): its lines on the uploads and the rounds.
        self.observer = observer(session.spec.clustering.protocol)
        self.seen: set[tuple[str, str]] = set()
        self.last = time.monotonic()
        #: What the coordinator does once every upload is in, and since when (and when it was last said).
        self.doing, self.still = "", 0.0
        self.since: float | None = None

    def clustering_words(self) -> str:
        """What the coordinator does with the uploads, named: joins them, embeds them when the parties asked for
        an embedding (``osbr-nmds``: non-metric MDS, 000 ch. 3, often the longest step), and clusters."""
        c = self.session.spec.clustering
        what = f"{c.n_clusters} clusters" if c.algorithm != "dbscan" else f"eps {c.eps:g}"
        try:
            ask = requested_embedding([x for x in list(self.session.contributions.values()) if x.is_dissimilarity])
        except SessionError:  # the coordinator fails the session and says why
            ask = None
        embedding = (f", embedding them by non-metric MDS in {ask.get('dims')} dims (000 ch. 3)"
                     if ask and ask.get("embed") == "nmds" else "")
        return f"joining them{embedding} and clustering ({c.algorithm}, {what})"

    def say(self, text: str) -> None:
        print(f"ppc: {text}", file=self.log, flush=True)

    def update(self) -> None:
        status = self.session.party_status()
        for p in status:
            for event in ("joined", "uploaded"):
                if p[event] and (p["party"], event) not in self.seen:
                    self.seen.add((p["party"], event))
                    if event == "uploaded":
                        self.say(self.observer.uploaded(p["party"], p["payload_bytes"]))
                    else:
                        self.say(f"party {p['party']} {event}")
        if self.session.state in (CLUSTERING, DONE) and ("", "clustering") not in self.seen:
            self.seen.add(("", "clustering"))
            self.doing = self.clustering_words()
            self.since = self.still = time.monotonic()
            self.say(f"all uploads in; {self.doing}")
        now = time.monotonic()
        rounds = self.observer.progress(self.session) if now - self.last >= self.every else None
        if rounds:  # how the rounds go
            self.say(rounds)
        elif self.session.state == CLUSTERING and self.since is not None and now - self.still >= SLOW_STEP:
            self.still = now  # a long step without rounds (an embedding, a large clustering) is not silent
            self.say(f"still {self.doing}: {now - self.since:.0f} s so far")
        if now - self.last >= self.every:
            self.last = now
            moving = [p for p in status if p["payload_expected"] and not p["uploaded"]]
            if moving:
                self.say("uploading: " + ", ".join(
                    f"{p['party']} {100 * p['payload_bytes'] / p['payload_expected']:.0f}%" for p in moving))


def run_scenario(
    scenario: Scenario,
    out: Path,
    *,
    log=sys.stderr,
    listen: str = "127.0.0.1:0",
    settings: Settings | None = Settings(),
    keep_sent: bool = True,
    parties=None,
    artifacts: RunArtifacts | None = None,
    scheduler: str | None = None,
) -> Report:
    """Run ``scenario``, write its outputs into ``out``, and return the report.

    ``parties`` starts the party processes: ``LocalParties()`` (the default)
    on this machine, or ``ppcsim.run.cluster.ClusterParties`` on the workers of a
    Dask cluster, while the coordinator and its counting relays stay here.

    With ``settings``, the launcher then measures utility and privacy as an
    observer (ppcsim.run.observer); None skips the measurements. With
    neither ``settings`` nor ``keep_sent``, the coordinator keeps only the sum
    of the dissimilarity uploads, not each party's, and writes no sent/.

    ``artifacts``, when given, receives the arrays behind the report for its
    pictures: ``outcome`` (what the coordinator reached) and what
    ppcsim.run.observer.evaluate puts there (ppcsim.evaluate.artifacts).

    ``scheduler``, with ``ppcsim.run.cluster.ClusterParties``, is the Dask
    scheduler's address, which the report's ``cluster`` section records
    beside the worker each party ran on.

    The report (a ppcsim.report.model.Report; ``report["parties"]`` reads it
    as report.json holds it) is built once, when everything is measured.
    Raises RunError naming the party or the cause when the run fails; the
    report (with its error) is written all the same.
    """
    t0 = time.perf_counter()
    parties = parties or LocalParties()
    timing: dict[str, float] = {}
    procs: dict = {}
    failure = None
    with tempfile.TemporaryDirectory(prefix="ppc-") as tmp:
        credentials = _throwaway_credentials(scenario, Path(tmp) / "credentials")
        registry = Registry()
        tokens = load_token_digests(credentials, scenario.name) if credentials else None
        session = registry.create(scenario.session_spec(tokens, keep_uploads=keep_sent or settings is not None))
        from ppcsim.run import helper  # MPC of two parties: the coordinator's share-holder with no data

        helper.start(session, log)
        security = load_server_security(credentials, tls=scenario.security.tls, mutual=scenario.security.mutual)
        # this coordinator serves only the processes ppc run started: it cuts a stream for silence at the session's
        # deadline, not after a minute, as an MPC's party may wait minutes for a busy peer's next message
        limits = Limits(idle_seconds=max(Limits.idle_seconds, scenario.deadline))
        server, port = start_server(listen, registry, security=security, limits=limits)
        address = f"{listen.rsplit(':', 1)[0]}:{port}"
        progress = Progress(session, log)
        progress.say(f"coordinator on {address} ({security.transport}), session '{scenario.name}', "
                     f"{len(scenario.parties)} parties")
        logs = out / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        # each party reaches the coordinator through its own relay, which counts (and shapes) its bytes; the relays
        # run in a process of their own, so that their threads never wait for this one's interpreter lock
        try:
            relaying = RelayProcess(address, {cfg.name: scenario.link(cfg.name) for cfg in scenario.parties},
                                    parties.host).start()
        except RunError:
            server.stop(grace=0)
            raise
        relays = relaying.relays
        try:
            for cfg in scenario.parties:
                procs[cfg.name] = parties.start(scenario, cfg.name, relays[cfg.name].address, Path(tmp), credentials,
                                                logs / f"{cfg.name}.log")
            timing["start"] = time.perf_counter() - t0
            # the evaluation's imports (they take seconds) in a thread, while the parties start, or once the session
            # is over for one whose messages wait on each other (Observer.prepare_early)
            preparing = threading.Thread(target=progress.observer.prepare, args=(scenario,), name="prepare-evaluation",
                                         daemon=True)
            early = settings is not None and progress.observer.prepare_early(scenario)
            if early:
                preparing.start()
            failure = _watch(session, procs, logs, progress, scenario.deadline, relaying)
            if settings is not None and not early and session.state == DONE:
                preparing.start()
            if session.state == DONE:
                timing["parties_and_clustering"] = time.perf_counter() - t0 - timing["start"]
                progress.say(f"clustered {len(session.wait(0).join.ids):,} records; parties fetching results")
            joined = len(session.outcome.join.ids) if session.outcome is not None else 0
            failure = failure or _await_exit(procs, logs, EXIT_GRACE + EXIT_GRACE_PER_RECORD * joined)
        finally:
            died = relaying.check()  # the relays' process gone: the cause of whatever the parties then said
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
            server.stop(grace=1.0)
            relaying.stop()
        failure = died or failure or relaying.error
        summaries = {}
        for name in procs:
            path = Path(tmp) / f"{name}.json"
            if path.exists():
                summaries[name] = json.loads(path.read_text())
        # labels by the records' own ids, as the first party mapped them back (the coordinator's may be pseudonyms)
        first = Path(tmp) / f"{scenario.parties[0].name}-labels.csv"
        labels = first.read_bytes() if first.exists() else None
    memory = peak_rss()  # the coordinator's process when the session is over, before any evaluation
    evaluation: Evaluation | None = None
    if not failure and settings is not None:

        progress.say("measuring utility" + (" and privacy" if settings.attacks else ""))
        t = time.perf_counter()
        # the protocol's observer (ppcsim.run.observers): the disguises' attacks, what the arbiter saw, or what each
        # role of an MPC learned
        evaluation = observer(scenario.clustering.protocol).evaluate(scenario, session, settings, artifacts=artifacts)
        timing["evaluate"] = time.perf_counter() - t
    timing["total"] = time.perf_counter() - t0
    if artifacts is not None:
        artifacts.outcome = session.outcome
    placed = getattr(parties, "placed", None)
    report = build(scenario, summarise(session), summaries=summaries, timing=timing, relays=relays, failure=failure,
                   evaluation=evaluation, observer=True, coordinator_peak_rss=memory,
                   cluster=(scheduler, placed) if scheduler is not None and placed is not None else None)
    write_outputs(out, report, session.outcome, session.contributions, sent=keep_sent, labels=labels)
    if failure:
        raise RunError(failure)
    print(summary_table(report), file=log, flush=True)
    return report


def _throwaway_credentials(scenario: Scenario, folder: Path) -> Path | None:
    """A fresh CA, certificates and tokens for this run only, when [security] asks for any."""
    if not scenario.security.needs_credentials:
        return None
    return make_credentials(folder, scenario.name, [p.name for p in scenario.parties])


def _watch(session: Session, procs: dict, logs: Path, progress: Progress, deadline: float,
           relays: RelayProcess | None = None) -> str | None:
    """Wait for the session to end; fail it if a party process, or the relays' process, dies. Returns an error or
    None."""
    end = time.monotonic() + deadline + 5.0
    while session.state not in (DONE, FAILED):
        if relays is not None and (why := relays.check()):
            session.fail(why)  # before the parties, which then lose their connections and die of it
        for name, p in procs.items():
            code = p.poll()
            if code not in (None, 0):
                why = last_line(logs / f"{name}.log") or f"exit code {code}"
                how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
                session.fail(f"party '{name}' {how}: {why}")
        if time.monotonic() > end:
            session.fail(f"the run did not finish within its deadline of {deadline:g} s")
        progress.update()
        try:  # a twentieth of a second, or less: woken as the session ends
            session.wait(0.05)
        except SessionError:  # not done yet, or failed: the loop's condition says which
            pass
    progress.update()
    return session.error if session.state == FAILED else None


def _await_exit(procs: dict, logs: Path, grace: float) -> str | None:
    """Wait for every party to exit after the session ended; the first failure, or None."""
    end = time.monotonic() + grace
    for name, p in procs.items():
        try:
            code = _wait(p, max(end - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            return f"party '{name}' did not exit within {grace:g} s of the session's end"
        if code != 0:
            return f"party '{name}' failed: {last_line(logs / f'{name}.log') or f'exit code {code}'}"
    return None


def _wait(proc, timeout: float) -> int:
    """``proc.wait(timeout)``, woken as the process ends where the system can say so (Linux: a pidfd), where
    ``Popen.wait`` with a timeout polls, up to a twentieth of a second late; a party on a Dask worker (no pid of
    this machine) is waited for as it says."""
    end = time.monotonic() + timeout
    if isinstance(proc, subprocess.Popen) and hasattr(os, "pidfd_open") and proc.poll() is None:
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:  # gone already, or a kernel without pidfds
            fd = None
        if fd is not None:
            try:
                select.select([fd], [], [], timeout)  # readable once the process has ended
            finally:
                os.close(fd)
    return proc.wait(timeout=max(end - time.monotonic(), 0.0))
