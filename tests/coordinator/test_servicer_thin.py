"""The servicer adapts a call to a handler and maps its errors: it reads no stream itself (coordinator.wire
does), and nothing outside the session writes the session's state (the session's own methods do)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
#: What reading a stream takes: its next message, a deadline over it, a queue between coroutines.
STREAM_READING = {"__anext__", "wait", "wait_for", "Queue", "ensure_future", "run_coroutine_threadsafe"}


def stream_reading(source: str) -> list[str]:
    """The stream-reading calls in ``source`` (``STREAM_READING``, as names or attributes), sorted."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in STREAM_READING:
                found.add(name)
    return sorted(found)


def session_writes(source: str) -> list[str]:
    """Every assignment in ``source`` to an attribute of ``session`` or to an item of one (``session.x = ``,
    ``session.x[k] = ``, ``session.x += ``), as its unparsed target."""
    out = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id == "session" and target is not root:
                out.append(ast.unparse(target))
    return out


def test_the_checks_find_what_they_look_for():
    assert stream_reading("async def f(it):\n    x = await it.__anext__()\n    q = asyncio.Queue()\n") == [
        "Queue", "__anext__"]
    assert session_writes("def f(session, p):\n    session.protection[p] = {}\n    session.state = 1\n"
                          "    session.ledger.total += 3\n    other.x = session.y\n") == [
        "session.protection[p]", "session.state", "session.ledger.total"]


def test_the_servicer_reads_no_stream():
    assert stream_reading((ROOT / "coordinator" / "servicer.py").read_text(encoding="utf-8")) == []


def test_nothing_outside_the_session_writes_its_state():
    writes = {str(p.relative_to(ROOT)): w for folder in ("coordinator", "ppcsim")
              for p in sorted((ROOT / folder).rglob("*.py")) if p.name != "session.py" or p.parent.name != "coordinator"
              if (w := session_writes(p.read_text(encoding="utf-8")))}
    assert writes == {}
