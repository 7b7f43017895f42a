"""``ppc spu-env``: create (or check) the separate environment that MPC sessions with ``engine = "spu"`` run SPU in.

SPU pins numpy < 2 and publishes wheels for CPython 3.10 and 3.11 only, so it
cannot share ppc-sim's environment; ``parties.spu_env`` says where the party
processes look for it. This command makes it there:
``python3.11 -m venv DIR && DIR/bin/pip install spu==0.9.5``, after checking
the CPU (AVX and AES-NI) and the Python version, and refusing with what to do
where SPU cannot install.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from parties import spu_env
from ppcsim.errors import RunError, UsageError


def python_version(python: str) -> tuple[int, int] | None:
    """The (major, minor) version of the interpreter ``python``, None if it does not run."""
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return (int(words[0]), int(words[1])) if out.returncode == 0 and len(words) == 2 else None


def find_python(named: str | None) -> str:
    """The interpreter to build the environment with: ``named``, else this one if SPU supports it, else
    python3.11 or python3.10 on the PATH; UsageError naming what to do if none fits."""
    candidates = [named] if named else [sys.executable, "python3.11", "python3.10"]
    seen = []
    for candidate in candidates:
        path = candidate if os.path.sep in candidate else shutil.which(candidate)
        version = python_version(path) if path else None
        if version is None:
            seen.append(f"{candidate}: not found")
            continue
        problem = spu_env.python_problem(version)
        if problem is None:
            return str(path)
        seen.append(f"{candidate}: Python {version[0]}.{version[1]}")
    raise UsageError(f"SPU {spu_env.SPU_VERSION} installs on CPython 3.10 or 3.11 only ({'; '.join(seen)}): install "
                     "one (for example with your system's packages or pyenv) and run `ppc spu-env --python "
                     "python3.11`, or use engine = \"mpyc\"")


def cmd_spu_env(args: argparse.Namespace) -> int:
    machine = spu_env.machine_problem()
    if machine:
        raise RunError(machine)
    home = Path(args.path).expanduser().resolve() if args.path else spu_env.default_home()
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    hint = "" if home == spu_env.default_home() and not os.environ.get(spu_env.VARIABLE) else (
        f"; set {spu_env.VARIABLE}={python} for ppc to use it")
    if args.check:
        problem = spu_env.problem(python)
        if problem:
            raise RunError(problem)
        print(f"ppc spu-env: SPU {spu_env.SPU_VERSION} is ready at {home}{hint}", file=sys.stderr)
        return 0
    base = find_python(args.python)
    if not python.exists():
        print(f"ppc spu-env: creating {home} with {base}", file=sys.stderr)
        subprocess.run([base, "-m", "venv", str(home)], check=True)
    print(f"ppc spu-env: installing {' '.join(spu_env.REQUIREMENTS)} (about 1 GB with jax and jaxlib)",
          file=sys.stderr)
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                           *spu_env.REQUIREMENTS])
    if done.returncode != 0:
        raise RunError(f"pip could not install {' '.join(spu_env.REQUIREMENTS)} into {home} (its messages are "
                       "above); SPU ships wheels for Linux (x86-64, aarch64) and macOS (arm64) only")
    problem = spu_env.probe(str(python))
    if problem:
        raise RunError(problem)
    print(f"ppc spu-env: SPU {spu_env.SPU_VERSION} is ready at {home}{hint}", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    """The ``spu-env`` subcommand."""
    env = sub.add_parser("spu-env", help="create the separate environment that engine = \"spu\" runs SPU in",
                         description="Create a Python 3.10/3.11 virtual environment with spu=="
                         f"{spu_env.SPU_VERSION} (about 1 GB) where MPC sessions with engine = \"spu\" find it "
                         f"(default {spu_env.default_home()}; {spu_env.VARIABLE} names another interpreter).")
    env.add_argument("--python", metavar="PYTHON",
                     help="the CPython 3.10 or 3.11 to build it with (default: this one if it fits, else python3.11 "
                     "or python3.10 on the PATH)")
    env.add_argument("--path", metavar="DIR",
                     help="where to create it (default: the ppc-sim/spu folder in your user data folder)")
    env.add_argument("--check", action="store_true", help="only check that SPU loads there")
    env.set_defaults(func=cmd_spu_env)
