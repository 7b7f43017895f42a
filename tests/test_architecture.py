"""The architecture read from the code itself: which module imports which (imports inside functions and
under TYPE_CHECKING included), how large modules and folders are, and which way the arrows go.

- no import cycle between the project's modules (ppcsim, coordinator, parties, protos, bench, scenarios);
- no module over 600 lines (generated ``*_pb2*.py`` and the tests left out);
- no folder whose own .py files hold more than a quarter of the project's (non-test, non-generated) Python;
- the arrows point down: parties and protos import neither ppcsim nor the coordinator, the coordinator does
  not import ppcsim, nothing imports bench; inside ppcsim, evaluation is a library that imports no other room,
  and each room imports only the rooms below it (``ROOMS``);
- a dotted path names one thing: no package binds a name that is also one of its modules (as a callable
  module named like its function once did), and no module replaces its own class to become callable;
- a party process reading its scenario loads no coordinator module (the ``[clustering]`` schema and the
  protocols' names are protos', protos.clustering and protos.vocabulary);
- at most ``MAX_PROTOCOL_BRANCHES`` lines outside the protocols' own folders (``PROTOCOL_FOLDERS``) branch on
  which protocol a session runs: a protocol is its classes in those folders, registered by name.

Each rule is first shown to fail on a small tree that breaks it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: The project: the nearest folder above this file that holds pyproject.toml (wherever the tests are filed).
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PACKAGES = ("ppcsim", "coordinator", "parties", "protos", "bench", "scenarios")
MAX_LINES = 600
MAX_FOLDER_SHARE = 0.25
#: ppcsim's rooms from the bottom up: a room imports only rooms before it (and ppcsim.errors); the package's
#: own modules (ppcsim.api, the command line's entry) sit above them all.
ROOMS = ("evaluate", "scenario", "report", "run", "reproduce", "cli")
SKIP_DIRS = {"tests", "build", "dist", "node_modules", "_build", "__pycache__"}


def generated(path: Path) -> bool:
    return "_pb2" in path.name


def python_files(root: Path) -> list[Path]:
    """Every non-test, non-generated .py file of the project (hidden folders, virtual environments and
    build output left out)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts[:-1]
        if any(p.startswith(".") or p in SKIP_DIRS or p.endswith(".egg-info") for p in parts) or generated(path):
            continue
        out.append(path)
    return out


def modules(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for the project's packages."""
    out = {}
    for package in packages:
        for path in python_files(root / package) if (root / package).is_dir() else []:
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def imports(root: Path, packages=PACKAGES) -> dict[str, set[str]]:
    """Each module's imports of the project's modules: every import statement anywhere in the file."""
    found = modules(root, packages)

    def nearest(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets |= {nearest(a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                for alias in node.names:  # 'from a import b' imports module a.b when there is one
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in found else nearest(base))
        graph[name] = {t for t in targets if t and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_cycle_through(sorted(component), graph))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _cycle_through(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle in a strongly connected component, from its first module back to it (breadth first)."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & inside):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component


def room(module: str) -> str:
    """``ppcsim.<room>`` for a module of a room, ``ppcsim`` for the package's own modules, else the package."""
    parts = module.split(".")
    if parts[0] == "ppcsim" and len(parts) > 1 and parts[1] in (*ROOMS, "errors"):
        return "ppcsim." + parts[1]
    return "ppcsim" if parts[0] == "ppcsim" else parts[0]


def rank(place: str) -> int:
    """Height of a place in the house: lower layers first, then ppcsim.errors, the rooms and ppcsim's own modules."""
    order = ("protos", "parties", "coordinator", "ppcsim.errors", *(f"ppcsim.{r}" for r in ROOMS), "ppcsim")
    return order.index(place) if place in order else len(order)


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points up: parties/protos -> coordinator or ppcsim, coordinator -> ppcsim, a ppcsim
    room -> a room above it (evaluation imports none), anything -> bench."""
    bad = []
    for a, targets in sorted(graph.items()):
        for b in sorted(targets):
            ra, rb = room(a), room(b)
            if rb == "bench" and ra != "bench":
                bad.append(f"{a} -> {b}")
            elif ra in ("parties", "protos") and rb in ("coordinator",) or (
                    ra in ("parties", "protos", "coordinator") and rb.startswith("ppcsim")):
                bad.append(f"{a} -> {b}")
            elif ra.startswith("ppcsim.") and rb.startswith("ppcsim") and ra != rb and rank(rb) > rank(ra):
                bad.append(f"{a} -> {b}")
            elif ra == "ppcsim.evaluate" and rb.startswith("ppcsim.") and rb not in ("ppcsim.evaluate", "ppcsim.errors"):
                bad.append(f"{a} -> {b}")
    return bad


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): n for p in python_files(root) if (n := lines(p)) > MAX_LINES}


def heavy_folders(root: Path) -> dict[str, float]:
    """Folders whose own .py files hold more than ``MAX_FOLDER_SHARE`` of the project's Python lines."""
    by_folder: dict[str, int] = {}
    for p in python_files(root):
        folder = p.parent.relative_to(root).as_posix()
        by_folder[folder] = by_folder.get(folder, 0) + lines(p)
    total = sum(by_folder.values())
    return {f: n / total for f, n in by_folder.items() if n > MAX_FOLDER_SHARE * total}


def ambiguous_names(root: Path, packages=PACKAGES) -> list[str]:
    """``pkg.name`` meaning two things: a package binding a name that is also its submodule's (other than by
    importing that submodule), or a module that makes itself callable."""
    found = modules(root, packages)
    bad = []
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Attribute) and n.attr == "__class__" and "sys.modules" in ast.unparse(n.value)
               for n in ast.walk(tree)):
            bad.append(f"{name} replaces its module's class")
        if path.name != "__init__.py":
            continue
        children = {m.rpartition(".")[2] for m in found if m.rpartition(".")[0] == name}
        for node in tree.body:
            bound: list[tuple[str, str | None]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = [(node.name, None)]
            elif isinstance(node, ast.Assign):
                bound = [(t.id, None) for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.ImportFrom):
                bound = [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names]
            for bound_name, source in bound:
                if bound_name in children and source != f"{name}.{bound_name}":
                    bad.append(f"{name}.{bound_name} is both a module and a name bound in {path.name}")
    return bad


# -- each rule fails on a tree that breaks it ------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_cycle_hidden_in_a_function_or_under_type_checking_is_found(tmp_path):
    root = _tree(tmp_path, {
        "parties/__init__.py": "",
        "parties/a.py": "def f():\n    from parties import b\n",
        "parties/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from parties.c import X\n",
        "parties/c.py": "import parties.a\n",
        "parties/d.py": "from parties.a import f\n",
    })
    assert cycles(imports(root)) == [["parties.a", "parties.b", "parties.c", "parties.a"]]


def test_arrows_up_the_house_are_found(tmp_path):
    files = {f"{p}/__init__.py": "" for p in ("parties", "protos", "coordinator", "ppcsim", "bench",
                                              *(f"ppcsim/{r}" for r in ROOMS))}
    root = _tree(tmp_path, {**files,
                            "parties/x.py": "import coordinator.y\n",
                            "coordinator/y.py": "def f():\n    from ppcsim.run import z\n",
                            "ppcsim/run/z.py": "from ppcsim.cli import w\n",
                            "ppcsim/cli/w.py": "from ppcsim.run import z\nimport ppcsim.api\n",
                            "ppcsim/evaluate/v.py": "from ppcsim.scenario import u\n",
                            "ppcsim/scenario/u.py": "from ppcsim.evaluate import v\n",
                            "ppcsim/api.py": "import bench\n"})
    assert wrong_way(imports(root)) == ["coordinator.y -> ppcsim.run.z", "parties.x -> coordinator.y",
                                        "ppcsim.api -> bench", "ppcsim.cli.w -> ppcsim.api",
                                        "ppcsim.evaluate.v -> ppcsim.scenario.u", "ppcsim.run.z -> ppcsim.cli.w"]


def test_sizes_and_shared_names_are_found(tmp_path):
    root = _tree(tmp_path, {"parties/__init__.py": "def simulate():\n    pass\n",
                            "parties/simulate.py": "import sys\nsys.modules[__name__].__class__ = type\n",
                            "parties/big.py": "x = 1\n" * (MAX_LINES + 1),
                            "parties/gen_pb2.py": "x = 1\n" * 5000,
                            "bench/small.py": "x = 1\n" * 10})
    assert oversized(root) == {"parties/big.py": MAX_LINES + 1}
    assert set(heavy_folders(root)) == {"parties"}
    assert sorted(ambiguous_names(root)) == ["parties.simulate is both a module and a name bound in __init__.py",
                                             "parties.simulate replaces its module's class"]


# -- the project -------------------------------------------------------------------------------

def test_no_import_cycle():
    assert cycles(imports(ROOT)) == []


def test_imports_point_down_the_house():
    assert wrong_way(imports(ROOT)) == []


@pytest.mark.parametrize("module", sorted(oversized(ROOT)) or ["(none)"])
def test_no_module_over_600_lines(module):
    assert module == "(none)", f"{module}: {oversized(ROOT)[module]} lines (at most {MAX_LINES})"


def test_no_folder_holds_more_than_a_quarter_of_the_code():
    assert heavy_folders(ROOT) == {}


def test_a_dotted_path_names_one_thing():
    assert ambiguous_names(ROOT) == []


# -- the party's process entry is not a library ---------------------------------------------------

#: Outside ``parties``, the one module that may import the party process's entry (``parties.run``): the command
#: line's ``ppc party``, which starts that process. What a party computes and sends is ``parties.disguise``, what a
#: process measures of itself ``parties.metrics``.
PARTY_ENTRY = "parties.run"
PARTY_ENTRY_STARTERS = {"ppcsim.cli.roles"}


def party_entry_importers(graph: dict[str, set[str]]) -> list[str]:
    """Every module outside ``parties`` (and other than ``PARTY_ENTRY_STARTERS``) that imports ``parties.run``."""
    return sorted(a for a, targets in graph.items()
                  if PARTY_ENTRY in targets and room(a) != "parties" and a not in PARTY_ENTRY_STARTERS)


def test_a_library_use_of_the_party_entry_is_found(tmp_path):
    root = _tree(tmp_path, {"parties/__init__.py": "", "parties/run.py": "", "parties/step.py": "import parties.run\n",
                            "ppcsim/__init__.py": "", "ppcsim/evaluate/__init__.py": "", "ppcsim/cli/__init__.py": "",
                            "ppcsim/evaluate/a.py": "def f():\n    from parties.run import disguise\n",
                            "ppcsim/cli/roles.py": "from parties.run import run_party\n",
                            "bench/__init__.py": "", "bench/b.py": "from parties import run\n"})
    assert party_entry_importers(imports(root)) == ["bench.b", "ppcsim.evaluate.a"]


def test_only_the_party_command_imports_the_party_entry():
    assert party_entry_importers(imports(ROOT)) == []
#: What a party process has loaded of the coordinator once it has read its scenario: only ``coordinator.malloc``,
#: which ``import ppcsim`` itself uses to set glibc's malloc threshold as the process starts (its package, then).
PARTY_READS_COORDINATOR: set[str] = set()


@pytest.mark.processes
@pytest.mark.parametrize("clustering", [{}, {"protocol": "secure_aggregation"}, {"protocol": "mpc"}])
def test_a_party_reading_its_scenario_loads_no_coordinator_module(tmp_path, clustering):
    from conftest import party_table, write_scenario

    method = None if clustering else "none"
    path = write_scenario(tmp_path, parties=[party_table("a", ["alcohol", "malic_acid"], method),
                                             party_table("b", ["ash", "magnesium"], method),
                                             party_table("c", ["hue", "proline"], method)], clustering=clustering)
    code = ("import json, sys\n"
            "from ppcsim.scenario.load import load_scenario\n"
            f"scenario = load_scenario({str(path)!r}, role='party', party='a')\n"
            "print(json.dumps([scenario.clustering.protocol, sorted(m for m in sys.modules if m.split('.')[0] == "
            "'coordinator')]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          cwd=ROOT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    protocol, loaded = json.loads(done.stdout.splitlines()[-1])
    assert protocol == clustering.get("protocol", "upload")
    assert set(loaded) <= PARTY_READS_COORDINATOR, f"a party reading its scenario loaded {loaded}"


#: Where each protocol's pieces live: the coordinator's, the party's, the scenario's checks, the observer's and the
#: report's (a line there may branch on the protocol; it is that protocol's code).
PROTOCOL_FOLDERS = ("coordinator/protocols/", "parties/protocols/", "ppcsim/scenario/protocols/",
                    "ppcsim/run/observers/", "ppcsim/report/protocols/")
#: A line that branches on the session's protocol by its name (or on secure aggregation's reveal).
PROTOCOL_BRANCH = re.compile(r"protocol ==|protocol in|== SECURE|== MPC|secure_only|protocol !=|\.labels_only|"
                             r"reveal ==")
MAX_PROTOCOL_BRANCHES = 3  # the report's table and page wording of a secure-aggregation party, a bench flag


def protocol_branches(root: Path, packages=("parties", "coordinator", "ppcsim", "bench")) -> list[str]:
    """``path:line: text`` of every line outside ``PROTOCOL_FOLDERS`` that branches on the protocol."""
    found = []
    for package in packages:
        for path in python_files(root / package) if (root / package).is_dir() else []:
            where = path.relative_to(root).as_posix()
            if where.startswith(PROTOCOL_FOLDERS):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if PROTOCOL_BRANCH.search(line):
                    found.append(f"{where}:{number}: {line.strip()}")
    return found


def test_protocol_branches_are_found_outside_the_protocol_folders(tmp_path):
    for folder in ("parties", "coordinator/protocols"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "parties" / "run.py").write_text('if joined.protocol == "mpc":\n    pass\n')
    (tmp_path / "coordinator" / "protocols" / "mpc.py").write_text('if spec.protocol == "mpc":\n    pass\n')
    assert protocol_branches(tmp_path) == ['parties/run.py:1: if joined.protocol == "mpc":']


def test_few_lines_outside_the_protocol_folders_branch_on_the_protocol():
    found = protocol_branches(ROOT)
    assert len(found) <= MAX_PROTOCOL_BRANCHES, "\n".join(found)


def test_the_report_reads_a_summary_not_the_session():
    """ppcsim.report builds from coordinator.summary.SessionSummary and the session's outcome and uploads, as
    given: no module of it imports coordinator.session (whose attributes would then be its input)."""
    graph = imports(ROOT)
    readers = sorted(a for a, targets in graph.items()
                     if a.startswith("ppcsim.report") and "coordinator.session" in targets)
    assert readers == []
