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
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_sphinx", "__init__.py", "**/__pycache__"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "undoc-members": False}

html_theme = "alabaster"                                  # ships with Sphinx: no extra dependency
html_title = "symshape"
html_static_path = []

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
"""
doctest_global_cleanup = """
os.chdir(_docs_home)
shutil.rmtree(_docs_tmp, ignore_errors=True)
"""
doctest_show_successes = False
