"""Sphinx configuration of dpcheck's documentation.

Build: ``./dev sphinx-build -W --keep-going -b html docs docs/_build/html`` (warnings are errors;
``tests/test_docs.py`` builds it the same way and runs every example of the pages).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's dpcheck (and algorithms/, which examples import)

import dpcheck  # noqa: E402

project = "dpcheck"
author = "the dpcheck developers"
copyright = "the dpcheck developers"
release = dpcheck.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# The API reference lists the public names itself (api.md); no generated stub files are written
# into the source tree.
autosummary_generate = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

html_theme = "alabaster"
html_title = f"dpcheck {release}"
html_static_path: list[str] = []
# wide enough for the examples' 99-character lines
html_theme_options = {"page_width": "1180px", "sidebar_width": "230px", "code_font_size": "0.75em"}


def _module_sections_as_rubrics(app, what, name, obj, options, lines):
    """Module docstrings use numpydoc section headings ("References" underlined with dashes),
    which numpydoc leaves as reST sections there: every module page would then define a section
    labelled "references". Render them as rubrics, as numpydoc does for functions and classes."""
    if what != "module":
        return
    i = 0
    while i + 1 < len(lines):
        title, rule = lines[i].strip(), lines[i + 1].strip()
        if title and rule and set(rule) == {"-"} and len(rule) >= len(title):
            lines[i:i + 2] = [f".. rubric:: {title}", ""]
        i += 1


def setup(app):
    app.connect("autodoc-process-docstring", _module_sections_as_rubrics)
