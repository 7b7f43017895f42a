"""What the benchmarks share: a synthetic scenario's text, and one `ppc run` of it, timed, with its report."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def blobs_scenario(name: str, rows: int, parties: int, columns_each: int, party_table: str, clustering: str,
                   clusters: int = 8, seed: int = 7) -> str:
    """A scenario over ``synthetic:blobs``: ``parties`` parties of ``columns_each`` columns, each with
    ``party_table`` (e.g. 'method = "drbt"\\nk = 10'), and the ``[clustering]`` lines ``clustering``."""
    blocks = []
    for j in range(parties):
        cols = ", ".join(f'"x{c}"' for c in range(columns_each * j, columns_each * (j + 1)))
        blocks.append(f'[[parties]]\nname = "p{j}"\ncolumns = [{cols}]\n{party_table}\n')
    return (f'name = "{name}"\nseed = {seed}\ndeadline = 3600\n[data]\nsource = "synthetic:blobs"\nrows = {rows}\n'
            f'columns = {parties * columns_each}\nclusters = {clusters}\n' + "\n".join(blocks)
            + f"\n[clustering]\n{clustering}\n")


def ppc_run(text: str, *options: str, logs: dict[str, str] | None = None) -> tuple[float, dict]:
    """Run scenario ``text`` with `ppc run --quiet` and ``options``: wall seconds (command start to report
    written) and the report; ``logs``, when given, receives each party's log by name."""
    with tempfile.TemporaryDirectory(prefix="ppc-bench-") as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(text)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ppcsim", "run", str(path), "--out", f"{tmp}/out", "--quiet",
                               *options], capture_output=True, text=True)
        seconds = time.perf_counter() - t
        if proc.returncode:
            raise SystemExit(f"ppc run failed:\n{proc.stderr}")
        if logs is not None:
            logs.update({f.stem: f.read_text(errors="replace") for f in (Path(tmp) / "out" / "logs").glob("*.log")})
        return seconds, json.loads((Path(tmp) / "out" / "report.json").read_text())


class Figures:
    """What one benchmark measured, written as JSON with ``--json PATH`` (``bench/last_measured.py`` and the
    test suite read it): named figures, each target checked against its figure, and a one-line summary."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.figures: dict[str, float] = {}
        self.checks: list[dict] = []

    def add(self, name: str, value: float) -> float:
        """Record figure ``name`` and return it."""
        self.figures[name] = float(value)
        return float(value)

    def check(self, what: str, value: float, op: str, bound: float) -> bool:
        """Record the target ``what op bound`` (``op`` one of <, <=, >=, ==) against ``value``; whether it is met."""
        met = {"<": value < bound, "<=": value <= bound, ">=": value >= bound, "==": value == bound}[op]
        self.checks.append({"what": what, "value": float(value), "target": f"{op} {bound:g}", "met": bool(met)})
        return bool(met)

    def write(self, path: str | None, summary: str, argv: list[str] | None = None) -> None:
        """Write the figures to ``path`` (nothing when None)."""
        if path is None:
            return
        Path(path).write_text(json.dumps({"script": self.script, "argv": sys.argv[1:] if argv is None else argv,
                                          "summary": summary, "figures": self.figures, "checks": self.checks},
                                         indent=1) + "\n")
