"""The rules every section of the report follows (the package's docstring states them): ``Section``, which
reads, checks and writes one, ``parse`` for a typed value, ``ABSENT`` for a key a run does not write, and how
a section is described in the JSON Schema."""

from __future__ import annotations

import enum
import re
import types
from collections.abc import Iterator
from dataclasses import fields
from typing import Any, ClassVar, Literal, Self, TypeVar, Union, get_args, get_origin, get_type_hints


class _Absent(enum.Enum):
    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


#: A key this run does not write (not the same as ``null``).
ABSENT = _Absent.ABSENT
#: The type of a key that only some runs write: ``int | Absent``.
Absent = Literal[_Absent.ABSENT]

T = TypeVar("T")

#: The version of the report's layout; the schema's ``$id`` names it, and a report says it in ``format``.
#: 2: a party's wire bytes down are ``bytes.wire_down``, beside ``bytes.wire`` (up); format 1 held them in
#: ``network.wire_down``, which :meth:`Report.from_json` still reads.
FORMAT = 2
SCHEMA_ID = f"urn:ppc-sim:report:v{FORMAT}"


def given(value: T | _Absent, default: Any = None) -> T | Any:
    """``value``, or ``default`` when the report does not have it (``ABSENT``)."""
    return default if value is ABSENT else value


class ReportError(ValueError):
    """A report that does not have the report's shape: ``field`` names where (``parties[0].bytes.wire``)."""

    def __init__(self, where: str, problem: str):
        super().__init__(f"{where or 'report'}: {problem}")
        self.field, self.problem = where or "report", problem


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "text", bool: "a boolean", type(None): "null",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Section:
    """A section of the report; subclasses are keyword-only dataclasses (see the module's rules)."""

    #: Whether keys this section does not declare are kept (in ``extra``) rather than refused.
    OPEN: ClassVar[bool] = False

    def to_json(self) -> dict[str, Any]:
        """This section as JSON-ready values (dicts, lists, numbers, text), keys in field order."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass
            value = getattr(self, f.name)
            if f.name != "extra" and value is not ABSENT:
                out[f.name] = _encode(value)
        for key, value in getattr(self, "extra", {}).items():
            out[key] = _encode(value)
        return out

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> Self:
        """The section held by ``data`` (JSON values); ReportError naming the first field that is wrong."""
        if not isinstance(data, dict):
            raise ReportError(path, f"expected an object ({cls.__name__}), got {_kind(data)}")
        hints = _hints(cls)
        kwargs: dict[str, Any] = {}
        for name, tp in hints.items():
            if name == "extra":
                continue
            if name not in data:
                if not _absentable(tp):
                    raise ReportError(_at(path, name), "missing (a required field)")
                continue
            kwargs[name] = parse(tp, data[name], _at(path, name))
        unknown = {k: v for k, v in data.items() if k not in hints or k == "extra"}
        if unknown and not cls.OPEN:
            raise ReportError(_at(path, next(iter(unknown))),
                              f"not a field of {cls.__name__} (its fields: {', '.join(n for n in hints if n != 'extra')})")
        if cls.OPEN:
            kwargs["extra"] = unknown
        return cls(**kwargs)

    def __getitem__(self, key: str) -> Any:
        """The JSON value of field ``key`` (``report["parties"]``), as ``report.json`` holds it."""
        if key != "extra" and key in _hints(type(self)):
            value = getattr(self, key)
            if value is not ABSENT:
                return _encode(value)
        elif key in getattr(self, "extra", {}):
            return _encode(self.extra[key])  # type: ignore[attr-defined]  # OPEN sections have extra
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        try:
            self[key]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when this report has no such key."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        """The keys ``to_json`` writes."""
        names = [name for name in _hints(type(self)) if name != "extra" and getattr(self, name) is not ABSENT]
        return names + list(getattr(self, "extra", {}))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())


def _encode(value: Any) -> Any:
    if isinstance(value, Section):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """A section's fields and their types, in order (resolved once per class)."""
    if cls not in _HINTS:
        hints = get_type_hints(cls)
        _HINTS[cls] = {f.name: hints[f.name] for f in fields(cls)}
    return _HINTS[cls]


def _alternatives(tp: Any) -> tuple[Any, ...]:
    return get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)


def _absentable(tp: Any) -> bool:
    return Absent in _alternatives(tp)


def parse(tp: Any, value: Any, path: str = "") -> Any:
    """``value`` (JSON values) checked against the type ``tp``, sections built (``parse(Privacy, data)``);
    ReportError naming the first field that is wrong, below ``path``."""
    alternatives = [a for a in _alternatives(tp) if a is not Absent]
    if len(alternatives) > 1:
        if value is None and type(None) in alternatives:
            return None
        errors = []
        for a in alternatives:
            if a is type(None):
                continue
            try:
                return parse(a, value, path)
            except ReportError as exc:
                errors.append((exc, a))
        # the alternative that got deepest into the value, then the one sharing most of its keys, explains it best
        best = max(errors, key=lambda e: (e[0].field.count(".") + e[0].field.count("["), _overlap(e[1], value)))[0]
        if best.field != path:
            raise best
        raise ReportError(path, f"expected {' or '.join(_name(a) for a in alternatives)}, got {_kind(value)}")
    tp = alternatives[0]
    origin = get_origin(tp)
    if tp is Any:
        return value
    if isinstance(tp, type) and issubclass(tp, Section):
        return tp.from_json(value, path)
    if origin is list:
        if not isinstance(value, list):
            raise ReportError(path, f"expected an array, got {_kind(value)}")
        (item,) = get_args(tp)
        return [parse(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ReportError(path, f"expected an object, got {_kind(value)}")
        _, item = get_args(tp)
        return {k: parse(item, v, _at(path, str(k))) for k, v in value.items()}
    if origin is Literal:
        if value not in get_args(tp):
            raise ReportError(path, f"expected one of {', '.join(map(repr, get_args(tp)))}, got {value!r}")
        return value
    ok = {bool: isinstance(value, bool), int: isinstance(value, int) and not isinstance(value, bool),
          float: isinstance(value, int | float) and not isinstance(value, bool), str: isinstance(value, str),
          type(None): value is None}.get(tp)
    if ok is None:
        raise TypeError(f"report type {tp!r} at {path} is not supported")
    if not ok:
        raise ReportError(path, f"expected {_name(tp)}, got {_kind(value)}")
    return value


def _overlap(tp: Any, value: Any) -> int:
    """How many of ``value``'s keys the section type ``tp`` declares (0 for anything else)."""
    if isinstance(tp, type) and issubclass(tp, Section) and isinstance(value, dict):
        return len(set(value) & set(_hints(tp)))
    return 0


def _name(tp: Any) -> str:
    if isinstance(tp, type) and issubclass(tp, Section):
        return f"an object ({tp.__name__})"
    origin = get_origin(tp)
    if origin is list:
        return "an array"
    if origin is dict:
        return "an object"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "text", type(None): "null"}.get(tp, str(tp))


# -- the JSON Schema ---------------------------------------------------------------------------

def _docs(cls: type) -> tuple[str, dict[str, str]]:
    """A class docstring's first paragraph, and its ``Attributes`` (numpydoc) by name."""
    doc = (cls.__doc__ or "").strip("\n")
    lines = [line[4:] if line.startswith("    ") else line for line in doc.splitlines()]
    text = "\n".join(lines)
    summary = " ".join(text.split("\n\n")[0].split())
    attrs: dict[str, str] = {}
    if "Attributes\n----------" in text:
        block = text.split("Attributes\n----------", 1)[1]
        current = None
        for line in block.splitlines():
            m = re.match(r"^(\w+) :", line)
            if m:
                current = m.group(1)
                attrs[current] = ""
            elif current and line.strip():
                attrs[current] = (attrs[current] + " " + line.strip()).strip()
    return summary.replace("``", "`"), {k: v.replace("``", "`") for k, v in attrs.items()}


def _schema_of(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    alternatives = [a for a in _alternatives(tp) if a is not Absent]
    if len(alternatives) > 1:
        return {"anyOf": [_schema_of(a, defs) for a in alternatives]}
    tp = alternatives[0]
    origin = get_origin(tp)
    if tp is Any:
        return {}
    if isinstance(tp, type) and issubclass(tp, Section):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}  # reserved first: a section may (indirectly) hold itself
            defs[tp.__name__] = _section_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if origin is list:
        return {"type": "array", "items": _schema_of(get_args(tp)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(get_args(tp)[1], defs)}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    return {"type": {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}[tp]}


def _section_schema(cls: type[Section], defs: dict[str, Any]) -> dict[str, Any]:
    summary, attrs = _docs(cls)
    properties, required = {}, []
    for name, tp in _hints(cls).items():
        if name == "extra":
            continue
        prop = _schema_of(tp, defs)
        if name in attrs:
            prop = {"description": attrs[name], **prop}
        properties[name] = prop
        if not _absentable(tp):
            required.append(name)
    out: dict[str, Any] = {"type": "object", "description": summary, "properties": properties, "required": required}
    if not cls.OPEN:
        out["additionalProperties"] = False
    return out
