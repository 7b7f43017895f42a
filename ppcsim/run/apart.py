"""The evaluation of a relayed session (an MPC) in a process of its own, prepared while the rounds run.

The observer's evaluation (ppcsim.run.observers) imports scikit-learn and
scipy: a second or more of CPU. In ``ppc run``'s own process that second
cannot overlap an MPC: every message of its rounds waits on the one before
through the coordinator's relay in that process, and an import holding its
interpreter lock delays each of them (``Observer.prepare_early``). Done after
the rounds, it is a second added to the run.

``Evaluator`` starts ``python -m ppcsim.run.apart`` beside the parties, at
idle CPU priority (Linux's ``SCHED_IDLE``: it runs only on cycles the
parties, their MPC programs and the coordinator leave idle, so the rounds do
not wait for it): it imports the observer's modules (``Observer.modules``)
and waits. Once the session is done, ``Evaluator.send`` gives it the
scenario, the settings and the session's result (``portable``: the few
fields the rounds' observers read) over a pipe, and gives it the normal
priority back at once (every one of its threads: on a busy machine a thread
at idle priority could wait long to be scheduled at all); it finishes its
imports if the rounds left it too little CPU, and evaluates as ``ppc run``
would have, while the parties fetch their results and exit. ``Evaluator.result`` reads the ``Evaluation`` back. The
figures are the same: the same code on the same values.

Where the system would not let the process take back its priority (neither
root nor ``CAP_SYS_NICE``, and ``RLIMIT_NICE`` below 20: ``available``), or
should the process fail or die, ``ppc run`` evaluates in its own process
once the session is over, as it always did.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from types import SimpleNamespace
from typing import IO, Any

#: What the evaluating process replies with: an ``Evaluation``, or the exception the evaluation raised.
OK, RAISED = "ok", "raised"
#: The length before the job's pickle on the pipe (8 bytes, little-endian).
LENGTH = struct.Struct("<Q")


def portable(session) -> SimpleNamespace:
    """What the observers of a session with rounds (ppcsim.run.observers: mpc, secure_labels, and
    secure_aggregation's ``rounds_utility``) read of a finished ``session``, in plain values a pipe can carry:
    ``spec``, ``outcome``, and the arbiter's initial records (``arbiter.init``) and, for an MPC, the results each
    party opened (``arbiter.hub.results``)."""
    arbiter = session.arbiter
    hub = getattr(arbiter, "hub", None)
    return SimpleNamespace(
        spec=session.spec, outcome=session.outcome,
        arbiter=None if arbiter is None else SimpleNamespace(
            init=getattr(arbiter, "init", None),
            hub=None if hub is None else SimpleNamespace(results=dict(hub.results))))


def available() -> bool:
    """Whether a process of this system can drop to idle priority and take the normal one back (Linux:
    ``SCHED_IDLE``, and root, or ``RLIMIT_NICE`` of at least 20, the right to nice 0); else evaluating apart would
    either slow the rounds or wait on them."""
    if not hasattr(os, "SCHED_IDLE") or not hasattr(os, "sched_setscheduler"):
        return False
    if os.geteuid() == 0:
        return True
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
    return soft == resource.RLIM_INFINITY or soft >= 20


class Evaluator:
    """The evaluating process of one run (see the module's docstring); ``close`` ends and reaps it."""

    @classmethod
    def for_run(cls, scenario, settings, fork: bool = False) -> Evaluator | None:
        """The evaluating process of a run of ``scenario`` measured with ``settings``, started; None where the
        run evaluates in its own process: nothing to measure, a session whose observer imports beside the rounds
        in ``ppc run``'s own process (``Observer.prepare_early``), or a system where this cannot be ``available``.
        The earlier it starts, the more idle CPU it finds before the session is over (``ppc run`` starts it
        before its own imports). ``fork``: see ``__init__``."""
        from ppcsim.run.observers import observer

        found = observer(scenario.clustering.protocol)
        if settings is None or found.prepare_early(scenario) or not available():
            return None
        return cls(scenario.clustering.protocol, found.modules(scenario), fork=fork)

    def __init__(self, protocol: str, modules: list[str], fork: bool = False):
        """Start it: it drops to idle priority and imports ``modules`` (the observer of ``protocol``'s).

        ``fork``: a copy of this process (``Forked``) where that is safe (``forkable``): it has the modules this
        one imported already (numpy, gRPC's and ppc-sim's: about a quarter of a second of CPU less to import
        than a new interpreter, which matters when the rounds leave it no idle CPU); else, and by default, a new
        interpreter (``python -m ppcsim.run.apart``)."""
        self.protocol = protocol
        self.sent = False
        self.proc: subprocess.Popen | Forked | None = Forked(modules) if fork and forkable() else subprocess.Popen(
            [sys.executable, "-m", "ppcsim.run.apart", *modules], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)

    def send(self, scenario, session, settings) -> None:
        """Give it the finished ``session`` to evaluate (with ``scenario`` and ``settings``): it starts at once, at
        normal priority. Something that will not cross the pipe, or a process gone, leaves it to ``result`` to
        answer None."""
        proc = self.proc
        if proc is None or proc.stdin is None or self.sent:
            return
        normal_priority(proc.pid)  # at once: on a busy machine its idle threads would wait to read the job
        try:
            job = pickle.dumps((self.protocol, scenario, portable(session), settings), protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.write(LENGTH.pack(len(job)) + job)
            proc.stdin.close()
            self.sent = True
        except (OSError, pickle.PickleError, AttributeError, TypeError):
            self.close()

    def result(self) -> Any:
        """The observer's ``Evaluation`` of the session ``send`` gave it; None when the process cannot give it (it
        died, or was given nothing), for the caller to evaluate itself. An exception the evaluation raised is
        raised here."""
        proc = self.proc
        try:
            if proc is None or proc.stdout is None or not self.sent:
                return None
            try:
                kind, value = pickle.load(proc.stdout)
            except (OSError, EOFError, pickle.PickleError, AttributeError, TypeError, ValueError):
                return None
        finally:
            self.close()
        if kind == RAISED:
            raise value
        return value

    def close(self) -> None:
        """End the evaluating process (if it still runs) and reap it; nothing once it is closed."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        if proc.poll() is None:
            proc.kill()  # its result read (it exits as it writes it), or no longer wanted
        proc.wait()


def forkable() -> bool:
    """Whether a copy of this process (``os.fork``) could run the evaluation safely: no other Python thread, and
    no OpenMP runtime loaded yet (scikit-learn's k-means runs on one; a copy of a process that has used it waits
    forever for its pool's threads, which a copy does not have)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            return not any("libgomp" in line or "libomp" in line or "libiomp" in line for line in fh)
    except OSError:
        return False


class Forked:
    """A copy of this process (``os.fork``) running ``main`` on two pipes, seen as a ``subprocess.Popen``:
    ``stdin`` (the job), ``stdout`` (the reply), ``pid``, ``poll``, ``kill``, ``wait``. The copy never returns
    into this process's code: it ends with ``os._exit`` (none of this process's exit handlers, no flush of its
    buffers), whatever happens, a signal such as Ctrl-C's included."""

    def __init__(self, modules: list[str]):
        job_r, job_w = os.pipe()
        reply_r, reply_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy
            code = 1
            try:
                os.close(job_w)
                os.close(reply_r)
                code = main(modules, os.fdopen(job_r, "rb"), os.fdopen(reply_w, "wb"))
            except BaseException:  # noqa: BLE001 - it ends here, silently: ppc run then evaluates itself
                pass
            finally:
                os._exit(code)
        os.close(job_r)
        os.close(reply_w)
        self.pid = pid
        self.returncode: int | None = None
        self.stdin: IO[bytes] | None = os.fdopen(job_w, "wb")
        self.stdout: IO[bytes] | None = os.fdopen(reply_r, "rb")

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return int(self.returncode)


def set_policy(policy: int, tid: int = 0) -> bool:
    """Set the scheduling policy of thread ``tid`` (0: the calling one); False where the system refuses (or the
    thread is gone)."""
    try:
        os.sched_setscheduler(tid, policy, os.sched_param(0))
        return True
    except OSError:
        return False


def normal_priority(pid: int) -> None:
    """Give every thread of process ``pid`` the normal scheduling policy back (Linux: its ``/proc/PID/task``), as
    far as the system lets this process; nothing where it does not."""
    try:
        threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        threads = [pid]
    for tid in threads:
        set_policy(os.SCHED_OTHER, tid)


def read_job(stream, main_tid: int, into: dict, ready: threading.Event) -> None:
    """Read the job's bytes from ``stream`` into ``into["job"]`` (None at end of input), give the main thread
    (``main_tid``) and this one the normal priority back at once, and set ``ready``."""
    try:
        head = stream.read(LENGTH.size)
        into["job"] = stream.read(LENGTH.unpack(head)[0]) if len(head) == LENGTH.size else None
    except OSError:
        into["job"] = None
    finally:
        if into.get("job") is not None:
            set_policy(os.SCHED_OTHER, main_tid)
            set_policy(os.SCHED_OTHER)
        ready.set()


def main(modules: list[str], job: IO[bytes], out: IO[bytes]) -> int:
    """The evaluating process: import ``modules`` at idle priority, then evaluate the one session it is sent on
    ``job``, and write the result to ``out``."""
    set_policy(os.SCHED_IDLE)  # before any thread starts: those this one starts inherit it
    got: dict = {}
    ready = threading.Event()
    threading.Thread(target=read_job, args=(job, threading.get_native_id(), got, ready),
                     name="read-job", daemon=True).start()
    for name in modules:
        importlib.import_module(name)
    ready.wait()
    if got.get("job") is None:  # the run failed, or evaluates nothing
        return 0
    from ppcsim.run.observers import observer

    try:
        protocol, scenario, session, settings = pickle.loads(got["job"])
        reply: tuple[str, Any] = (OK, observer(protocol).evaluate(scenario, session, settings))
    except Exception as exc:  # noqa: BLE001 - raised again in ppc run's process, as if it had evaluated there
        reply = (RAISED, exc)
    try:
        payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PickleError, TypeError, AttributeError):
        from ppcsim.errors import RunError

        payload = pickle.dumps((RAISED, RunError(str(reply[1]))), protocol=pickle.HIGHEST_PROTOCOL)
    out.write(payload)
    out.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:], sys.stdin.buffer, sys.stdout.buffer)
    sys.stdout.flush()
    os._exit(code)  # its reply is written and flushed: nothing is lost by skipping the interpreter's teardown
