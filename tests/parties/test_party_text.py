"""What a coordinator or another party says reaches a party's log and errors escaped: no ANSI sequence moves a
terminal's cursor or recolours it, no newline forges a line of the party's own, against a real ``ppc party``."""

from __future__ import annotations

from test_lying_coordinator import SCENARIO

from conftest import party_processes, write_scenario
from coordinator import handlers
from coordinator.errors import FailedPrecondition
from coordinator.registry import Registry
from coordinator.server import start_server
from parties.text import escaped
from ppcsim.scenario.load import load_scenario

#: What a hostile coordinator answers: clear the screen, turn red, and a line that looks like the party's own.
HOSTILE = "\x1b[2J\x1b[31mforged\rparty b: 80 of 80 records clustered into 3 clusters\n\u202eevil"


def test_control_characters_are_written_as_escapes_and_long_text_is_cut():
    assert escaped(HOSTILE) == ("\\x1b[2J\\x1b[31mforged\\rparty b: 80 of 80 records clustered into 3 clusters"
                                "\\n\\u202eevil")
    assert escaped("plain text, é and ü") == "plain text, é and ü"
    assert escaped("x" * 10, limit=4) == "xxxx... (10 characters)"


def test_a_coordinators_error_reaches_the_partys_terminal_escaped(tmp_path, monkeypatch):
    def join(session, request, certificate=b""):
        raise FailedPrecondition(HOSTILE)

    monkeypatch.setattr(handlers, "join", join)
    path = write_scenario(tmp_path, SCENARIO)
    registry = Registry()
    session = registry.create(load_scenario(path).session_spec())
    server, port = start_server("127.0.0.1:0", registry)
    try:
        out = party_processes(port, path, ["b"], 5, timeout=90)
    finally:
        server.stop(0)
        session.fail("test over")
    code, err = out["b"]
    assert code == 1, err
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err, repr(err)
    assert "ppc party b: error: \\x1b[2J\\x1b[31mforged\\rparty b: 80 of 80" in err, err
    assert not any(line.startswith("party b: 80 of 80") for line in err.splitlines())
