"""Import layering of each package: intra-package import cycles and late-binding patches.

A cycle between modules forces one of them to be half-initialised while the other runs;
code then dodges it by late binding, which hides the dependency from every reader. This
script finds both, from the source only (stdlib ``ast``; nothing is imported).

What counts (per package under ``packages/*/src/<name>``):

* **Edges**: module A imports module B of the same package. ``import p.b``,
  ``from .b import x``, ``from . import b`` (``b`` a submodule) and ``from . import x``
  (``x`` a name of the package's ``__init__``: an edge to ``__init__``); importing
  ``p.a.b`` also runs ``p.a``'s ``__init__`` unless it is one of A's own ancestors
  (which are already running). An edge is *module-level* when the import runs while A
  is imported (module body, class bodies, top-level ``if``/``try``), *deferred* when it
  sits in a function body. Imports under ``if TYPE_CHECKING:`` never run: no edge.
* **Cycles**: strongly connected components of the graph of both kinds of edges. A
  deferred import inside a component is one that exists to dodge the cycle (made
  module-level, it would be circular); one outside every component is a plain lazy
  import (of a heavy or optional module) and is harmless. The count is the modules in
  cycles, and the components themselves.
* **Late-binding patches**:
  - ``patch``: at import time (outside function bodies), an assignment to an attribute
    (or ``setattr``) of a class, function or module imported from another module of the
    repository's packages -- ``registry.OpDef.__call__ = call``, ``_tensor._dispatch =
    dispatch``. Attributes a module sets on its own classes are not patches.
  - ``late global``: a module-level ``X = None`` that is rebound later from outside:
    by another module (``mod.X = value``, anywhere), or by a function of its own module
    that assigns it one of its parameters (an installer another module calls). A
    lazily computed cache (``global X; if X is None: X = compute()``) is not one.

Usage: ``python tools/import_graph.py [--root DIR] [--json OUT] [--max-cycles N]
[--max-dodging N] [--max-patches N]``; the markdown report goes to stdout; an exceeded
budget (modules in cycles and dodging imports per package, patches in all) makes the
exit status 1.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Edge:
    src: str
    dst: str
    line: int
    deferred: bool  # in a function body


@dataclass
class Patch:
    package: str
    module: str
    line: int
    kind: str       # "patch" | "late global"
    target: str     # what is rebound, e.g. "lazycore.ops.registry.OpDef.__call__"


@dataclass
class PackageGraph:
    name: str
    modules: list[str]
    edges: list[Edge] = field(default_factory=list)
    cycles: list[list[str]] = field(default_factory=list)  # components of > 1 module
    dodging: list[Edge] = field(default_factory=list)      # deferred edges in a cycle

    @property
    def modules_in_cycles(self) -> int:
        return sum(len(c) for c in self.cycles)


# -- modules and import resolution ------------------------------------------------------

def package_modules(src: Path, name: str) -> dict[str, Path]:
    """Dotted module name -> file, for the package directory ``src`` named ``name``."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join([name, *parts])] = path
    return out


def _is_package(modules: dict[str, Path], mod: str) -> bool:
    return modules[mod].name == "__init__.py"


def _ancestors(mod: str) -> list[str]:
    parts = mod.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _with_parents(target: str, importer: str, modules: dict[str, Path]) -> list[str]:
    """``target`` and the packages its import runs first (not the importer's own)."""
    mine = set(_ancestors(importer)) | {importer}
    return [m for m in [*_ancestors(target), target] if m in modules and m not in mine]


def _base(importer: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str | None:
    if not node.level:
        return node.module
    parts = importer.split(".")
    if not _is_package(modules, importer):
        parts = parts[:-1]
    if node.level > 1:
        parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def import_targets(importer: str, node: ast.Import | ast.ImportFrom,
                   modules: dict[str, Path], root: str) -> list[str]:
    """Modules of the package (named ``root``) that an import statement runs."""
    out: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == root or alias.name.startswith(root + "."):
                out += _with_parents(alias.name, importer, modules)
        return list(dict.fromkeys(out))
    base = _base(importer, node, modules)
    if base is None or not (base == root or base.startswith(root + ".")):
        return []
    names_hit_init = False
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules:
            out += _with_parents(sub, importer, modules)
        else:
            names_hit_init = True
    if names_hit_init or not node.names:
        out += _with_parents(base, importer, modules)
    elif base in modules:  # ``from p.a import b``: p.a's __init__ runs first
        out += _with_parents(base, importer, modules)
    return list(dict.fromkeys(out))


def _is_type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module):
    """(import node, deferred) for every import that can run, skipping TYPE_CHECKING."""
    def walk(node: ast.AST, deferred: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    yield from walk_one(sub, deferred)
                continue
            yield from walk_one(child, deferred)

    def walk_one(node: ast.AST, deferred: bool):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, deferred
        inner = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                       | ast.Lambda)
        yield from walk(node, inner)

    yield from walk(tree, False)


# -- strongly connected components (Tarjan, iterative) -----------------------------------

def strongly_connected(nodes: list[str], succ: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(succ.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(succ.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                out.append(sorted(comp))
    return out


def package_graph(src: Path, name: str) -> PackageGraph:
    modules = package_modules(src, name)
    graph = PackageGraph(name, sorted(modules))
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, deferred in _imports(tree):
            for dst in import_targets(mod, node, modules, name):
                if dst != mod:
                    graph.edges.append(Edge(mod, dst, node.lineno, deferred))
    succ: dict[str, set[str]] = {}
    for e in graph.edges:
        succ.setdefault(e.src, set()).add(e.dst)
    comps = [c for c in strongly_connected(graph.modules, succ) if len(c) > 1]
    graph.cycles = sorted(comps, key=lambda c: (-len(c), c))
    where = {m: i for i, c in enumerate(graph.cycles) for m in c}
    graph.dodging = [e for e in graph.edges if e.deferred and e.src in where
                     and where.get(e.dst) == where[e.src]]
    return graph


# -- late-binding patches ----------------------------------------------------------------

def _imported_roots(mod: str, tree: ast.Module, all_modules: dict[str, dict[str, Path]]
                    ) -> dict[str, str]:
    """Local name -> dotted origin, for names imported from the repository's packages."""
    out: dict[str, str] = {}
    for node, _ in _imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in all_modules:
                    out[alias.asname or top] = alias.asname and alias.name or top
        else:
            pkg = mod.split(".")[0]
            modules = all_modules[pkg]
            base = _base(mod, node, modules) if node.level else node.module
            if not base or base.split(".")[0] not in all_modules:
                continue
            for alias in node.names:
                out[alias.asname or alias.name] = f"{base}.{alias.name}"
    return out


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *parts[::-1]]


def _module_body_nodes(tree: ast.Module):
    """Nodes that run at import time: everything outside function bodies."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _assign_targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        out = []
        for t in node.targets:
            out += t.elts if isinstance(t, ast.Tuple | ast.List) else [t]
        return out
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def _none_globals(tree: ast.Module) -> dict[str, int]:
    out = {}
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Constant) and value.value is None:
            for t in _assign_targets(node):
                if isinstance(t, ast.Name):
                    out[t.id] = node.lineno
    return out


def _installer_assignments(tree: ast.Module, names: dict[str, int]):
    """(name, line) where a function declares ``global name`` and assigns it a parameter."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        declared = {n for g in ast.walk(fn) if isinstance(g, ast.Global) for n in g.names}
        params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                    and node.value.id in params:
                for t in _assign_targets(node):
                    if isinstance(t, ast.Name) and t.id in declared and t.id in names:
                        yield t.id, node.lineno


def late_binding(root: Path, packages: list[str]) -> list[Patch]:
    all_modules = {p: package_modules(root / "packages" / p / "src" / p, p) for p in packages}
    trees = {mod: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
             for mods in all_modules.values() for mod, path in mods.items()}
    every = {m for mods in all_modules.values() for m in mods}
    none_globals = {mod: _none_globals(tree) for mod, tree in trees.items()}
    out: list[Patch] = []
    for mod, tree in trees.items():
        pkg = mod.split(".")[0]
        roots = _imported_roots(mod, tree, all_modules)
        at_import = set(map(id, _module_body_nodes(tree)))
        for node in ast.walk(tree):
            targets: list[list[str]] = []
            for t in _assign_targets(node):
                chain = _chain(t) if isinstance(t, ast.Attribute) else None
                if chain:
                    targets.append(chain)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "setattr" and len(node.args) >= 2:
                chain = _chain(node.args[0])
                name = node.args[1]
                if chain and isinstance(name, ast.Constant) and isinstance(name.value, str):
                    targets.append([*chain, name.value])
            for chain in targets:
                if chain[0] not in roots:
                    continue
                dotted = ".".join([roots[chain[0]], *chain[1:]])
                owner, attr = dotted.rsplit(".", 1)
                if owner in every and attr in none_globals.get(owner, {}):
                    out.append(Patch(pkg, mod, node.lineno, "late global", dotted))
                elif id(node) in at_import:
                    out.append(Patch(pkg, mod, node.lineno, "patch", dotted))
        for name, line in _installer_assignments(tree, none_globals[mod]):
            out.append(Patch(pkg, mod, line, "late global", f"{mod}.{name}"))
    return sorted(out, key=lambda p: (p.package, p.module, p.line))


# -- the report --------------------------------------------------------------------------

def packages_of(root: Path) -> list[str]:
    return sorted(d.name for d in (root / "packages").iterdir()
                  if (d / "src" / d.name / "__init__.py").is_file())


def analyse(root: Path) -> dict:
    names = packages_of(root)
    graphs = [package_graph(root / "packages" / n / "src" / n, n) for n in names]
    patches = late_binding(root, names)
    return {
        "packages": {g.name: {
            "modules": len(g.modules), "edges": len(g.edges),
            "deferred_edges": sum(e.deferred for e in g.edges),
            "modules_in_cycles": g.modules_in_cycles, "cycles": g.cycles,
            "dodging": [asdict(e) for e in g.dodging]} for g in graphs},
        "patches": [asdict(p) for p in patches],
    }


def markdown(data: dict) -> str:
    out = ["## Import cycles per package", "",
           "| package | modules | import edges | deferred | modules in cycles | dodging |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, g in data["packages"].items():
        out.append(f"| {name} | {g['modules']} | {g['edges']} | {g['deferred_edges']} |"
                   f" {g['modules_in_cycles']} | {len(g['dodging'])} |")
    for name, g in data["packages"].items():
        for comp in g["cycles"]:
            out += ["", f"- {name}: cycle of {len(comp)}: " + ", ".join(comp)]
        for e in g["dodging"]:
            out.append(f"  - deferred import dodging it: {e['src']}:{e['line']} -> {e['dst']}")
    out += ["", f"## Late-binding patches: {len(data['patches'])}", ""]
    out += [f"- {p['kind']}: {p['module']}:{p['line']} rebinds `{p['target']}`"
            for p in data["patches"]]
    return "\n".join(out) + "\n"


def over_budget(data: dict, max_cycles: dict[str, int] | int | None = None,
                max_patches: int | None = None,
                max_dodging: dict[str, int] | int | None = None) -> list[str]:
    """Messages for each budget exceeded: modules in cycles and deferred imports dodging
    a cycle, per package (a dict, or one number for all); patches in all packages."""
    out = []
    for budget, key, what in ((max_cycles, "modules_in_cycles", "modules in import cycles"),
                              (max_dodging, "dodging", "deferred imports dodging a cycle")):
        if budget is None:
            continue
        for name, g in data["packages"].items():
            limit = budget.get(name, 0) if isinstance(budget, dict) else budget
            value = g[key] if isinstance(g[key], int) else len(g[key])
            if value > limit:
                out.append(f"{name}: {value} {what} > budget {limit}")
    if max_patches is not None and len(data["patches"]) > max_patches:
        out.append(f"{len(data['patches'])} late-binding patches > budget {max_patches}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--json", type=Path, help="write the graph summary as JSON here")
    parser.add_argument("--max-cycles", type=int, help="modules in cycles, per package")
    parser.add_argument("--max-patches", type=int, help="late-binding patches, in all")
    parser.add_argument("--max-dodging", type=int,
                        help="deferred imports dodging a cycle, per package")
    args = parser.parse_args(argv)
    data = analyse(args.root)
    sys.stdout.write(markdown(data))
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    problems = over_budget(data, args.max_cycles, args.max_patches, args.max_dodging)
    for p in problems:
        print(f"over budget: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
