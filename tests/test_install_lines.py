"""Every install line the README and docs/ give is one .ci/install-lines installs alone and checks (the test
extra's is the README's test command, which .ci/run runs as it is printed: tests/test_tiers.py)."""

from __future__ import annotations

import re

from conftest import ROOT

#: ``pip install -e .``, ``pip install -e '.[docs]' jupyterlab``: the extra and any packages after it.
LINE = re.compile(r"pip install -e (?:\.|'\.(\[[a-z,]+\])')((?: [A-Za-z][\w.-]*)*)")


def documented() -> set[str]:
    found = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for extra, packages in LINE.findall(page.read_text(encoding="utf-8")):
            found.add(f"{extra}{packages}")
    return found


def checked_in_ci() -> set[str]:
    text = (ROOT / ".ci" / "install-lines").read_text(encoding="utf-8")
    block = text[text.index("LINES=("):text.index("\n)\n", text.index("LINES=("))]
    return {m.partition("|")[2] for m in re.findall(r'^\s+"([^"]*)"', block, re.M)}


def test_every_documented_install_line_is_installed_alone_and_checked_in_ci():
    lines = documented()
    assert {"", "[mpc]", "[dask]", "[keel]", "[docs]", "[docs] jupyterlab", "[test]"} <= lines  # the reader works
    assert lines - {"[test]"} <= checked_in_ci(), f"not in .ci/install-lines: {sorted(lines - {'[test]'} - checked_in_ci())}"
