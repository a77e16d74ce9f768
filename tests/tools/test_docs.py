"""The docs site: it builds with warnings as errors, and every code example in it runs.

Every fenced ``python`` block of every page under docs/ is executed, the blocks of a page
in order in one namespace (like a notebook), each page in a fresh interpreter. A block
importing a framework that is not installed (torch, tensorflow and their frontends) is
skipped, and so is the rest of its page, so the cheap CI session runs the core and NumPy
examples and ``nox -s docs`` runs them all. Code that is not meant to run goes in a
``text`` / ``sh`` block or, for an illustrative fragment that should keep Python
highlighting (``for x, y in dataset: ...``), a ``python notest`` block. Docstring examples
of the core (shown in the API reference) run through doctest.
"""

import doctest
import importlib
import importlib.util
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md"))
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)\s*$",
                   re.M | re.S)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of each ``python``/``py``/``pycon`` fenced block."""
    out = []
    for m in FENCE.finditer(text):
        words = m.group("info").split()
        if words and words[0] in ("python", "py", "pycon", "python3") and "notest" not in words:
            line = text.count("\n", 0, m.start()) + 2
            body = "\n".join(ln[len(m.group("indent")):] for ln in m.group("body").splitlines())
            out.append((line, body))
    return out


def test_fence_parser_finds_python_blocks_only():
    text = ("x\n```python\na = 1\n```\n```sh\nls\n```\n  ```py\n  b = 2\n  ```\n"
            "```python notest\nfor x in dataset: pass\n```\n")
    assert python_blocks(text) == [(3, "a = 1"), (9, "b = 2")]


# Runs one page's blocks in a fresh interpreter: pages do not share state, and a page may
# need XLA flags set before jax starts (scaling examples simulate 8 CPU devices).
_DRIVER = r"""
import ast, doctest, importlib.util, json, sys
page, blocks = json.load(sys.stdin)
namespace = {"__name__": "docs_example"}
ran, skipped = 0, []

def imported(code):
    if code.lstrip().startswith(">>>"):
        code = "\n".join(e.source for e in doctest.DocTestParser().get_examples(code))
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names

for line, code in blocks:
    if skipped:  # later blocks may use what a skipped one defined
        skipped.append(f"{page}:{line} follows a skipped block")
        continue
    missing = sorted(n for n in imported(code) if importlib.util.find_spec(n) is None)
    if missing:
        skipped.append(f"{page}:{line} needs {', '.join(missing)}")
        continue
    where = f"{page}:{line}"
    try:
        if code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(code, namespace, page, page, line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            runner.run(test)
            if runner.failures:
                raise AssertionError("doctest failed")
        else:
            exec(compile(code, where, "exec"), namespace)
    except BaseException as e:
        print(json.dumps({"error": f"example at {where} failed: {type(e).__name__}: {e}"}))
        sys.exit(0)
    ran += 1
print(json.dumps({"ran": ran, "skipped": skipped}))
"""
EXAMPLE_ENV = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_code_example_runs(page, tmp_path):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("no python examples")
    env = {**os.environ, **EXAMPLE_ENV}
    out = subprocess.run([sys.executable, "-c", _DRIVER], input=json.dumps([page.name, blocks]),
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and lines, out.stderr[-3000:]
    result = json.loads(lines[-1])
    assert "error" not in result, result.get("error", "") + "\n" + out.stderr[-2000:]
    if not result["ran"]:
        pytest.skip("; ".join(result["skipped"]))


def _core_modules():
    lc = pytest.importorskip("lazycore")
    names = ["lazycore"]
    for info in pkgutil.walk_packages(lc.__path__, "lazycore."):
        names.append(info.name)
    return names


def test_core_docstring_examples_run(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    failed, tried = [], 0
    for name in _core_modules():
        module = importlib.import_module(name)
        if not isinstance(module, type(sys)):
            continue
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
        tried += result.attempted
        if result.failed:
            failed.append(name)
    assert not failed, f"docstring examples failed in {failed}"
    assert tried > 0


def test_every_sync_cause_is_documented():
    lc = pytest.importorskip("lazycore")
    text = (DOCS / "debugging.md").read_text(encoding="utf-8")
    for cause in lc.diagnostics.CAUSES:
        assert f"| `{cause}` |" in text, cause


def test_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E",
                          "-b", "html", "-d", str(tmp_path / "doctrees"), str(DOCS),
                          str(tmp_path / "html")],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    html = (tmp_path / "html")
    for page in ("index", "getting-started", "concepts", "debugging", "api", "reuse"):
        assert (html / f"{page}.html").exists(), page
    api = (html / "api.html").read_text(encoding="utf-8")
    assert "allow_sync" in api and "ImplicitSyncError" in api and "to_numpy_many" in api
    reuse = (html / "reuse.html").read_text(encoding="utf-8")
    assert "Shared code per frontend" in reuse and "Core ops reached by each frontend" in reuse
    # the frontends' API pages: NumPy's always, torch's/TF's where the framework is installed
    for frontend, framework, name in (("lazy_numpy", "numpy", "lazy_numpy.asarray"),
                                      ("lazy_torch", "torch", "lazy_torch.mark_step"),
                                      ("lazy_tf", "tensorflow", "lazy_tf.GradientTape")):
        page = html / f"api_{frontend}.html"
        if importlib.util.find_spec(framework) is None:
            assert not page.exists(), page.name
        else:
            assert name in page.read_text(encoding="utf-8"), page.name
