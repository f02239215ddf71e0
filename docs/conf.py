"""Sphinx configuration of f2loopy's documentation.

Build: ``python3 -m sphinx -W -b html docs docs/_build/html`` (warnings are
errors; ``tests/docs/test_docs.py`` builds it, runs its doctests and the scripts
its examples come from).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))          # the f2loopy of this checkout
sys.path.insert(0, os.path.join(HERE, "_ext"))

from f2loopy.version import __version__  # noqa: E402

project = "f2loopy"
author = "the f2loopy developers"
copyright = "the f2loopy developers"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "f2loopy_docs",             # _ext/: pages generated from the CLI and the recipes
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "tutorial/build", "**/__pycache__"]
root_doc = "index"

html_theme = "alabaster"
html_theme_options = {"description": "Fortran to OpenCL, verified", "fixed_sidebar": True}
html_static_path: list = []

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"undoc-members": False}

# doctests run in a fresh folder with the samples translated there
doctest_global_setup = """
import os, shutil, subprocess, sys, tempfile
import numpy as np
_doc_dir = tempfile.mkdtemp(prefix="f2loopy-doctest-")
os.chdir(_doc_dir)
"""

man_pages = [("commands", "f2loopy", "translate annotated Fortran to OpenCL", [author], 1)]
