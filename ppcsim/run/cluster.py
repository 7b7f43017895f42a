"""Run sweep points and the reproduction's projections on a Dask distributed cluster.

``--scheduler ADDRESS`` (``tcp://host:8786``, or ``local:N`` for a
``LocalCluster`` of N worker processes on this machine) hands each sweep point,
or each of ``ppc reproduce``'s seeded projections, to a Dask worker as one
task. The client keeps the plan and the outputs: a point's scenario file travels
to the worker as text, the worker runs it in a temporary folder (in process, or
as a real multi-process run whose coordinator and party processes all start on
that worker) and sends back its CSV row and every file the run wrote, which the
client puts under ``--out`` exactly where a local sweep puts them.

A point that fails is reported with its error and the others go on. A point
whose worker dies is run again on another worker by Dask's scheduler, at most
``distributed.scheduler.allowed-failures`` times (``ALLOWED_FAILURES`` on a
``local:N`` cluster; the scheduler's own setting otherwise); the summary counts
those retries. Ctrl-C cancels the points not yet finished and stops the party
processes of running points on every worker.

Dask is an optional extra: ``pip install 'ppc-sim[dask]'``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from coordinator.errors import SessionError
from parties.errors import PartyError
from ppcsim.errors import RunError
from ppcsim.evaluate.settings import Settings
from ppcsim.scenario.load import ScenarioError

INSTALL = "pip install 'ppc-sim[dask]'"
#: Times a task may be on a worker that dies before it counts as failed (``local:N`` clusters).
ALLOWED_FAILURES = 2
#: Seconds between progress lines while nothing finishes.
HEARTBEAT = 10.0
#: Seconds to wait for a remote scheduler to answer.
CONNECT_TIMEOUT = 20.0


def _distributed():
    """``dask.distributed``, or a RunError saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise RunError(f"--scheduler needs Dask's distributed scheduler, which is not installed; install it with: "
                       f"{INSTALL}") from None
    return distributed


def parse_local(address: str) -> int | None:
    """N for ``local:N`` (a LocalCluster of N workers), None for a scheduler's address."""
    if not address.startswith("local:"):
        return None
    match = re.fullmatch(r"local:(\d+)", address)
    if not match or int(match.group(1)) < 1:
        raise RunError(f"--scheduler {address}: expected local:N with N >= 1 workers, or a scheduler's address "
                       "such as tcp://host:8786")
    return int(match.group(1))


def local_cluster(workers: int):
    """A ``LocalCluster`` of ``workers`` processes with one thread (and one BLAS thread) each.

    Dask's nanny gives each worker ``MALLOC_TRIM_THRESHOLD_``, which also turns
    off glibc's adaptive mmap threshold: every large numpy array is then mapped
    and faulted in afresh, and an in-process point of 20,000 records ran at half
    the speed of the same point outside Dask. These workers keep glibc's default.
    """
    distributed = _distributed()
    import dask

    environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
               if k != "MALLOC_TRIM_THRESHOLD_"}
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                          "distributed.nanny.pre-spawn-environ": environ}):
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=":0", silence_logs=40)


@contextmanager
def connect(address: str, *, log=None) -> Iterator:
    """A ``distributed.Client`` on the scheduler at ``address``, or on a new ``LocalCluster`` for ``local:N``.

    The LocalCluster's workers are processes with one thread each (Dask's nanny
    also gives them one BLAS/OpenMP thread); it is shut down, its worker
    processes with it, when the block ends.
    """
    distributed = _distributed()

    log = log or sys.stderr
    workers = parse_local(address)
    cluster = None
    try:
        if workers is not None:
            cluster = local_cluster(workers)
            client = distributed.Client(cluster)
        else:
            try:
                client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise RunError(f"--scheduler {address}: cannot reach the Dask scheduler: {exc}") from None
        try:
            n = len(client.scheduler_info()["workers"])
            print(f"ppc: Dask scheduler {client.scheduler.address}, {n} worker{'s' * (n != 1)}"
                  + (" (local cluster)" if cluster else ""), file=log, flush=True)
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


# --- running tasks ------------------------------------------------------------------------------


#: What a task returns.
T = TypeVar("T")


@dataclass
class Outcome(Generic[T]):
    """What became of one task: its value, or its error; and how often its worker died under it."""

    index: int
    value: T | None = None
    error: str | None = None
    retries: int = 0

    def result(self) -> T:
        """The value of a task that succeeded; RunError for one that failed."""
        if self.value is None:
            raise RunError(f"task {self.index} failed: {self.error}")
        return self.value


@dataclass
class Counts:
    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    started: float = field(default_factory=time.perf_counter)

    def line(self) -> str:
        eta = ""
        if self.done and self.done < self.total:
            elapsed = time.perf_counter() - self.started
            eta = f", about {elapsed / self.done * (self.total - self.done):.0f} s left"
        return (f"{self.done}/{self.total} done, {self.running} running, {self.failed} failed"
                f"{eta}")


def describe_error(exc: BaseException) -> str:
    """One line for a task's exception (a worker's death named as such)."""
    if type(exc).__name__ == "KilledWorker":
        return ("the workers running it died once more than the scheduler allows "
                "(distributed.scheduler.allowed-failures); given up")
    if isinstance(exc, (RunError, SessionError, PartyError, ScenarioError)):
        return str(exc).replace("\n", "; ")
    return f"{type(exc).__name__}: {exc}".replace("\n", "; ")


def _suspicious(keys: list[str], dask_scheduler=None) -> dict[str, int]:
    """On the scheduler: how many workers died while running each task."""
    return {k: dask_scheduler.tasks[k].suspicious for k in keys if k in dask_scheduler.tasks}


def _ours_running(client, keys: set[str]) -> int:
    try:
        return sum(1 for ks in client.processing().values() for k in ks if k in keys)
    except Exception:  # noqa: BLE001 - progress only; never fails the run
        return 0


def run_all(client, fn: Callable[..., T], items: Sequence, *, args: tuple = (), label: str = "task",
            on_done: Callable[[Outcome[T], Counts], object] = lambda o, c: None,
            on_tick: Callable[[Counts], object] = lambda c: None) -> list[Outcome[T]]:
    """Run ``fn(item, *args)`` for every item on the cluster; the outcomes in the items' order.

    A task's exception becomes its outcome's ``error``; the others go on.
    ``on_done`` is called as each task ends, ``on_tick`` every ``HEARTBEAT``
    seconds while none does. On KeyboardInterrupt every unfinished task is
    cancelled and the party processes of running points are stopped on every
    worker before the interrupt goes on.
    """
    distributed = _distributed()
    token = uuid.uuid4().hex[:8]
    futures = [client.submit(fn, item, *args, key=f"ppc-{label}-{i:05d}-{token}", pure=False)
               for i, item in enumerate(items)]
    index = {f.key: i for i, f in enumerate(futures)}
    keys = set(index)
    outcomes: dict[int, Outcome[T]] = {}  # by the item's index
    counts = Counts(len(futures))
    pending = set(futures)
    try:
        while pending:
            try:
                done, pending = distributed.wait(pending, timeout=HEARTBEAT, return_when="FIRST_COMPLETED")
            except (TimeoutError, distributed.TimeoutError):
                counts.running = _ours_running(client, keys)
                on_tick(counts)
                continue
            for future in sorted(done, key=lambda f: index[f.key]):
                outcome: Outcome[T] = Outcome(index[future.key])
                if future.status == "finished":
                    outcome.value = future.result()
                else:
                    exc = future.exception() if future.status == "error" else None
                    outcome.error = describe_error(exc) if exc is not None else f"task {future.status}"
                    counts.failed += 1
                counts.done += 1
                outcomes[outcome.index] = outcome
                keys.discard(future.key)
                counts.running = _ours_running(client, keys)
                on_done(outcome, counts)
        try:
            retried = client.run_on_scheduler(_suspicious, [f.key for f in futures])
        except Exception:  # noqa: BLE001 - the count is for the summary only
            retried = {}
        for f in futures:
            outcomes[index[f.key]].retries = retried.get(f.key, 0)
    except KeyboardInterrupt:
        client.cancel(futures, force=True)
        stop_points(client)
        raise
    finally:
        del futures, pending
    return [outcomes[i] for i in range(len(items))]


def _stop_party_processes() -> int:
    """On a worker: kill the ``ppc party`` processes it started for points; how many."""
    import psutil  # a dependency of distributed

    killed = 0
    for child in psutil.Process().children(recursive=True):
        try:
            command = child.cmdline()
            if "ppcsim" in command and "party" in command:
                child.kill()
                killed += 1
        except psutil.Error:
            pass
    return killed


def stop_points(client) -> None:
    """Stop the party processes of every running multi-process point, on every worker."""
    try:
        client.run(_stop_party_processes, wait=True)
    except Exception:  # noqa: BLE001 - best effort while interrupting; the cluster may be going away
        pass


# --- sweeps -------------------------------------------------------------------------------------


@dataclass
class PointTask:
    """One sweep point as it travels to a worker: its scenario as TOML text, never a path of the client."""

    index: int
    name: str
    values: dict
    toml: str


def _collect(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} \
        if folder.is_dir() else {}


def run_point_task(task: PointTask, settings: Settings, in_process: bool) -> dict:
    """On a worker: run one point in a temporary folder; its row (or error), every file it wrote, and where.

    A multi-process point starts its coordinator and party processes here, on
    this worker, exactly as ``ppc run`` does.
    """
    from ppcsim.run.sweep import Point, row, run_point

    with tempfile.TemporaryDirectory(prefix="ppc-point-") as tmp:
        path = Path(tmp) / "points" / f"{task.name}.toml"
        path.parent.mkdir(parents=True)
        path.write_text(task.toml, encoding="utf-8")
        point = Point(task.index, task.values, path)
        result: dict = {"host": socket.gethostname()}
        try:
            result["row"] = row(point, run_point(point, Path(tmp), settings, in_process))
        except (RunError, SessionError, PartyError, ScenarioError, ValueError) as exc:
            result["error"] = str(exc).replace("\n", "; ")
        result["files"] = _collect(Path(tmp) / "runs" / task.name)
    return result


def sweep_on_cluster(path: Path, out: Path, scheduler: str, *, settings: Settings = Settings(),
                     in_process: bool = False, log=None) -> tuple[list[dict], list[dict]]:
    """Run every point of ``path``'s grid on the Dask cluster at ``scheduler``; write ``out`` as a local sweep.

    Returns the rows (point order) and the failed points (``point``, parameters,
    ``error``); the failures are also written to ``out/failures.csv``.
    """
    from ppcsim.report.outputs import write_atomic
    from ppcsim.run.sweep import plan, write_csv

    log = log or sys.stderr
    _distributed(), parse_local(scheduler)  # a missing Dask or a bad local:N is said before anything is written
    points = plan(path, out)
    tasks = [PointTask(p.index, p.path.stem, p.values, p.path.read_text(encoding="utf-8")) for p in points]
    rows: dict[int, dict] = {}
    failures: list[dict] = []

    def on_done(outcome: Outcome[dict], counts: Counts) -> None:
        point, result = points[outcome.index], outcome.value or {}
        for rel, data in result.get("files", {}).items():
            write_atomic(out / "runs" / tasks[outcome.index].name / rel, data)
        error = outcome.error or result.get("error")
        if error is not None:
            if not outcome.error:  # the task returned its error: count it as failed
                counts.failed += 1
            failures.append({"point": point.index, **{f"param_{k}": v for k, v in point.values.items()},
                             "error": error})
            what = f"FAILED: {error}"
        else:
            r = rows[point.index] = result["row"]
            what = f"stress={r['stress']:.4f} ari={r['ari']:.3f} bytes={r['bytes_payload']:,} on {result['host']}"
        print(f"ppc sweep: {counts.line()}; point {point.index} {point.values} {what}", file=log, flush=True)

    def on_tick(counts: Counts) -> None:
        print(f"ppc sweep: {counts.line()}", file=log, flush=True)

    with connect(scheduler, log=log) as client:
        outcomes = run_all(client, run_point_task, tasks, args=(settings, in_process), label="point",
                           on_done=on_done, on_tick=on_tick)
    retried = [o for o in outcomes if o.retries]
    ordered = [rows[i] for i in sorted(rows)]
    if ordered:
        write_csv(out, ordered)
    if failures:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(dict.fromkeys(k for f in failures for k in f)))
        writer.writeheader()
        writer.writerows(sorted(failures, key=lambda f: f["point"]))
        write_atomic(out / "failures.csv", buf.getvalue().encode())
    summary = f"ppc sweep: {len(ordered)} of {len(points)} points done, {len(failures)} failed"
    if retried:
        summary += (f"; {len(retried)} point{'s' * (len(retried) != 1)} given to another worker after "
                    f"theirs died (point{'s' * (len(retried) != 1)} {', '.join(str(o.index) for o in retried)})")
    print(summary, file=log, flush=True)
    for f in failures:
        print(f"ppc sweep: point {f['point']} failed: {f['error']}", file=log, flush=True)
    return ordered, failures


# --- one scenario's parties on workers -------------------------------------------------------------

#: On a worker: the party processes it runs for ``ppc run --scheduler``, by task token (to kill one).
_PARTIES: dict[str, subprocess.Popen] = {}
#: A party's credential files, as ``ppc credentials`` writes them into its folder.
CREDENTIAL_FILES = ("ca.pem", "cert.pem", "key.pem", "token")


def run_party_task(token: str, scenario: str, name: str, address: str, session: str, timeout: float, seed: int,
                   credentials: dict[str, bytes] | None) -> dict:
    """On a worker: run ``ppc party`` for party ``name`` and return its exit code, output, summary and labels.

    The party's seed and credentials came with this task alone (Dask sends a
    task's arguments to the worker that runs it); they are written into a
    private temporary folder (mode 0700) and the seed goes to the party's
    standard input, as ``ppc run`` does locally. The task leaves its worker
    thread (``secede``) so that one worker can run several parties at once.
    """
    from distributed import secede

    secede()
    with tempfile.TemporaryDirectory(prefix="ppc-party-") as tmp:
        folder = Path(tmp)
        from ppcsim.run.launcher import PARTY_ENV, party_argv

        if credentials is not None:
            (folder / "credentials").mkdir(mode=0o700)
            for file, data in credentials.items():
                target = folder / "credentials" / file
                target.write_bytes(data)
                target.chmod(0o600)
        command = party_argv(scenario, name, session, timeout, address, folder / "summary.json", folder / "labels.csv",
                             folder / "credentials" if credentials is not None else None)

        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env={**os.environ, **PARTY_ENV})
        _PARTIES[token] = proc
        try:
            output, _ = proc.communicate(f"{seed}\n".encode())
        finally:
            _PARTIES.pop(token, None)
        read = lambda f: (folder / f).read_bytes() if (folder / f).exists() else None  # noqa: E731
        return {"code": proc.returncode, "log": output, "summary": read("summary.json"), "labels": read("labels.csv"),
                "host": socket.gethostname()}


def _kill_party(token: str) -> bool:
    """On a worker: kill the party process of task ``token``, if it still runs."""
    proc = _PARTIES.get(token)
    if proc is not None and proc.poll() is None:
        proc.kill()
        return True
    return False


class RemoteParty:
    """A party process on a Dask worker, seen as ``subprocess.Popen`` is by the launcher: poll, wait, kill.

    When its task ends, its output becomes the launcher's log of the party,
    and its summary and labels land in the launcher's private folder, where a
    local party would have written them.
    """

    def __init__(self, client, future, token: str, worker: str, name: str, private: Path, log: Path):
        self.client, self.future, self.token, self.worker = client, future, token, worker
        self.name, self.private, self.log = name, private, log
        self.returncode: int | None = None
        self.host: str | None = None

    def _settle(self) -> None:
        if self.returncode is not None or not self.future.done():
            return
        try:
            result = self.future.result()
        except BaseException as exc:  # noqa: BLE001 - the worker died or the task failed: that is the exit
            result = {"code": 1, "log": f"party {self.name}: its Dask task failed: {describe_error(exc)}\n".encode()}
        self.log.write_bytes(result.get("log") or b"")
        for key, file in (("summary", f"{self.name}.json"), ("labels", f"{self.name}-labels.csv")):
            if result.get(key) is not None:
                (self.private / file).write_bytes(result[key])
        self.host = result.get("host")
        self.returncode = result["code"]

    def poll(self) -> int | None:
        self._settle()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        start = time.monotonic()
        while (code := self.poll()) is None:
            if timeout is not None and time.monotonic() - start > timeout:
                raise subprocess.TimeoutExpired(self.name, timeout)
            time.sleep(0.05)
        return code

    def kill(self) -> None:
        try:
            self.client.run(_kill_party, self.token, workers=[self.worker], wait=True)
        except Exception:  # noqa: BLE001 - best effort: the worker may be gone already
            self.future.cancel()


class ClusterParties:
    """Starts each party of one scenario on a worker of a Dask cluster (``ppc run --scheduler``).

    A party whose ``[[parties]]`` table has a ``host`` goes to a worker on that
    host (its host name or address, or the worker's name or address); the
    others go round-robin over the workers. The coordinator and the counting
    relays stay with the client, so the bytes and times in the report are those
    of the network between the hosts. The scenario file and each party's data
    must be at the same paths on the workers' hosts.
    """

    def __init__(self, client, local: bool):
        distributed = _distributed()
        self.client = client
        self.workers = client.scheduler_info()["workers"]
        if not self.workers:
            raise RunError("the Dask cluster has no workers to run the parties on")
        #: Where the relays listen: an address the workers reach (loopback when they are on this machine).
        self.host = "127.0.0.1" if local else distributed.utils.get_ip(client.scheduler.address.split("://")[-1]
                                                                          .rsplit(":", 1)[0])
        self._next = 0
        self.placed: dict[str, str] = {}

    def worker_for(self, name: str, host: str | None) -> str:
        """The worker's address for party ``name``: on ``host`` when given, else the next in turn."""
        addresses = sorted(self.workers)
        if host is not None:
            matching = [a for a in addresses if host in (self.workers[a].get("host"), self.workers[a].get("name"), a)]
            if not matching:
                hosts = sorted({str(self.workers[a].get("host")) for a in addresses})
                raise RunError(f"party '{name}': no Dask worker on host '{host}' (workers' hosts: {', '.join(hosts)})")
            return matching[0]
        worker = addresses[self._next % len(addresses)]
        self._next += 1
        return worker

    def start(self, scenario, name: str, address: str, private: Path, credentials: Path | None,
              log: Path) -> RemoteParty:
        cfg = scenario.party(name)
        worker = self.worker_for(name, scenario.hosts.get(name))
        creds = None
        if credentials is not None:
            folder = credentials / "parties" / name
            creds = {f: (folder / f).read_bytes() for f in CREDENTIAL_FILES if (folder / f).exists()}
        token = uuid.uuid4().hex
        future = self.client.submit(run_party_task, token, str(scenario.path), name, address, scenario.name,
                                    scenario.deadline, cfg.seed, creds, workers=[worker], allow_other_workers=False,
                                    pure=False, key=f"ppc-party-{name}-{token}", retries=0)
        self.placed[name] = worker
        return RemoteParty(self.client, future, token, worker, name, private, log)
