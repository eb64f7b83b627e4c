"""Sphinx configuration of the symshape documentation site.

It lives in docs/_sphinx/ rather than docs/ because docs/ is also installed as the package
``symshape.docs`` (its Markdown pages are what ``symshape docs PAGE`` prints): a conf.py there
would be installed as a module. Build with ``python docs/_sphinx/build.py`` (doctest builder,
which executes every Python block of every page, then HTML; warnings are errors in both).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)                                  # the runblocks extension

project = "symshape"
author = "symshape contributors"
copyright = "symshape contributors"

extensions = [
    "myst_parser",           # the pages are Markdown, readable as such on GitHub and in `symshape docs`
    "sphinx.ext.autodoc",    # the API reference is generated from the docstrings
    "sphinx.ext.napoleon",   # docstrings with NumPy / Google sections
    "sphinx.ext.doctest",    # the builder that executes the code blocks
    "runblocks",             # every ```python / ```pycon fence becomes a doctest test
    "pictures",              # ```{symshape-picture}: drawings made by ep.draw's own code
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_sphinx", "__init__.py", "**/__pycache__"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "undoc-members": False}

# The PyData theme (NumPy's, SciPy's, pandas', JAX's look): a wide article, an outline of the
# page beside it, search; symshape.css widens the column further and wraps long code lines
html_theme = "pydata_sphinx_theme"
html_title = "symshape"
html_static_path = [os.path.join(HERE, "_static")]
html_css_files = ["symshape.css"]
html_theme_options = {
    "secondary_sidebar_items": ["page-toc"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": [],
}
# no left sidebar: the top bar holds the pages, the right one the page's outline, and the
# article gets the width between them
html_sidebars = {"**": []}

# Every page's blocks run in one namespace per page, in a scratch directory (saving and
# drawing write files) removed afterwards, with the imports every page starts from.
doctest_global_setup = """
from runblocks import run_block as _run_block
import os, shutil, tempfile
_docs_home = os.getcwd()
_docs_tmp = tempfile.mkdtemp(prefix="symshape-docs-")
os.chdir(_docs_tmp)
import numpy as np
import symshape as ss
from symshape import Dim
# what the examples write to stderr (the symshape.dynamic log a page turns on, a
# specialization warning) goes to a buffer, not into the build's output; Sphinx's own
# messages keep the stream they were given at start
import io as _io, sys as _sys
_docs_stderr, _sys.stderr = _sys.stderr, _io.StringIO()
"""
doctest_global_cleanup = """
_sys.stderr = _docs_stderr
os.chdir(_docs_home)
shutil.rmtree(_docs_tmp, ignore_errors=True)
"""
doctest_show_successes = False
