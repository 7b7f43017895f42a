"""The documentation site: built from docs/ with Sphinx as the README says, with no warning, every internal link
resolving, the reference pages and the API reference there, a search box, and the tutorials' figures shown in
a real browser (headless Chromium, as the report page is checked).

The site is built once per test session (the ``docs_site`` fixture, which also
executes the tutorials for tests/docs/test_tutorials.py).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from conftest import browser, probe

PAGES = ("index", "readme", "api", "report", "protocol", "secure-aggregation", "methods", "comparison",
         "reproduction", "scaling", "cluster", "benchmarks", "tutorials/index", "tutorials/01-table1-three-parties",
         "tutorials/02-attacks", "tutorials/03-costs", "reference/index", "search")
#: Figures each executed tutorial shows (01 prints tables only).
FIGURES = {"02-attacks": 6, "03-costs": 2}


class Links(HTMLParser):
    """Every href and src of a page, and every id it defines."""

    def __init__(self):
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"])
        for key in ("href", "src"):
            if found.get(key) and (tag != "link" or key == "href"):
                self.targets.append(found[key])


def parsed(path: Path) -> Links:
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


def test_the_site_builds_with_no_warning(docs_site):
    html, build = docs_site
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-5000:]
    warnings = [line for line in build.stderr.splitlines() if re.search(r"WARNING|ERROR", line)
                and "[IPKernelApp]" not in line]  # the kernel's own log line on its local transport
    assert warnings == []
    for page in PAGES:
        assert (html / f"{page}.html").is_file(), page


def test_every_internal_link_and_anchor_resolves(docs_site):
    html, _ = docs_site
    pages = sorted(p for p in html.rglob("*.html") if "_static" not in p.parts)  # _static: the theme's templates
    links = {path: parsed(path) for path in pages}  # each page read and parsed once
    ids = {path: found.ids for path, found in links.items()}
    broken = []
    for path in pages:
        for target in links[path].targets:
            parts = urlsplit(target)
            if parts.scheme or target.startswith(("//", "mailto:", "javascript:")):
                continue
            file = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if file.is_dir():
                file = file / "index.html"
            if not file.exists():
                broken.append(f"{path.relative_to(html)}: {target}")
            elif parts.fragment and file.suffix == ".html" and unquote(parts.fragment) not in (
                    ids[file] if file in ids else parsed(file).ids):
                broken.append(f"{path.relative_to(html)}: {target} (no such anchor)")
    assert broken == []


def test_reference_pages_api_and_search_box(docs_site):
    html, _ = docs_site
    api = (html / "reference" / "generated" / "ppcsim.api.html").read_text(encoding="utf-8")
    assert 'id="ppcsim.api.simulate"' in api and 'id="ppcsim.api.Run"' in api
    # numpydoc rendered the Parameters section of simulate's docstring
    assert "Parameters" in api and "processes" in api
    for module in ("ppcsim.scenario.load", "ppcsim.report.model", "parties.methods", "coordinator.clustering"):
        assert (html / "reference" / "generated" / f"{module}.html").is_file(), module
    index = (html / "index.html").read_text(encoding="utf-8")
    assert 'action="search.html"' in index  # the search box on every page
    assert (html / "searchindex.js").stat().st_size > 10_000
    for page, words in (("protocol", "Join"), ("report", "report.json"), ("reproduction", "Table 1"),
                        ("readme", "Quick start")):
        assert words in (html / f"{page}.html").read_text(encoding="utf-8"), page


def test_tutorial_pages_show_their_figures_in_chromium(docs_site, tmp_path):
    chromium = browser()
    html, _ = docs_site
    for name, count in FIGURES.items():
        page = html / "tutorials" / f"{name}.html"
        # the probe's copy sits beside the page, so that the figures' relative paths resolve as on the page
        seen = probe(chromium, page, tmp_path, copy=page.with_name(f"probe-{name}.html"))
        assert seen["errors"] == [], name
        figures = [i for i in seen["images"] if "_images/" in i["src"]]
        assert len(figures) == count, (name, seen["images"])
        for image in figures:
            assert image["complete"] and image["width"] > 200 and image["height"] > 100, (name, image)
