"""The optional packages, and the extra of ppc-sim that installs each.

A scenario that needs one of them is refused before any process starts, with
the install line that fixes it, instead of failing later inside a party
process whose log is the only place the missing module is named. It sits in
``protos`` because the scenario loader, the parties and the coordinator all
check it.
"""

from __future__ import annotations

import importlib.util
from typing import NamedTuple

__all__ = ["EXTRAS", "Extra", "missing"]


class Extra(NamedTuple):
    """An optional package: the module it provides, the extra that installs it, and what needs it."""

    module: str
    extra: str
    needed_for: str


#: By extra's name.
EXTRAS = {
    "mpc": Extra("mpyc", "mpc", 'protocol = "mpc"'),
}


def missing(extra: str, needed_for: str | None = None) -> str | None:
    """Why ``extra``'s package cannot be imported here and how to install it, or None when it can;
    ``needed_for`` says what needs it, when it is not the extra's usual reason."""
    spec = EXTRAS[extra]
    if importlib.util.find_spec(spec.module) is not None:
        return None
    return (f"{needed_for or spec.needed_for} needs the package '{spec.module}', which is not installed in this Python "
            f"environment; install it with: pip install 'ppc-sim[{spec.extra}]' (from a checkout: "
            f"pip install -e '.[{spec.extra}]')")
