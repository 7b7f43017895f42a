"""Sphinx configuration of ppc-sim's documentation site (``sphinx-build -W -b html docs docs/_build/html``).

The pages are the Markdown files of this folder (MyST) and the README; the
tutorials (``tutorials/*.ipynb``, stored without outputs) are executed at
build time by myst-nb and rendered with their outputs and figures; the API
reference is generated from the numpydoc docstrings (autodoc, autosummary).
"""

from __future__ import annotations

import sys
from importlib.metadata import version as _version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the packages, when the site is built from a clone without installing it

project = "ppc-sim"
author = "the ppc-sim authors"
copyright = "ppc-sim authors, MIT licence"
release = _version("ppc-sim")

extensions = [
    "myst_nb",  # Markdown pages (MyST) and executed notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.mathjax",
]

# ".rst" first: autosummary writes its generated pages in the first suffix
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints"]

# -- Markdown -------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3  # '#section' links between pages resolve to their headings

# -- notebooks: executed at every build, in a fresh folder (as a reader who opens one from anywhere) ---------
nb_execution_mode = "force"
nb_execution_in_temp = True
nb_execution_timeout = 300
nb_execution_raise_on_error = True  # a tutorial whose cell raises fails the build
nb_merge_streams = True

# -- API reference ------------------------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # autodoc lists the members; numpydoc would list them again
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- HTML ---------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ppc-sim {release}"
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "search_bar_text": "Search the docs",
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# the section navigation where a section has pages of its own; none beside a single page
html_sidebars = {"*": [], "tutorials/**": ["sidebar-nav-bs"], "reference/**": ["sidebar-nav-bs"]}
html_static_path = ["_static"]
html_css_files = ["wide-code.css"]  # the article as wide as the page, long code lines wrapped
html_extra_path = ["report.schema.json"]
html_show_sourcelink = False

#: Links of the README (included as the site's overview) to files outside docs/, and the page of the site that
#: shows each (links into docs/ are rewritten by the include's :relative-docs: option).
README_LINKS = {"](bench/README.md)": "](benchmarks.md)"}


def _readme_links(app, relative_path, parent_docname, content):
    """Point the README's links outside docs/ at the site's pages for them."""
    if Path(relative_path).name == "README.md":
        for old, new in README_LINKS.items():
            content[0] = content[0].replace(old, new)


def setup(app):
    app.connect("include-read", _readme_links)
