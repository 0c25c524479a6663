"""Sphinx configuration of sliceflow's API reference: ``bash scripts/docs.sh`` builds it into
build/docs/html from the docstrings of the sliceflow the interpreter imports (the working tree
with ``PYTHONPATH=$PWD/python`` after ``scripts/dev_build.sh``, else the installed build).

autodoc reads the docstrings, napoleon their Google-style sections (``Args:``, ``Returns:``,
``Raises:``, ``Example:``); nothing is fetched (no intersphinx), so the build needs no network.
"""

from __future__ import annotations

import sliceflow

project = "sliceflow"
author = "sliceflow contributors"
copyright = "sliceflow contributors, Apache-2.0"
release = version = sliceflow.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]

# The docstrings are Google style; none uses NumPy's underlined sections.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# Every page documents one module's __all__ (imported names included: sliceflow.window
# re-exports the aggregates, sliceflow.spark its operators), in the order of the source.
autodoc_default_options = {"members": True, "member-order": "bysource"}
# Signatures keep the annotations as written (``str | None``), unevaluated.
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

templates_path: list[str] = []
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"sliceflow {release} API reference"
