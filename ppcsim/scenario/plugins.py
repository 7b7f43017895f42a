"""Plug-ins a process loads before it reads a scenario: modules named by ``PPC_PLUGINS``.

A protocol (docs/writing-a-protocol.md), a disguise, an algorithm or a
source kind is registered by a line that runs when its module is imported.
``ppc run`` starts the coordinator and every party as processes of their
own, and each reads the scenario: ``PPC_PLUGINS`` (module names, separated
by commas, importable from the process's ``sys.path``/``PYTHONPATH``) is
inherited by each, and every process imports those modules before it
checks the scenario, so that the scenario may name what they register.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping

#: The environment variable naming the plug-in modules.
VARIABLE = "PPC_PLUGINS"


def plugin_modules(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The module names ``PPC_PLUGINS`` gives, in its order (none when unset or empty)."""
    return [name.strip() for name in environ.get(VARIABLE, "").split(",") if name.strip()]


def load_plugins(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Import every module ``PPC_PLUGINS`` names (once: Python keeps them); a message per module that cannot
    be imported, naming it and why."""
    problems = []
    for name in plugin_modules(environ):
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - told as a scenario error, not a traceback
            problems.append(f"{VARIABLE} names module '{name}', which cannot be imported ({type(exc).__name__}: {exc})")
    return problems
