"""Sphinx configuration for the lazytensor docs site (MyST Markdown pages).

Build: ``nox -s docs`` (or ``sphinx-build -W -b html docs docs/_build/html``): warnings are
errors. The tables under ``_generated/`` come from ``tools/reuse_metrics.py``
(``nox -s reuse``); pages include them, so they are not documents of their own.
"""

import importlib.util
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# autodoc imports lazycore and the frontends; use the source tree when not installed
for _package in ("lazycore", "lazy_numpy", "lazy_torch", "lazy_tf"):
    sys.path.insert(0, os.path.join(ROOT, "packages", _package, "src"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# A frontend's API page (api_<frontend>.md) imports its framework: where that is not
# installed (the cheap CI session has only NumPy) the page is left out of the build, and
# the glob toctree skips it. Where the framework is installed, a page that fails to
# import its frontend fails the build.
FRAMEWORK_OF_PAGE = {"api_lazy_numpy": "numpy", "api_lazy_torch": "torch",
                     "api_lazy_tf": "tensorflow"}
MISSING_API_PAGES = [f"{page}.md" for page, framework in FRAMEWORK_OF_PAGE.items()
                     if importlib.util.find_spec(framework) is None]

project = "lazytensor"
author = "the lazytensor developers"
copyright = "the lazytensor developers"  # noqa: A001 - Sphinx's name

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "README.md", "Thumbs.db", ".DS_Store",
                    *MISSING_API_PAGES]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# a framework page not written yet must not fail the build through the glob toctree
suppress_warnings = ["toc.empty_glob"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # signatures stay short; the docstrings say what types mean
autodoc_default_options = {"undoc-members": False}

html_theme = "alabaster"
html_title = "lazytensor"
html_static_path: list[str] = []
