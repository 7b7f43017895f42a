"""Importing the project changes nothing of the importing program's process; a ``ppc`` process sets its own
settings where it starts (``ppcsim.cli.entry``), before numpy is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import ppcsim

pytestmark = pytest.mark.processes  # each test starts a fresh interpreter

#: The settings a ppc process makes for itself (ppcsim.cli.entry.process_settings).
SETTINGS = ("GRPC_VERBOSITY", "NUMPY_MADVISE_HUGEPAGE")


def _environment_after(code: str, first: str = "") -> tuple[dict[str, str], dict[str, str]]:
    """The environment of a fresh interpreter (without the settings) before and after running ``code``
    (``first`` runs before the first look)."""
    program = ("import json, os, sys\n" + first + "\nbefore = dict(os.environ)\n" + code
               + "\njson.dump([before, dict(os.environ)], sys.stdout)\n")
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    before, after = json.loads(proc.stdout)
    return before, after


MODULES = ("ppcsim", "ppcsim.api", "ppcsim.cli.parser", "parties", "parties.run", "coordinator", "coordinator.server",
           "coordinator.clustering", "protos")


def test_importing_changes_no_environment_variable():
    """Each module imported in turn, in one fresh interpreter: what each import changed of the environment (a
    change made by a module another one imported first shows at that one's import, so none goes unseen)."""
    # scikit-learn sets KMP_DUPLICATE_LIB_OK and KMP_INIT_AT_FORK when it is imported: its own doing, so it
    # is imported before the first look (the project's modules must add nothing to it)
    program = ("import importlib, json, os, sys\nimport sklearn\nchanged = {}\n"
               f"for name in {MODULES!r}:\n"
               "    seen = dict(os.environ)\n"
               "    importlib.import_module(name)\n"
               "    changed[name] = sorted(k for k in seen.keys() | os.environ.keys() if seen.get(k) != os.environ.get(k))\n"
               "json.dump(changed, sys.stdout)\n")
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {module: [] for module in MODULES}


def test_a_ppc_process_sets_its_settings_before_numpy_is_imported():
    before, after = _environment_after("from ppcsim.cli.entry import process_settings\n"
                                       "assert 'numpy' not in sys.modules, 'numpy came before the settings'\n"
                                       "process_settings()")
    assert {k: after[k] for k in SETTINGS} == {"GRPC_VERBOSITY": "NONE", "NUMPY_MADVISE_HUGEPAGE": "0"}
    assert {k: v for k, v in after.items() if k not in SETTINGS} == before


def test_a_setting_the_user_made_is_kept():
    code = "os.environ['NUMPY_MADVISE_HUGEPAGE'] = '1'\nfrom ppcsim.cli.entry import process_settings\nprocess_settings()"
    _, after = _environment_after(code)
    assert after["NUMPY_MADVISE_HUGEPAGE"] == "1" and after["GRPC_VERBOSITY"] == "NONE"


def test_python_m_ppcsim_starts_through_the_settings():
    """``python -m ppcsim`` (and the ``ppc`` script) run ``ppcsim.cli.entry.program``, which runs ``main``: its
    party processes, started the same way, inherit the settings."""
    proc = subprocess.run([sys.executable, "-m", "ppcsim", "--help"], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k not in SETTINGS})
    assert proc.returncode == 0 and "usage: ppc" in proc.stdout, proc.stderr
    with open(os.path.join(os.path.dirname(ppcsim.__file__), "__main__.py"), encoding="utf-8") as fh:
        assert "from ppcsim.cli.entry import program" in fh.read()
