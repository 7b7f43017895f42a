"""Where SPU runs: its own virtual environment, found by this process, checked before a session starts.

SPU (PyPI ``spu``, SecretFlow, Apache-2.0) ships wheels for CPython 3.10 and
3.11 only, pins ``numpy < 2`` and ``jax <= 0.4.34`` (about 1 GB installed),
and refuses to load on a CPU without AVX and AES-NI. The rest of ppc-sim
runs on numpy 2, so SPU lives in an environment of its own, and a party's
process starts its SPU program (``parties/spu_kmeans.py``) with that
environment's interpreter:

- ``PPC_SPU_PYTHON`` names the interpreter if set;
- otherwise ``$XDG_DATA_HOME/ppc-sim/spu/bin/python`` (``~/.local/share/...``
  without ``XDG_DATA_HOME``), where ``ppc spu-env`` creates it.

``problem()`` says why SPU cannot run here and what to do, or None; ``ppc
run``, ``ppc party`` and ``ppc coordinator`` ask it before an
``engine = "spu"`` session starts (the parties ``ppc run`` starts, once it
found none: ``checked``). The check starts SPU's interpreter; once it
passed, it is kept (``remember``, in ``$XDG_CACHE_HOME/ppc-sim``) for as
long as the environment and the CPU are unchanged (``fingerprint``).
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from pathlib import Path

#: The SPU release the program is written and measured against.
SPU_VERSION = "0.9.5"
#: What ``ppc spu-env`` installs into the environment.
REQUIREMENTS = (f"spu=={SPU_VERSION}",)
#: CPython versions SPU publishes wheels for.
PYTHONS = ((3, 10), (3, 11))
#: The environment variable naming the SPU environment's interpreter.
VARIABLE = "PPC_SPU_PYTHON"
#: CPU flags (``/proc/cpuinfo``) SPU's library needs on x86-64.
CPU_FLAGS = ("avx", "aes")
#: How long checking the environment may take (it imports jax).
CHECK_SECONDS = 120.0
#: Set by ``ppc run`` once its own check passed, for the party processes it starts on this machine (they inherit
#: its environment): the interpreter it checked, which they then need not check again (``problem``).
CHECKED = "PPC_SPU_CHECKED"


def default_home() -> Path:
    """Where ``ppc spu-env`` creates the environment unless told otherwise."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "ppc-sim" / "spu"


def interpreter() -> Path:
    """The SPU environment's Python: ``PPC_SPU_PYTHON``, else the default environment's."""
    named = os.environ.get(VARIABLE)
    if named:
        return Path(named)
    return default_home() / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@functools.lru_cache(maxsize=1)
def _cpuinfo() -> str | None:
    """The text of /proc/cpuinfo, None where there is none; read once (``missing_cpu_flags`` and ``fingerprint``
    both need it, and it does not change while this process runs)."""
    path = Path("/proc/cpuinfo")
    return path.read_text(errors="replace") if path.exists() else None


def cpu_flags(cpuinfo: str) -> set[str]:
    """The CPU flags that ``cpuinfo`` (the text of /proc/cpuinfo) lists."""
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        if line.split(":")[0].strip() == "flags":
            flags.update(line.split(":", 1)[1].split())
    return flags


def missing_cpu_flags(cpuinfo: str | None = None) -> list[str]:
    """The CPU flags SPU needs that this machine lacks (x86-64 Linux; elsewhere none are checked)."""
    if cpuinfo is None:
        if platform.machine().lower() not in ("x86_64", "amd64") or (cpuinfo := _cpuinfo()) is None:
            return []
    flags = cpu_flags(cpuinfo)
    return [f for f in CPU_FLAGS if f not in flags]


def setup_hint() -> str:
    """What a user runs to create the environment."""
    return ("create it with `ppc spu-env` (a Python 3.10 or 3.11 virtual environment with spu=="
            f"{SPU_VERSION}, about 1 GB, at {default_home()}), or point {VARIABLE} at the Python of an environment "
            f"where `pip install spu=={SPU_VERSION}` succeeded")


def machine_problem(cpuinfo: str | None = None) -> str | None:
    """Why SPU cannot run on this machine at all (its CPU), or None."""
    missing = missing_cpu_flags(cpuinfo)
    if missing:
        return (f"SPU needs a CPU with AVX and AES-NI; this one lacks {', '.join(missing)} (/proc/cpuinfo flags): "
                "use engine = \"mpyc\"")
    return None


#: What ``probe`` runs in SPU's environment: load SPU's library (the C++ runtime, which checks the CPU) and its
#: runtime's Python without the package's ``__init__``, which imports jax (seconds, on every party's critical
#: path); jax itself is only looked for (the programs import it to compile, parties/spu_kmeans.py).
PROBE = (
    "import importlib.util as u, sys, types\n"
    "found = u.find_spec('spu')\n"
    "if found is None: sys.exit('No module named spu')\n"
    "package = types.ModuleType('spu'); package.__path__ = list(found.submodule_search_locations)\n"
    "sys.modules['spu'] = package\n"
    "import numpy, spu.libspu, spu.api\n"
    "from spu.version import __version__\n"
    "if u.find_spec('jax') is None: sys.exit('No module named jax')\n"
    "print(sys.version_info[0], sys.version_info[1], __version__)\n"
)


@functools.lru_cache(maxsize=4)
def probe(python: str) -> str | None:
    code = PROBE
    try:
        run = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=CHECK_SECONDS,
                             env={**os.environ, "JAX_PLATFORMS": "cpu"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"SPU's interpreter {python} does not run ({exc})"
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        return f"SPU does not load with {python}: {last}"
    return None


def problem(python: Path | None = None) -> str | None:
    """Why an ``engine = "spu"`` session cannot run from this process (with the SPU environment's interpreter
    ``python``, by default ``interpreter()``), with what to do; None if it can."""
    machine = machine_problem()
    if machine:
        return machine
    named = python is None and bool(os.environ.get(VARIABLE))
    python = python or interpreter()
    if not python.exists():
        source = (f"{VARIABLE} names {python}, which does not exist" if named
                  else f"there is no SPU environment at {python.parent.parent}")
        return f"{source}: {setup_hint()}"
    if os.environ.get(CHECKED) == str(python):  # ppc run, which started this party, checked it a moment ago
        return None
    mark = fingerprint(python)
    if mark is not None and mark == passed():  # this environment passed, unchanged since, on this CPU
        return None
    found = probe(str(python))
    if found is None and mark is not None:
        remember(mark)
    return f"{found}; {setup_hint()}" if found else None


def check_file() -> Path:
    """Where the fingerprint of the SPU environment that last passed the check is kept (``remember``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "ppc-sim" / "spu-check.txt"


def fingerprint(python: Path) -> str | None:
    """What the check of ``python``'s SPU environment depends on, as one line: the interpreter (its real path,
    size and time), its site-packages folder, SPU's package folder and every file of SPU's native library there
    (sizes and times: an install or removal changes them), the flags of this CPU (the library refuses to load
    on a CPU without the ones it needs), the SPU release and the check's code. None where SPU's package
    folder is not where a virtual environment keeps it (the check then runs every time)."""
    try:
        real = python.resolve()
        packages = sorted(python.parent.parent.glob("lib/python3*/site-packages"))
        spu = packages[0] / "spu" if len(packages) == 1 else None
        if spu is None or not spu.is_dir():
            return None
        native = sorted(spu.glob("lib*.so")) + sorted(spu.glob("lib*.pyd"))
        if not native:
            return None
        parts = [str(real), _stat(real), str(packages[0]), _stat(packages[0]), _stat(spu),
                 *(f"{f.name}:{_stat(f)}" for f in native), SPU_VERSION, _cpu_flags(), PROBE]
    except OSError:
        return None
    import hashlib

    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _stat(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _cpu_flags() -> str:
    """This CPU's flags as one line for ``fingerprint`` (the machine's name where /proc/cpuinfo lists none)."""
    try:
        text = _cpuinfo()
    except OSError:
        return platform.machine()
    return " ".join(sorted(cpu_flags(text or ""))) or platform.machine()


def passed() -> str | None:
    """The fingerprint ``remember`` kept, or None."""
    try:
        return check_file().read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def remember(mark: str) -> None:
    """Keep ``mark``, the fingerprint of an environment that passed the check: the next check of it, unchanged
    on this CPU, need not start SPU's interpreter (a fifth of a second before every SPU session). Nothing if
    it cannot be written."""
    path = check_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(mark + "\n", encoding="ascii")
        os.replace(tmp, path)
    except OSError:
        pass


def checked(python: Path | None = None) -> None:
    """Say to the processes this one starts from now on (in its environment, ``CHECKED``) that ``problem`` found
    no problem with ``python`` (by default ``interpreter()``): they skip the check, which starts SPU's interpreter
    (a fifth of a second of CPU each, on the way of every party to its MPC)."""
    os.environ[CHECKED] = str(python or interpreter())


def python_problem(version: tuple[int, int] = sys.version_info[:2]) -> str | None:
    """Why SPU cannot install under a Python of ``version``, or None."""
    if tuple(version) in PYTHONS:
        return None
    return (f"SPU {SPU_VERSION} publishes wheels for CPython 3.10 and 3.11 only, not {version[0]}.{version[1]}: "
            "install Python 3.11 and run `ppc spu-env --python python3.11`")
