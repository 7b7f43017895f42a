"""The site's landing page gives what a newcomer needs first: the README's start command, word for word, and how to
serve the built site so that its search box shows excerpts (opened as files, it shows none)."""

import re

from conftest import ROOT

SERVE = ".venv/bin/python -m http.server -d docs/_build/html 8000"


def _commands(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def test_the_landing_page_starts_as_the_readme_does_and_says_how_to_serve_the_site():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    start = _commands(readme)[0]
    assert start.endswith("ppc demo") and _commands(index)[0] == start
    assert SERVE in _commands(index) and f"`{SERVE}`" in readme
    assert "http://localhost:8000" in index
