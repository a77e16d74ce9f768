"""Semantics audit: how much numerical semantics the frontends hold beside the core.

The core's composites are meant to be the one semantics layer; a frontend should only
map names, normalise arguments, decide promotion, pick exception types and convert to
and from the host. Three measures, from the source (stdlib ``ast``) and one traced call:

* **composing functions** -- frontend functions (each ``def``/``lambda`` on its own,
  nested ones apart) whose body calls three or more core *primitives*
  (``ops.select(...)``, ``lc.ops.exp(...)``, ``ops.get("and")(...)``, or a name bound
  to one: ``_and = ops.get("and")``, ``op = ops.get(name)``). Calls to composites
  (``lc.numeric.*``) are not primitives: delegating is what a table should do. Such a
  function is an algorithm the core should own, or needs a reason to stay;
* **unused composites** -- names ``lazycore.numeric`` exports that no frontend reaches,
  directly or through another composite (reach as in ``tools/reuse_metrics.py``);
* **frames per ``x + y``** (``--frames``) -- Python frames entered by one traced
  ``x + y`` of two lazy float32 arrays per frontend, after a warm-up, counted with
  ``sys.setprofile`` in a subprocess (needs the frameworks).

Usage: ``python tools/semantics_audit.py [--root DIR] [--frames] [--list] [--json OUT]
[--max-composing N] [--max-unused N] [--max-frames N]``; a ``--max-*`` budget that is
exceeded makes the exit status 1.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reuse_metrics as rm  # noqa: E402 - a sibling script, not a package

#: functions calling at least this many primitives are "composing"
THRESHOLD = 3
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass
class Composing:
    frontend: str
    file: str           # relative to the repository root
    function: str       # qualified name (``outer.<locals>.inner``, ``<lambda>``)
    line: int
    calls: int          # primitive call sites in its own body
    ops: list[str] = field(default_factory=list)  # distinct primitives ("?" when dynamic)


class _PrimitiveCalls(ast.NodeVisitor):
    """Primitive call sites per function of one file."""

    def __init__(self, aliases: dict[str, str], op_names: set[str], module_bound: dict):
        self.aliases, self.op_names = aliases, op_names
        self.bound = [dict(module_bound)]        # name -> op, one scope per function
        self.stack: list[str] = []
        self.found: list[tuple[str, int, list[str]]] = []  # (qualname, line, ops called)
        self.current: list[list[str]] = []

    # -- resolving a callee --------------------------------------------------------------
    def primitive(self, func: ast.AST) -> str | None:
        """The op a callee names, "?" for ``ops.get(<dynamic>)``, None otherwise."""
        if isinstance(func, ast.Name):
            for scope in reversed(self.bound):
                if func.id in scope:
                    return scope[func.id]
            return None
        if isinstance(func, ast.Call):  # ops.get("and")(...)
            if self._is_ops_attr(func.func, "get"):
                arg = func.args[0] if func.args else None
                return arg.value if isinstance(arg, ast.Constant) else "?"
            return None
        if isinstance(func, ast.Attribute):
            path = self._path(func)
            if path and len(path) == 2 and path[0] == "ops":
                if path[1] in self.op_names:
                    return path[1]
                if f"linalg_{path[1]}" in self.op_names:
                    return f"linalg_{path[1]}"
        return None

    def _path(self, node: ast.Attribute) -> list[str] | None:
        chain = rm._chain(node)
        if not chain or chain[0] not in self.aliases:
            return None
        return [p for p in self.aliases[chain[0]].split(".") if p] + chain[1:]

    def _is_ops_attr(self, node: ast.AST, attr: str) -> bool:
        return isinstance(node, ast.Attribute) and self._path(node) == ["ops", attr]

    def bound_value(self, value: ast.AST) -> str | None:
        """``ops.get(x)`` or ``ops.exp`` (not called): the op a name bound to it calls."""
        if isinstance(value, ast.Call) and self._is_ops_attr(value.func, "get"):
            arg = value.args[0] if value.args else None
            return arg.value if isinstance(arg, ast.Constant) else "?"
        if isinstance(value, ast.Attribute):
            return self.primitive(value)
        return None

    # -- walking ----------------------------------------------------------------------------
    def _function(self, node, name: str) -> None:
        self.stack.append(name)
        self.bound.append({})
        self.current.append([])
        body = node.body if isinstance(node.body, list) else [node.body]
        for child in body:
            self.visit(child)
        called = self.current.pop()
        self.bound.pop()
        self.found.append((".<locals>.".join(self.stack), node.lineno, called))
        self.stack.pop()

    def visit_FunctionDef(self, node):  # noqa: N802 - ast.NodeVisitor API
        for d in node.decorator_list + node.args.defaults + node.args.kw_defaults:
            if d is not None:
                self.visit(d)
        self._function(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_Lambda(self, node):  # noqa: N802
        self._function(node, "<lambda>")

    def visit_Assign(self, node):  # noqa: N802
        self.generic_visit(node)
        self.bind(node)

    def bind(self, node: ast.Assign) -> None:
        pairs = []
        for target in node.targets:
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs += list(zip(target.elts, node.value.elts, strict=False))
            else:
                pairs.append((target, node.value))
        for target, value in pairs:
            if isinstance(target, ast.Name):
                op = self.bound_value(value)
                if op is not None:
                    self.bound[-1][target.id] = op

    def visit_Call(self, node):  # noqa: N802
        op = self.primitive(node.func)
        if op is not None and self.current:
            self.current[-1].append(op)
        self.generic_visit(node)


def composing_functions(root: Path, threshold: int = THRESHOLD) -> list[Composing]:
    core = rm.load_core(root / "packages" / rm.CORE / "src" / rm.CORE)
    op_names = set(core.ops)
    out: list[Composing] = []
    for name, files in _frontends(root).items():
        aliases = frontend_aliases(core, files)
        for path in files:
            tree = rm._parse(path)
            visitor = _PrimitiveCalls(aliases[path], op_names, {})
            for node in tree.body:  # module-level bindings first: _and = ops.get("and")
                if isinstance(node, ast.Assign):
                    visitor.bind(node)
            visitor.visit(tree)
            rel = path.relative_to(root).as_posix()
            for qualname, line, called in visitor.found:
                if len(called) >= threshold:
                    out.append(Composing(name, rel, qualname, line, len(called),
                                         sorted(set(called))))
    return sorted(out, key=lambda c: (c.frontend, c.file, c.line))


def frontend_aliases(core: rm.Core, files: list[Path]) -> dict[Path, dict[str, str]]:
    """Per file, the names bound to core modules (``ops``, ``lc``, ``num``...), following
    re-exports between the frontend's own modules, as ``reuse_metrics`` does."""
    refs = rm.FrontendRefs()
    trees = {path: rm._parse(path) for path in files}
    table = {path: rm._aliases(core, tree, refs) for path, tree in trees.items()}
    for _ in range(3):
        for path, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level:
                    for target in rm._relative_target(path, node):
                        source = table.get(target, {})
                        for a in node.names:
                            if a.name in source:
                                table[path][a.asname or a.name] = source[a.name]
            rm._module_level_aliases(tree, table[path])
    return table


def _frontends(root: Path) -> dict[str, list[Path]]:
    out = {}
    for pkg_dir in sorted((root / "packages").iterdir()):
        name = pkg_dir.name
        if name != rm.CORE and (pkg_dir / "src" / name).is_dir():
            out[name] = rm._package_files(pkg_dir / "src" / name)
    return out


def unused_composites(root: Path) -> list[str]:
    core = rm.load_core(root / "packages" / rm.CORE / "src" / rm.CORE)
    reached: set[str] = set()
    for files in _frontends(root).values():
        refs = rm.scan_frontend(core, files)
        _, composites, _ = rm.reach(core, refs.ops, refs.composites)
        reached |= composites
    return sorted(set(core.composites) - reached)


# -- frames per x + y ---------------------------------------------------------------------

_SETUP = {
    "lazy_numpy": "import lazy_numpy as lnp\n"
                  "x, y = lnp.asarray(a), lnp.asarray(b)\n",
    "lazy_torch": "import torch, lazy_torch\n"
                  "d = lazy_torch.device()\n"
                  "x, y = torch.from_numpy(a).to(d), torch.from_numpy(b).to(d)\n",
    "lazy_tf": "import lazy_tf as ltf\n"
               "x, y = ltf.convert_to_tensor(a), ltf.convert_to_tensor(b)\n",
}

_PROBE = """
import json, sys
import numpy as np
a = np.ones((4, 4), np.float32)
b = np.full((4, 4), 2.0, np.float32)
{setup}
for _ in range(3):
    z = x + y  # warm up: plans and caches
import gc
z = None
gc.collect()
gc.disable()  # no finalizer of an unrelated object runs inside the measured call
frames = []

def profile(frame, event, arg):
    if event == "call":
        code = frame.f_code
        frames.append(f"{{code.co_filename}}:{{code.co_firstlineno}}:{{code.co_qualname}}")

sys.setprofile(profile)
w = x + y
sys.setprofile(None)
print("FRAMES=" + json.dumps(frames))
"""


def frames_per_add(frontend: str, root: Path, timeout: float = 600) -> list[str] | None:
    """The Python frames one traced ``x + y`` enters, or None if the frontend (or its
    framework) cannot be imported."""
    env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"),
               TF_CPP_MIN_LOG_LEVEL="3")
    code = _PROBE.format(setup=_SETUP[frontend])
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=timeout, cwd=root, env=env)
    except subprocess.SubprocessError:
        return None
    for line in out.stdout.splitlines():
        if line.startswith("FRAMES="):
            return [_short(f, root) for f in json.loads(line[len("FRAMES="):])]
    return None


def _short(frame: str, root: Path) -> str:
    path, _, rest = frame.partition(":")
    for marker in ("/packages/", "/site-packages/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{rest}"


# -- report ---------------------------------------------------------------------------

def audit(root: Path, frames: bool = False) -> dict:
    composing = composing_functions(root)
    by_frontend: dict[str, int] = {}
    for c in composing:
        by_frontend[c.frontend] = by_frontend.get(c.frontend, 0) + 1
    data = {
        "threshold": THRESHOLD,
        "composing": {"count": len(composing),
                      "primitive_calls": sum(c.calls for c in composing),
                      "by_frontend": by_frontend,
                      "functions": [asdict(c) for c in composing]},
        "unused_composites": unused_composites(root),
    }
    if frames:
        data["frames"] = {}
        for name in _SETUP:
            seen = frames_per_add(name, root)
            data["frames"][name] = None if seen is None else {"count": len(seen),
                                                              "frames": seen}
    return data


def markdown(data: dict, listing: bool = False) -> str:
    comp = data["composing"]
    out = [f"frontend functions composing >= {data['threshold']} core primitives: "
           f"{comp['count']} ({comp['primitive_calls']} primitive calls); "
           + ", ".join(f"{k} {v}" for k, v in sorted(comp["by_frontend"].items())),
           f"core composites no frontend reaches: {len(data['unused_composites'])}"
           + (f" ({', '.join(data['unused_composites'])})" if data["unused_composites"] else "")]
    for name, seen in data.get("frames", {}).items():
        out.append(f"Python frames per traced x + y, {name}: "
                   + ("n/a (not importable)" if seen is None else str(seen["count"])))
    if listing:
        out += ["", "| Frontend | Function | Primitive calls | Primitives |",
                "| --- | --- | ---: | --- |"]
        for c in comp["functions"]:
            out.append(f"| {c['frontend']} | `{c['file']}:{c['line']}` `{c['function']}` | "
                       f"{c['calls']} | {', '.join(c['ops'])} |")
        for name, seen in data.get("frames", {}).items():
            if seen:
                out += ["", f"Frames of x + y in {name}:"]
                out += [f"{i + 1}. `{f}`" for i, f in enumerate(seen["frames"])]
    return "\n".join(out) + "\n"


def over_budget(data: dict, max_composing=None, max_unused=None, max_frames=None) -> list[str]:
    problems = []
    if max_composing is not None and data["composing"]["count"] > max_composing:
        problems.append(f"{data['composing']['count']} composing frontend functions "
                        f"> budget {max_composing}")
    if max_unused is not None and len(data["unused_composites"]) > max_unused:
        problems.append(f"{len(data['unused_composites'])} unused composites "
                        f"> budget {max_unused}")
    for name, seen in data.get("frames", {}).items():
        if max_frames is not None and seen is not None and seen["count"] > max_frames:
            problems.append(f"{name}: {seen['count']} frames per x + y > budget {max_frames}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--frames", action="store_true",
                        help="count the frames of a traced x + y (imports the frameworks)")
    parser.add_argument("--list", action="store_true", help="list the composing functions")
    parser.add_argument("--json", type=Path, help="write the audit as JSON here")
    parser.add_argument("--max-composing", type=int)
    parser.add_argument("--max-unused", type=int)
    parser.add_argument("--max-frames", type=int)
    args = parser.parse_args(argv)
    data = audit(args.root, frames=args.frames)
    sys.stdout.write(markdown(data, listing=args.list))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    problems = over_budget(data, args.max_composing, args.max_unused, args.max_frames)
    for p in problems:
        print(f"over budget: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
