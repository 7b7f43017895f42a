"""The declarative tables that every scenario section, every method and the clustering are checked against.

One ``Param`` per field: its type, default, allowed values and bounds. A
table of them checks a whole TOML table at once (``check_table``), names every
unknown field with the closest known one ("did you mean"), and every message
has one shape: ``'<field>' must be <what>, got <value>``. The scenario loader
(all roles), the sweep (each swept key), the disguise methods and the
clustering settings all use these, so a field is described once.

It sits in ``protos`` because parties and coordinator both read scenario
tables and meet only here.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """One field of a table as the scenario file gives it.

    ``type`` is int, float (any finite number), str, bool or list (of
    strings); ``minimum`` and ``maximum`` are inclusive bounds, ``above`` and ``below`` exclusive ones; ``pattern`` a
    regular expression a string must match in full. With ``rule``, every
    violation reads ``'<name>' must be <rule>, got <value>``.
    """

    type: type
    default: Any = None
    required: bool = False
    choices: tuple | None = None
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    below: float | None = None
    pattern: str | None = None
    rule: str = ""
    doc: str = ""

    def check(self, name: str, value: Any) -> str | None:
        """Return an error message for ``value``, or None when it is valid."""
        problem = self._problem(value)
        if problem is None:
            return None
        hint = ""
        if self.choices is not None and isinstance(value, str) and value not in self.choices:
            close = closest(value, tuple(map(str, self.choices)))
            hint = f" (did you mean '{close}'?)" if close else ""
        return f"'{name}' must be {self.rule or problem}, got {value!r}{hint}"

    def _problem(self, value: Any) -> str | None:
        if self.type is int and (isinstance(value, bool) or not isinstance(value, int)):
            return "an integer"
        if self.type is float and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (isinstance(value, float) and not math.isfinite(value))
        ):
            return "a finite number"
        if self.type is str and not isinstance(value, str):
            return "a string"
        if self.type is bool and not isinstance(value, bool):
            return "true or false"
        if self.type is list and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return "a list of column names"
        if self.choices is not None and value not in self.choices:
            return f"one of {', '.join(map(str, self.choices))}"
        if self.minimum is not None and value < self.minimum:
            return f"at least {self.minimum}"
        if self.above is not None and value <= self.above:
            return f"more than {self.above}"
        if self.maximum is not None and value > self.maximum:
            return f"at most {self.maximum}"
        if self.below is not None and value >= self.below:
            return f"less than {self.below}"
        if self.pattern is not None and not re.fullmatch(self.pattern, value):
            return f"of the form {self.pattern}"
        return None


def closest(key: str, known: list[str] | tuple[str, ...]) -> str | None:
    """The known name ``key`` most likely misspells, or None: one that differs only in case first (``J`` for
    ``j``), else the closest by difflib's ratio (at least 0.6), compared without case."""
    key = str(key)
    same = [k for k in known if k.lower() == key.lower()]
    if same:
        return same[0]
    lowered = {k.lower(): k for k in reversed(list(known))}
    close = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def unknown(key: str, known: list[str] | tuple[str, ...]) -> str:
    """``unknown field 'x' (known: a, b, c; did you mean 'y'?)``, the suggestion when one is close."""
    close = closest(key, known)
    hint = f"; did you mean '{close}'?" if close else ""
    return f"unknown field '{key}' (known: {', '.join(known)}{hint})"


def check_table(table: Mapping[str, Any], params: Mapping[str, Param], where: str = "",
                extra: tuple[str, ...] = ()) -> list[str]:
    """Every problem of ``table`` against ``params``: unknown fields (``extra`` are known but checked
    elsewhere), invalid values and missing required ones, each prefixed with ``where`` (e.g. ``"[security]: "``)."""
    known = (*params, *extra)
    errors = [f"{where}{unknown(k, known)}" for k in table if k not in known]
    for key, param in params.items():
        if key in table:
            problem = param.check(key, table[key])
            if problem:
                errors.append(f"{where}{problem}")
        elif param.required:
            errors.append(f"{where}'{key}' is missing" + (f" ({param.doc})" if param.doc else ""))
    return errors


def defaults(params: Mapping[str, Param]) -> dict[str, Any]:
    """Each optional field's default."""
    return {k: p.default for k, p in params.items() if not p.required}
