"""Targets: at 1,000 records, 3 parties, k = 4, 10 rounds, the SPU engine's MPC phase at least 20x faster than
MPyC's (at least 10x for the whole `ppc run`) with at most 0.25x its bytes and equal labels; SPU relayed within
1.3x of SPU on direct links.

ROWS records of synthetic blobs over three parties of COLUMNS columns each, k-means with CLUSTERS clusters,
ROUNDS Lloyd rounds, all from the same initial records (the scenario seed draws them; every run below starts
from the records the SPU run's report names). In this one run, one after the other:

  spu relayed    `ppc run` of the scenario with engine = "spu", --repeats times (3 unless told; every SPU
                 figure is that of the run of median wall time, the others' times printed beside it): each party
                 process starts its SPU program (ABY3) in SPU's own environment, every connection tunnelled
                 through the coordinator (gRPC over TLS, AES-256-GCM per pair); MPC phase = the slowest
                 party's time from the alignment's arrival to its result (reading or compiling the programs,
                 the links' set-up and the input sharing included; the program's interpreter and SPU's runtime
                 load before it, while the ids go up: docs/mpc.md, "Starting it"); bytes = the sealed frames
                 the coordinator counted, the most any party sent
  spu direct     the same program (parties/spu_kmeans.py) on the same joined normalised columns and initial
                 records, three processes on direct loopback links: first start to last exit
  mpyc relayed   `ppc run` of the scenario with engine = "mpyc" (the default), measured as spu relayed but once
                 (it takes half a minute; its program starts after the alignment: its start, about 0.3 s, is in
                 its phase)
  mpyc direct    with --gmpy2: MPyC's program on direct links with gmpy2 and without it (MPYC_NOGMPY=1)

Every process runs with PPC_SPU_TRACE=1, so that the rounds alone (inputs shared to the last round) of the SPU
runs can be set side by side: relayed within 1.3x of direct is checked on them too, since the direct run's
start waits on brpc's retries while its peers start (SPU's link re-dials a peer that did not listen yet only
after its health check), where the tunnels listen from the start.

With --trace it also prints where the SPU runs' time goes: each step's
seconds after the one before, at share-holder 0 (program spawned, interpreter up, SPU imported, programs ready
from the cache, go after the confirmation, links up, inputs shared, each round, labels opened; relayed also the
tunnel up, the first and last relayed frame, the result read) and the whole `ppc run`'s phases (report.json's
timing: first party joined, uploads in, clustering done, evaluation, total).

With --cpu it also prints the CPU seconds each kind of process used in the SPU runs' rounds (inputs shared to
the last round): the SPU programs, the parties, the counting relay and the coordinator (the `ppc run` process),
read from /proc every 50 ms, against the CPU seconds the cores gave meanwhile. With --pin CPU the SPU programs
run on that CPU alone and every other process on the other CPUs, relayed and direct, so that the relay's own
work does not compete with the programs for a core: what is left between the two is the relay's latency.

The labels of every run must equal scikit-learn's KMeans from the same initial records. --engines spu leaves
MPyC out (it takes minutes per thousand records). Where SPU cannot run (no environment: `ppc spu-env`), the SPU
rows are left out, saying why.

    python bench/mpc_engines.py [--rows 1000] [--columns 4] [--rounds 10] [--clusters 4] [--engines spu mpyc]
                                [--repeats 3] [--trace] [--cpu] [--pin CPU]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ppcsim.cli.entry import process_settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures, blobs_scenario, ppc_run  # noqa: E402
from mpc_relay import direct as mpyc_direct  # noqa: E402

from parties.disguise import disguise  # noqa: E402
from parties.mpc import free_port  # noqa: E402
from parties.spu_env import problem as spu_problem  # noqa: E402
from parties.spu_run import TRACE_VARIABLE, program_command, program_env  # noqa: E402
from ppcsim.run.observers.secure_aggregation import reference  # noqa: E402
from ppcsim.scenario.load import load_scenario  # noqa: E402

process_settings()  # ppc's process settings: this process's allocator, and what the processes it starts inherit


def children_cpu() -> float:
    """CPU seconds (user + system) of every process this one has waited for, and theirs (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def trace_points(text: str, who: str | None = None) -> list[tuple[float, str]]:
    """The trace lines in ``text`` ("spu trace PARTY STEP SECONDS" of a party, "# trace STEP SECONDS" of a
    program; ``who``: only that party's) as (seconds, step), in time order."""
    found = []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("spu trace ") and len(words) == 5 and (who is None or words[2] == who):
            found.append((float(words[4]), words[3].removeprefix("program-")))
        elif line.startswith("# trace ") and len(words) == 4:
            found.append((float(words[3]), words[2]))
    return sorted(found)


def steps(text: str, who: str | None = None) -> str:
    """The trace's steps (``trace_points``) as "step +seconds after the step before", in time order."""
    found = trace_points(text, who)
    return " ".join(f"{step} +{t - (found[i - 1][0] if i else t):.2f}" for i, (t, step) in enumerate(found))


def window(text: str, who: str | None = None) -> tuple[float, float] | None:
    """The wall-clock times of the inputs shared and the last round's end in a trace (``trace_points``): the
    rounds alone, without the program's start and its links' set-up; None if the trace does not have them."""
    at = {step: t for t, step in trace_points(text, who)}
    rounds = [t for step, t in at.items() if step.startswith("round")]
    return (at["shared"], max(rounds)) if rounds and "shared" in at else None


#: What each process of a run is, by its command line: the first role whose words it contains.
ROLES = [("SPU programs", ("spu_kmeans.py",)), ("parties", ("ppcsim party",)),
         ("counting relay", ("ppcsim.run.relay",)), ("coordinator", ("ppcsim run",))]


class CpuSampler:
    """The CPU seconds of every process this one starts, and their descendants, sampled every ``every`` seconds
    from /proc by a thread of its own, each process under its role (``ROLES``: the coordinator is the `ppc run`
    process, which also starts the parties and reads the report). With ``pin`` (a CPU's number) it also moves
    every SPU program it sees to that CPU alone and every other process to the other CPUs (a process started
    between two samples runs where its parent did until the next).

    ``split(a, b)``: CPU seconds by role between wall-clock times a and b (the samples nearest them)."""

    def __init__(self, every: float = 0.05, pin: int | None = None):
        self.every, self.pin = every, pin
        self.samples: list[tuple[float, dict[int, tuple[str, float]]]] = []
        self.roles: dict[int, str] = {}
        self.tick = os.sysconf("SC_CLK_TCK")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _stat(self, pid: int) -> tuple[int, float] | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            return None
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / self.tick  # parent, user + system

    def _role(self, pid: int) -> str:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return "other"
        role = next((name for name, marks in ROLES if any(m in words for m in marks)), "other")
        if self.pin is not None:
            others = (os.sched_getaffinity(0) - {self.pin}) or {self.pin}
            try:
                threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except OSError:
                threads = [pid]
            for thread in threads:  # a CPU mask is each thread's own: the ones started already, then their children
                try:
                    os.sched_setaffinity(thread, {self.pin} if role == "SPU programs" else others)
                except OSError:
                    pass  # gone already
        return role

    def _run(self) -> None:
        # a process not ours at the first look, or whose parent is not, never becomes ours: not read again
        mine, foreign, first = {os.getpid()}, set(), True
        while not self._stop.is_set():
            now, seen = time.time(), {}
            for name in os.listdir("/proc"):
                if not name.isdigit() or int(name) in mine or int(name) in foreign:
                    continue
                pid = int(name)
                stat = self._stat(pid)
                if stat is None:
                    continue
                parent, cpu = stat
                if pid in self.roles or parent in mine or parent in self.roles:
                    if pid not in self.roles:
                        self.roles[pid] = self._role(pid)
                    seen[pid] = (self.roles[pid], cpu)
                elif first or parent in foreign:
                    foreign.add(pid)
            self.samples.append((now, seen))
            first = False
            self._stop.wait(self.every)

    def split(self, a: float, b: float) -> dict[str, float]:
        first = min(self.samples, key=lambda s: abs(s[0] - a))[1]
        last = min(self.samples, key=lambda s: abs(s[0] - b))[1]
        out: dict[str, float] = {}
        for pid, (role, cpu) in last.items():
            out[role] = out.get(role, 0.0) + cpu - first.get(pid, (role, 0.0))[1]
        return out


def cpu_line(sampler: CpuSampler, span: tuple[float, float] | None, cores: int) -> tuple[str, dict[str, float]]:
    """``sampler``'s CPU seconds by role over ``span`` in words, and by role."""
    if span is None:
        return "no trace of the rounds", {}
    split = {role: cpu for role, cpu in sampler.split(*span).items() if cpu > 0}
    if not split:
        return "no process's CPU was sampled in the rounds", {}
    seconds, total = span[1] - span[0], sum(split.values())
    order = [name for name, _ in ROLES] + ["other"]
    parts = ", ".join(f"{role} {split[role]:.2f}" for role in order if role in split)
    return (f"{seconds:.2f} s; CPU-s: {parts}; {total:.2f} of the {seconds * cores:.2f} its {cores} "
            f"core{'s' if cores > 1 else ''} gave ({100 * total / (seconds * cores):.0f}%)"), split


def phases(report: dict) -> str:
    """The whole `ppc run`'s phases from report.json's timing, seconds after the launcher's start."""
    t, c = report["timing"], report["timing"].get("coordinator", {})
    return (f"first party joined {c.get('first_join', 0):.2f} s, uploads in {c.get('uploaded', 0):.2f} s, "
            f"clustering done {c.get('done', 0):.2f} s, evaluation {t.get('evaluate', 0):.2f} s, total "
            f"{t.get('total', 0):.2f} s")


def relayed(text: str) -> dict:
    """`ppc run` of an MPC scenario: its MPC phase, wall time, bytes, labels' equality and messages in sequence,
    and the CPU seconds of the whole run (coordinator, parties and their MPC programs)."""
    cpu = children_cpu()
    logs: dict[str, str] = {}
    wall, report = ppc_run(text, logs=logs)
    m = report["mpc"]
    return {"logs": logs, "phases": phases(report), "wall": wall, "cpu": children_cpu() - cpu,
            "mpc": max(p["timing"]["mpc"] for p in report["parties"]),
            "bytes": max(p["up"] for name, p in m["by_party"].items()),
            "equal": bool(report["utility"]["labels_equal_same_init"]), "init": m["init"], "n_joined": m["n_joined"],
            "sequential": sum(r.get("sequential") or 0 for r in m["per_round"])}


def spu_direct(path: Path, init: list[int], rounds: int, clusters: int, tmp: Path) -> tuple[float, float, bool, str]:
    """The SPU program on direct loopback links: (seconds from the first start to the last exit, CPU seconds of
    the three programs, labels equal, share-holder 0's standard error)."""
    scenario = load_scenario(path)
    own = [disguise(cfg) for cfg in scenario.parties]
    columns = [len(d.data.columns) for d in own]
    for i, d in enumerate(own):
        np.savez(tmp / f"spu{i}.npz", X=d.X, columns=columns, init=init, k=clusters, rounds=rounds, bits=32,
                 frac=16, m=len(d.X), reveal_centres=False)
    addresses = [f"127.0.0.1:{free_port()}" for _ in own]
    cpu = children_cpu()
    t = time.perf_counter()
    procs = [subprocess.Popen(program_command(tmp / f"spu{i}.npz", tmp / f"spu-out{i}.npz", i, addresses,
                                              "bench", 3600), env=program_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for i in range(len(own))]
    errors = [p.communicate()[1] for p in procs]
    seconds, cpu = time.perf_counter() - t, children_cpu() - cpu
    if any(p.returncode for p in procs):
        raise SystemExit("the direct SPU run failed:\n" + "\n".join(e[-2000:] for e in errors))
    labels = np.load(tmp / "spu-out0.npz")["labels"]
    X = np.hstack([d.X for d in own])
    return (seconds, cpu, bool(np.array_equal(labels, reference(X, np.asarray(init), clusters, rounds).labels_)),
            errors[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=4, help="columns per party (three parties)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--engines", nargs="+", choices=("spu", "mpyc"), default=["spu", "mpyc"])
    parser.add_argument("--gmpy2", action="store_true", help="also time MPyC on direct links with and without gmpy2")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    parser.add_argument("--trace", action="store_true", help="print where the SPU runs' time goes (PPC_SPU_TRACE)")
    parser.add_argument("--repeats", type=int, default=3, metavar="N",
                        help="run SPU relayed N times and take the run of median wall time (default 3)")
    parser.add_argument("--cpu", action="store_true",
                        help="print the CPU seconds each kind of process used in the SPU runs' rounds (from /proc)")
    parser.add_argument("--pin", type=int, metavar="CPU",
                        help="run the SPU programs on CPU alone and every other process on the other CPUs, relayed "
                             "and direct (implies --cpu)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: at least 1")
    if (args.cpu or args.pin is not None) and not (os.path.isdir("/proc/self/task") and hasattr(os, "sched_getaffinity")):
        parser.error("--cpu and --pin read the processes' CPU time from /proc and set their CPUs: Linux only")
    if args.pin is not None and (args.pin not in os.sched_getaffinity(0) or len(os.sched_getaffinity(0)) < 2):
        parser.error(f"--pin {args.pin}: not one of this process's CPUs {sorted(os.sched_getaffinity(0))}, or "
                     "there is no other CPU for the rest")
    os.environ[TRACE_VARIABLE] = "1"  # every process of the runs inherits it: the rounds alone need the steps' times

    def scenario(engine: str) -> str:
        mpc = (f'algorithm = "kmeans"\nprotocol = "mpc"\nengine = "{engine}"\nn_clusters = {args.clusters}\n'
               f'max_iter = {args.rounds}\n')
        return blobs_scenario("bench-engines", args.rows, 3, args.columns, "", mpc, clusters=args.clusters)

    figures = Figures("mpc_engines.py")
    print(f"{args.rows} records, 3 parties x {args.columns} columns, k = {args.clusters}, {args.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f} (shared machine: compare ratios)")
    runs: dict[str, dict] = {}
    why = spu_problem() if "spu" in args.engines else "not asked for"
    if why:
        print(f"spu      left out: {why}")
    else:
        sampling = args.cpu or args.pin is not None
        if args.pin is not None:
            print(f"pinned   the SPU programs on CPU {args.pin}, every other process on the others")
        tries = []
        for _ in range(args.repeats):
            with CpuSampler(pin=args.pin) if sampling else contextlib.nullcontext() as relayed_cpu:
                tries.append(dict(relayed(scenario("spu")), sampler=relayed_cpu))
        # a run of seconds moves with the machine's other work: every figure is the median run's (by wall time)
        runs["spu"] = spu = sorted(tries, key=lambda r: r["wall"])[len(tries) // 2]
        relayed_cpu = spu["sampler"]
        if len(tries) > 1:
            print(f"spu      relayed {len(tries)} times: ppc run " + ", ".join(f"{r['wall']:.2f}" for r in tries)
                  + " s; MPC phase " + ", ".join(f"{r['mpc']:.2f}" for r in tries) + " s; the median run's figures:")
        if spu["n_joined"] != args.rows:
            raise SystemExit("the join dropped records; this benchmark needs every record joined")
        with tempfile.TemporaryDirectory(prefix="ppc-bench-engines-") as tmp:
            path = Path(tmp) / "bench.toml"
            path.write_text(scenario("spu"))
            with CpuSampler(pin=args.pin) if sampling else contextlib.nullcontext() as direct_sampler:
                direct_seconds, direct_cpu, direct_equal, direct_err = spu_direct(path, spu["init"], args.rounds,
                                                                                  args.clusters, Path(tmp))
        print(f"spu      relayed: MPC phase {spu['mpc']:.2f} s, ppc run {spu['wall']:.1f} s ({spu['cpu']:.1f} CPU-s), "
              f"{spu['bytes']:,} B sent "
              f"(most of any party), {spu['sequential']} chunks in sequence; labels "
              f"{'equal' if spu['equal'] else 'NOT equal'} to scikit-learn's")
        print(f"spu      direct:  {direct_seconds:.2f} s ({direct_cpu:.1f} CPU-s); labels "
              f"{'equal' if direct_equal else 'NOT equal'}")
        if args.trace:
            print(f"trace    spu relayed, p0: {steps(spu['logs'].get('p0', ''), 'p0')}")
            print(f"trace    spu relayed, whole run: {spu['phases']}")
            print(f"trace    spu direct, share-holder 0: {steps(direct_err)}")
        relayed_span, direct_span = window(spu["logs"].get("p0", ""), "p0"), window(direct_err)
        if relayed_span and direct_span:
            relayed_rounds, direct_rounds = relayed_span[1] - relayed_span[0], direct_span[1] - direct_span[0]
            print(f"spu      rounds alone (inputs shared to the last round): relayed {relayed_rounds:.2f} s, "
                  f"direct {direct_rounds:.2f} s ({relayed_rounds / direct_rounds:.2f}x)")
            figures.add("spu_relayed_rounds_seconds", relayed_rounds)
            figures.add("spu_direct_rounds_seconds", direct_rounds)
            pinned = f" (the SPU programs on CPU {args.pin} alone in both)" if args.pin is not None else ""
            figures.check("SPU relayed / direct, the rounds alone" + pinned, relayed_rounds / direct_rounds, "<=",
                          1.3)
        if sampling:
            assert relayed_cpu is not None and direct_sampler is not None  # both sampled
            cores = len(os.sched_getaffinity(0))
            for way, sampler, span, given in (("relayed", relayed_cpu, relayed_span, cores),
                                              ("direct", direct_sampler, direct_span,
                                               1 if args.pin is not None else cores)):
                text, split = cpu_line(sampler, span, given)
                print(f"cpu      rounds alone, {way + ':':8s} {text}")
                for role, cpu in split.items():
                    figures.add(f"spu_{way}_rounds_cpu_{role.replace(' ', '_').lower()}", cpu)
        figures.add("spu_mpc_seconds", spu["mpc"])
        figures.add("spu_run_seconds", spu["wall"])
        figures.add("spu_run_cpu_seconds", spu["cpu"])
        figures.add("spu_direct_cpu_seconds", direct_cpu)
        figures.add("spu_bytes", spu["bytes"])
        figures.add("spu_direct_seconds", direct_seconds)
        figures.check("SPU labels equal scikit-learn's from the same centres", float(spu["equal"] and direct_equal),
                      "==", 1)
        figures.check("SPU relayed MPC phase / SPU direct (whose links' set-up waits on brpc's retries)",
                      spu["mpc"] / direct_seconds, "<=", 1.3)
    if "mpyc" in args.engines:
        runs["mpyc"] = mpyc = relayed(scenario("mpyc"))
        print(f"mpyc     relayed: MPC phase {mpyc['mpc']:.2f} s, ppc run {mpyc['wall']:.1f} s ({mpyc['cpu']:.1f} CPU-s), "
              f"{mpyc['bytes']:,} B "
              f"sent (most of any party), {mpyc['sequential']} messages in sequence; labels "
              f"{'equal' if mpyc['equal'] else 'NOT equal'} to scikit-learn's")
        if args.trace:
            print(f"trace    mpyc relayed, whole run: {mpyc['phases']}")
        figures.add("mpyc_mpc_seconds", mpyc["mpc"])
        figures.add("mpyc_run_seconds", mpyc["wall"])
        figures.add("mpyc_run_cpu_seconds", mpyc["cpu"])
        figures.add("mpyc_bytes", mpyc["bytes"])
        figures.check("MPyC labels equal scikit-learn's from the same centres", float(mpyc["equal"]), "==", 1)
        if args.gmpy2:
            with tempfile.TemporaryDirectory(prefix="ppc-bench-engines-") as tmp:
                path = Path(tmp) / "bench.toml"
                path.write_text(scenario("mpyc"))
                with_gmpy2 = mpyc_direct(path, mpyc["init"], args.rounds, args.clusters, Path(tmp))[0]
                os.environ["MPYC_NOGMPY"] = "1"
                try:
                    without = mpyc_direct(path, mpyc["init"], args.rounds, args.clusters, Path(tmp))[0]
                finally:
                    del os.environ["MPYC_NOGMPY"]
            print(f"mpyc     direct:  {with_gmpy2:.2f} s with gmpy2, {without:.2f} s without "
                  f"({without / with_gmpy2:.2f}x)")
            figures.add("mpyc_direct_gmpy2_seconds", with_gmpy2)
            figures.add("mpyc_direct_no_gmpy2_seconds", without)
    if "spu" in runs and "mpyc" in runs:
        spu, mpyc = runs["spu"], runs["mpyc"]
        print(f"ratios   MPC phase {mpyc['mpc'] / spu['mpc']:.1f}x faster (target >= 20x), ppc run "
              f"{mpyc['wall'] / spu['wall']:.1f}x (>= 10x; CPU {mpyc['cpu'] / spu['cpu']:.1f}x), bytes "
              f"{spu['bytes'] / mpyc['bytes']:.3f}x (<= 0.25x)")
        figures.check("MPyC MPC phase / SPU MPC phase", mpyc["mpc"] / spu["mpc"], ">=", 20)
        figures.check("MPyC ppc run / SPU ppc run", mpyc["wall"] / spu["wall"], ">=", 10)
        figures.check("SPU bytes / MPyC bytes (most of any party)", spu["bytes"] / mpyc["bytes"], "<=", 0.25)
    summary = ", ".join(f"{e} MPC phase {r['mpc']:.2f} s, {r['bytes']:,} B" for e, r in runs.items())
    figures.write(args.json, f"{args.rows} records, 3 parties, {args.rounds} rounds: {summary or 'nothing ran'}")


if __name__ == "__main__":
    main()
