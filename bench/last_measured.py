"""Run every benchmark and rewrite the "Last measured" table of bench/README.md from their figures.

Each script runs as its own process with the arguments below and ``--json``
(see ``harness.Figures``); the table's rows are their summaries and their
targets, checked. ``--smoke`` runs them at the small sizes the test suite
uses (seconds each, figures meaningless) and writes the table elsewhere.

    python bench/last_measured.py                     # all of them, about 40 minutes; rewrites bench/README.md
    python bench/last_measured.py --only e2e_drbt.py throughput.py
    python bench/last_measured.py --smoke --readme /tmp/README.md
    python bench/last_measured.py --from-json e2e.json     # rows from a script's earlier --json figures
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Every benchmark with the arguments of its measured run and of its smoke run (the test suite's).
RUNS: dict[str, tuple[list[str], list[str]]] = {
    "e2e_drbt.py": (["--rows", "1000000"], ["--rows", "3000", "--n-init", "1"]),
    "pseudonyms.py": (["--rows", "1000000"], ["--rows", "20000", "--repeat", "1"]),
    "throughput.py": (["--rows", "500000"], ["--rows", "5000", "--cols", "10", "--repeat", "1"]),
    "wire_bytes.py": (["--rows", "100000", "200000"], ["--rows", "3000"]),
    "osbr_memory.py": (["--rows", "20000", "--parties", "4", "32", "--party-rows", "5000"],
                       ["--rows", "300", "--linkage", "single", "--stress-rows", "100", "--parties", "2", "3",
                        "--party-rows", "100"]),
    "secure_kmeans.py": (["--rows", "100000"], ["--rows", "2000", "--parties", "2", "--columns", "3",
                                                 "--no-processes"]),
    "sweep_scaling.py": (["--rows", "3000"], ["--rows", "100", "--seeds", "1", "--k", "2", "--repeat", "1"]),
    "scaling.py": ([], ["--drbt-rows", "2000", "--osbr-rows", "200", "--csv", "{tmp}/scaling.csv", "--figure",
                        "{tmp}/scaling.png"]),
    "coordinator_load.py": (["--parties", "100", "--by-hand", "100", "--idle", "400", "--parked", "200"],
                            ["--parties", "5", "--by-hand", "4", "--rows", "300", "--idle", "8", "--parked", "4"]),
    "mpc_relay.py": (["--rows", "150"], ["--rows", "30", "--parties", "3", "--columns", "1", "--rounds", "2"]),
    "mpc_engines.py": (["--rows", "1000", "--gmpy2", "--cpu"],
                       ["--rows", "30", "--columns", "1", "--rounds", "2", "--clusters", "2", "--cpu", "--repeats",
                        "1"]),
    "comparison.py": ([],
                      ["--rows", "40", "--only", "comparison", "--links", "unshaped", "--no-eval", "--repeats", "1",
                       "--out", "{tmp}/docs"]),
}
BEGIN, END = "<!-- last-measured: begin -->", "<!-- last-measured: end -->"


def run(script: str, smoke: bool, tmp: Path) -> dict:
    """Run ``script`` and return its figures (SystemExit if it fails or writes none)."""
    args = [a.format(tmp=tmp) for a in RUNS[script][1 if smoke else 0]]
    out = tmp / f"{script}.json"
    proc = subprocess.run([sys.executable, str(HERE / script), *args, "--json", str(out)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    if proc.returncode or not out.exists():
        raise SystemExit(f"bench/{script} {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout}\n"
                         f"{proc.stderr}")
    figures = json.loads(out.read_text())
    figures["command"] = " ".join([script, *RUNS[script][1 if smoke else 0]])
    return figures


def row(figures: dict) -> str:
    checks = "; ".join(f"{c['what']} {c['value']:.3g} ({c['target']}: {'met' if c['met'] else 'not met'})"
                       for c in figures["checks"])
    return f"| `{figures['command']}` | {figures['summary']} | {checks or '-'} |"


def table(results: list[dict], kept: list[str]) -> str:
    """The README's block between the markers: the rows of ``results``, and the ``kept`` rows of scripts not run
    this time."""
    import numpy
    import sklearn

    machine = (f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {numpy.__version__}, "
               f"scikit-learn {sklearn.__version__}; load average {os.getloadavg()[1]:.1f} at the end")
    return "\n".join([BEGIN, "", f"Written by `python bench/last_measured.py` on {machine}.", "",
                      "| command | figures | targets |", "|---|---|---|", *kept, *map(row, results), "", END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=list(RUNS), default=list(RUNS))
    parser.add_argument("--smoke", action="store_true", help="the test suite's small sizes")
    parser.add_argument("--readme", type=Path, default=HERE / "README.md")
    parser.add_argument("--from-json", type=Path, nargs="+", metavar="PATH",
                        help="run nothing: rewrite the rows of the figures a script wrote earlier with --json")
    args = parser.parse_args(argv)
    results = []
    for path in args.from_json or []:
        figures = json.loads(path.read_text())
        argv_ = figures["argv"]
        kept = [a for i, a in enumerate(argv_) if a != "--json" and (i == 0 or argv_[i - 1] != "--json")]
        figures["command"] = " ".join([figures["script"], *kept])
        results.append(figures)
    with tempfile.TemporaryDirectory(prefix="ppc-bench-") as tmp:
        for script in [] if args.from_json else args.only:
            print(f"{script} ...", file=sys.stderr, flush=True)
            results.append(run(script, args.smoke, Path(tmp)))
    text = args.readme.read_text() if args.readme.exists() else f"{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{args.readme} has no {BEGIN} ... {END} block to rewrite")
    block = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    old = block.search(text)
    ran = {r["script"] for r in results}
    kept = [line for line in (old.group(0).splitlines() if old else [])
            if line.startswith("| `") and line[3:].split()[0].rstrip("`") in RUNS and line[3:].split()[0].rstrip("`")
            not in ran]
    args.readme.write_text(block.sub(lambda _: table(results, kept), text, count=1))
    print(f"wrote the last-measured table of {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
