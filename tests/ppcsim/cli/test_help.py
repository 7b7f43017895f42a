"""``ppc <command> --help`` says what each option is for, and lists no option the command ignores."""

from __future__ import annotations

import argparse

from ppcsim.cli.parser import build_parser


def helps() -> dict[str, str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p.format_help() for name, p in sub.choices.items()}


def test_the_demo_offers_no_html_only_since_it_always_writes_the_page():
    text = helps()["demo"]
    assert "--no-html" in text and "--html " not in text.replace("--no-html", "")
    assert "--html" in helps()["run"]


def test_every_option_of_every_command_is_described():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    bare = [f"ppc {name} {action.option_strings[0]}" for name, p in sub.choices.items() for action in p._actions
            if action.option_strings and not action.help and action.help != argparse.SUPPRESS]
    assert bare == []
