"""Each frontend's API page (docs/api_<frontend>.md) documents every public name it exports.

A static check: the public names are read from the frontend's ``__init__.py`` (its
``__all__``, the public names it binds by ``def``/``class``/relative import) and its public
submodules; the documented names are the targets of the page's autodoc / ``py:``
directives. It runs without torch or TensorFlow, so a name added to a frontend without a
line in its API page fails the cheap CI session, not only ``nox -s docs``.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONTENDS = ("lazy_torch", "lazy_numpy", "lazy_tf")
DIRECTIVE = re.compile(r"^\s*\.\. (?:auto\w+|py:\w+):: (?P<target>[\w.]+)", re.M)


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.List | ast.Tuple):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    return []


def exported_names(init_source: str) -> set[str]:
    """``__all__`` plus the public names bound at the top level of a package's
    ``__init__.py`` by ``def``, ``class`` or a relative import (an absolute import such as
    ``import os`` is the package's own use, not an export)."""
    names: set[str] = set()
    for node in ast.parse(init_source).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names.update(_strings(node.value))
        elif (isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
              and node.target.id == "__all__"):
            names.update(_strings(node.value))
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom) and node.level:
            names.update(a.asname or a.name for a in node.names)
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def public_submodules(package_dir: Path) -> set[str]:
    found = {p.stem for p in package_dir.glob("*.py")}
    found |= {p.name for p in package_dir.iterdir() if (p / "__init__.py").exists()}
    return {n for n in found if not n.startswith("_")}


def documented_names(page_text: str, package: str) -> set[str]:
    """Names ``<package>.<name>`` that a directive of the page documents itself (a
    directive for ``<package>.<name>.<member>`` does not document ``<name>``)."""
    out = set()
    for m in DIRECTIVE.finditer(page_text):
        parts = m.group("target").split(".")
        if len(parts) == 2 and parts[0] == package:
            out.add(parts[1])
    return out


def test_exported_names_reads_all_and_relative_bindings():
    source = ("import os\nfrom . import debug, _private\nfrom ._x import thing as alias\n"
              "from .y import Z\ndef f(): pass\ndef _g(): pass\nclass C: pass\n"
              "metrics = object()\n__all__ = ['metrics', 'f']\n__all__ += ['extra', '__version__']\n")
    assert exported_names(source) == {"debug", "alias", "Z", "f", "C", "metrics", "extra",
                                      "__version__"}


def test_documented_names_takes_directive_targets_of_the_package_only():
    page = (".. autofunction:: lazy_x.sync\n.. py:data:: lazy_x.metrics\n"
            "   .. automodule:: lazy_x.debug\n.. autofunction:: lazy_x.debug.ir_text(*t)\n"
            ".. autoclass:: lazy_y.Other\n``lazy_x.mentioned`` in prose\n")
    assert documented_names(page, "lazy_x") == {"sync", "metrics", "debug"}


@pytest.mark.parametrize("package", FRONTENDS)
def test_every_public_name_is_in_the_api_page(package):
    package_dir = ROOT / "packages" / package / "src" / package
    public = exported_names((package_dir / "__init__.py").read_text(encoding="utf-8"))
    public |= public_submodules(package_dir)
    page = ROOT / "docs" / f"api_{package}.md"
    documented = documented_names(page.read_text(encoding="utf-8"), package)
    assert not public - documented, (
        f"{package} exports {sorted(public - documented)} but {page.name} does not document "
        f"them (add an autodoc directive)")
    assert not documented - public, (
        f"{page.name} documents {sorted(documented - public)}, which {package} does not export")


@pytest.mark.parametrize("package", FRONTENDS)
def test_the_api_page_is_in_a_toctree_and_the_conf(package):
    """The index's glob toctree picks the page up; conf.py knows which framework it needs
    (and leaves it out of a build without that framework)."""
    assert "api_lazy_*" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert f'"api_{package}"' in (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
