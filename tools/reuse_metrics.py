"""Code-reuse metrics for this repository: how much of each frontend is the shared core.

Everything is computed from the source on every run (stdlib only: ``ast`` and
``tokenize``; nothing is imported from the packages unless ``--entries`` asks for the
frontends' API-entry counts, which need the frameworks installed).

Definitions (also printed with the markdown):

* **Logical lines**: statements (tokenize NEWLINE tokens), not counting blank lines,
  comments or docstrings (a string expression used as a statement). Tests are not in
  ``packages/`` and so never counted.
* **Core ops**: names declared with ``defop`` in ``lazycore/ops/`` (directly, through a
  wrapper such as ``_unary("exp", ...)``, or in a ``for`` loop over a literal table).
  **Composites**: the names ``lazycore/numeric.py`` re-exports from ``composites/``.
* **Reached by a frontend**: ops and composites its code names (``lc.ops.exp``,
  ``nm.softmax``, ``from lazycore.numeric import softmax``, or an op name as a string
  literal, as in ``elementwise("add", ...)`` tables), plus every op and composite those
  composites use in turn.
* **Core lines used by a frontend**: the core's infrastructure modules it imports
  (IR, tracing, runtime, lowering, cache, ...), plus the lines of the *names* it reaches:
  each composite function reached (public or a private helper one calls), and of each
  op-family file the share of its ops that are reached (lines x reached / declared).
  A module is never counted whole because one name in it is reached (that older
  measure is kept as ``core_lines_by_module``). **Shared fraction** = core lines used /
  (core lines used + frontend lines).

**Line budgets**: ``--max-lines NAME=N`` (the core is ``lazycore``; repeatable) makes the
exit status 1 when a package has more logical lines than its budget; CI holds the budgets
stated in the README (``tests/tools/test_line_budgets.py``).

Usage: ``python tools/reuse_metrics.py [--root DIR] [--json OUT.json] [--markdown OUT.md]
[--coverage OUT.md] [--entries] [--max-lines NAME=N ...]``. Without
``--json``/``--markdown`` the markdown goes to stdout.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import subprocess
import sys
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path

CORE = "lazycore"

#: Core components for the per-component table: (name, path prefixes under lazycore/).
COMPONENTS = [
    ("IR and tracing", ("ir.py", "trace.py", "tensor.py")),
    ("ops (primitives)", ("ops/", "optable.py")),
    ("composites", ("composites/", "numeric.py")),
    ("dtypes and promotion", ("dtypes.py",)),
    ("lowering", ("lowering.py",)),
    ("cache", ("cache.py",)),
    ("runtime", ("runtime.py", "config.py", "errors.py")),
    ("metrics and debugging", ("metrics.py", "debug.py", "diagnostics.py", "profile.py")),
    ("autodiff", ("autodiff.py",)),
    ("random", ("random.py",)),
    ("sharding", ("sharding.py",)),
]

#: Frontends: framework, what an API entry is, and the registries (dotted names of
#: containers) whose sizes count the entries when ``--entries`` imports the package.
FRONTENDS = {
    "lazy_numpy": ("NumPy", "NumPy functions + ufuncs",
                   ("lazy_numpy._registry.FUNCTIONS", "lazy_numpy._kernels.KERNELS")),
    "lazy_torch": ("PyTorch", "ATen/prims overloads",
                   ("lazy_torch.lowerings.registry.LOWERINGS",)),
    "lazy_tf": ("TensorFlow", "TF APIs", ("lazy_tf._table.API",)),
}

_OPS_INFRA = {"__init__.py", "registry.py", "rules.py"}


# -- counting lines ---------------------------------------------------------------------

def logical_lines(source: str) -> int:
    """Statements in ``source``, not counting docstrings, comments or blank lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0
    docstring_ends = {node.end_lineno for node in ast.walk(tree)
                      if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                      and isinstance(node.value.value, str)}
    count = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NEWLINE and tok.start[0] not in docstring_ends:
            count += 1
    return count


# -- the core: ops, composites, module graph --------------------------------------------

def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _literal_keys(node: ast.AST, tables: dict[str, list[str]]) -> list[str] | None:
    """String keys of a literal table: ``{"a": ...}``, ``("a", "b")``, ``[("a", x)]``,
    a module-level name bound to one, or ``NAME.items()`` / ``NAME.keys()``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("items", "keys") and not node.args:
        return _literal_keys(node.func.value, tables)
    if isinstance(node, ast.Name):
        return tables.get(node.id)
    if isinstance(node, ast.Dict):
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
        return [k for k in keys if isinstance(k, str)] or None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Tuple | ast.List) and elt.elts:
                elt = elt.elts[0]
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
        return out or None
    return None


def _names_of(arg: ast.AST, env: dict[str, list[str]]) -> list[str]:
    """Possible string values of a ``defop`` name argument."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.Name):
        return env.get(arg.id, [])
    if isinstance(arg, ast.JoinedStr):
        prefix, var, suffix = "", None, ""
        for part in arg.values:
            if isinstance(part, ast.Constant):
                if var is None:
                    prefix += str(part.value)
                else:
                    suffix += str(part.value)
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) \
                    and var is None:
                var = part.value.id
            else:
                return []
        return [prefix + v + suffix for v in env.get(var, [])] if var else [prefix]
    return []


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def declared_ops(tree: ast.Module) -> list[str]:
    """Op names a family module declares (see the module docstring)."""
    wrappers = {"defop"}
    for node in tree.body:  # functions that pass their first parameter on to defop
        if isinstance(node, ast.FunctionDef) and node.args.args:
            first = node.args.args[0].arg
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and _callee(call) == "defop" and call.args \
                        and isinstance(call.args[0], ast.Name) and call.args[0].id == first:
                    wrappers.add(node.name)
    tables: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            keys = _literal_keys(node.value, tables)
            for t in targets:
                if isinstance(t, ast.Name) and keys:
                    tables[t.id] = keys
    found: list[str] = []

    def visit(node: ast.AST, env: dict[str, list[str]]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return
        if isinstance(node, ast.For):
            keys = _literal_keys(node.iter, tables) or []
            target = node.target
            if isinstance(target, ast.Tuple) and target.elts:
                target = target.elts[0]
            inner = dict(env)
            if isinstance(target, ast.Name):
                inner[target.id] = keys
            for child in node.body:
                visit(child, inner)
            return
        if isinstance(node, ast.Call) and _callee(node) in wrappers and node.args:
            found.extend(_names_of(node.args[0], env))
        for child in ast.iter_child_nodes(node):
            visit(child, env)

    for node in tree.body:
        visit(node, {})
    return list(dict.fromkeys(found))


@dataclass
class Module:
    """One core source file: its lines, what it declares and what it refers to."""

    rel: str                      # path under lazycore/, e.g. "ops/elementwise.py"
    lines: int
    imports: set[str] = field(default_factory=set)   # rel paths of core modules imported
    ops: list[str] = field(default_factory=list)     # ops declared here
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    function_lines: dict[str, int] = field(default_factory=dict)  # logical lines per function
    global_ops: dict[str, set[str]] = field(default_factory=dict)  # ``_and = ops.get("and")``
    imported_names: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (rel, name)


def _resolve_relative(rel: str, level: int, module: str | None, pkg_files: set[str]) -> list[str]:
    """Core rel paths an ``from <.level module> import ...`` can mean (module or package)."""
    parts = rel.split("/")[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = parts + (module.split(".") if module else [])
    return [c for c in ("/".join(base) + ".py", "/".join(base + ["__init__.py"]))
            if c in pkg_files]


def _core_imports(rel: str, tree: ast.Module, pkg_files: set[str]) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                here, level, mod = rel, node.level, node.module
            elif node.module and (node.module == CORE or node.module.startswith(CORE + ".")):
                here, level, mod = "__init__.py", 1, node.module[len(CORE) + 1:] or None
            else:
                continue
            out.update(_resolve_relative(here, level, mod, pkg_files))
            for alias in node.names:  # "from . import ops" imports a submodule
                sub = f"{mod}.{alias.name}" if mod else alias.name
                out.update(_resolve_relative(here, level, sub, pkg_files))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == CORE or alias.name.startswith(CORE + "."):
                    out.update(_absolute(alias.name, pkg_files))
    return out


def _absolute(dotted: str, pkg_files: set[str]) -> list[str]:
    parts = dotted.split(".")[1:]
    base = "/".join(parts)
    cands = [base + ".py", (base + "/" if base else "") + "__init__.py"]
    return [c for c in cands if c in pkg_files]


@dataclass
class Core:
    root: Path
    modules: dict[str, Module]
    ops: dict[str, str]            # op name -> rel path declaring it
    composites: dict[str, tuple[str, str]]  # public name -> (rel path, function name)

    def is_infrastructure(self, rel: str) -> bool:
        if rel.startswith("composites/") or rel == "numeric.py":
            return False
        return not (rel.startswith("ops/") and rel.split("/")[-1] not in _OPS_INFRA)

    def closure(self, start: set[str]) -> set[str]:
        """Infrastructure modules reachable by imports from ``start``."""
        seen: set[str] = set()
        todo = [s for s in start if s in self.modules]
        while todo:
            rel = todo.pop()
            if rel in seen:
                continue
            seen.add(rel)
            todo.extend(m for m in self.modules[rel].imports
                        if m not in seen and self.is_infrastructure(m))
        return {m for m in seen if self.is_infrastructure(m)}


def load_core(src: Path) -> Core:
    """Parse ``src`` (the ``lazycore`` package directory)."""
    files = sorted(p for p in src.rglob("*.py") if "__pycache__" not in p.parts)
    pkg_files = {p.relative_to(src).as_posix() for p in files}
    modules: dict[str, Module] = {}
    ops: dict[str, str] = {}
    for path in files:
        rel = path.relative_to(src).as_posix()
        text = path.read_text(encoding="utf-8")
        tree = _parse(path)
        mod = Module(rel, logical_lines(text), _core_imports(rel, tree, pkg_files))
        mod.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        mod.function_lines = {name: logical_lines(ast.get_source_segment(text, fn) or "")
                              for name, fn in mod.functions.items()}
        mod.global_ops = _global_op_bindings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and node.module:
                for target in _resolve_relative(rel, node.level, node.module, pkg_files):
                    for alias in node.names:
                        mod.imported_names[alias.asname or alias.name] = (target, alias.name)
        if rel != "ops/registry.py":  # most ops live in ops/, a few beside their pass
            mod.ops = declared_ops(tree)
            for name in mod.ops:
                ops.setdefault(name, rel)
        modules[rel] = mod
    composites: dict[str, tuple[str, str]] = {}
    numeric = src / "numeric.py"
    if numeric.exists():
        for node in _parse(numeric).body:
            if isinstance(node, ast.ImportFrom) and node.level and node.module \
                    and node.module.startswith("composites"):
                rel = node.module.replace(".", "/") + ".py"
                for alias in node.names:
                    composites[alias.asname or alias.name] = (rel, alias.name)
            elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                composites[node.name] = ("numeric.py", node.name)
    return Core(src, modules, ops, composites)


def _global_op_bindings(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level names whose value names ops: ``_and, _or = ops.get("and"), ops.or_``
    -> {"_and": {"and"}, "_or": {"or_"}} (filtered against the real op names later)."""
    out: dict[str, set[str]] = {}

    def names_in(node: ast.AST) -> set[str]:
        found = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                found.add(sub.value)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                    and sub.value.id in ("ops", "_ops"):
                found.add(sub.attr)
        return found

    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                for t, v in zip(target.elts, node.value.elts, strict=True):
                    if isinstance(t, ast.Name):
                        out[t.id] = names_in(v)
            elif isinstance(target, ast.Name):
                out[target.id] = names_in(node.value)
    return out


# -- reachability ---------------------------------------------------------------------------

def _function_refs(core: Core, rel: str, fn: ast.AST, op_names: set[str]):
    """(ops, (rel, function) pairs) that a composite function's body refers to."""
    module = core.modules[rel]
    imported = module.imported_names
    ops_hit: set[str] = set()
    calls: set[tuple[str, str]] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and node.attr in op_names \
                and isinstance(node.value, ast.Name) and node.value.id in ("ops", "_ops"):
            ops_hit.add(node.attr)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in ("numeric", "nm") and node.attr in core.composites:
            calls.add(core.composites[node.attr])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value in op_names:
            ops_hit.add(node.value)
        elif isinstance(node, ast.Name):
            if node.id in module.functions:
                calls.add((rel, node.id))
            elif node.id in imported:
                calls.add(imported[node.id])
            elif node.id in module.global_ops:
                ops_hit |= module.global_ops[node.id] & op_names
    return ops_hit, calls


def reach(core: Core, ops_direct: set[str], composites_direct: set[str]):
    """All ops and composite functions reachable from the direct references."""
    op_names = set(core.ops)
    ops_hit = set(ops_direct)
    todo = [core.composites[c] for c in composites_direct if c in core.composites]
    seen: set[tuple[str, str]] = set()
    while todo:
        rel, name = todo.pop()
        if (rel, name) in seen or rel not in core.modules:
            continue
        seen.add((rel, name))
        fn = core.modules[rel].functions.get(name)
        if fn is None:
            continue
        hit, calls = _function_refs(core, rel, fn, op_names)
        ops_hit |= hit
        todo.extend(c for c in calls if c not in seen)
    public = {v: k for k, v in core.composites.items()}
    composites_hit = {public[s] for s in seen if s in public}
    return ops_hit, composites_hit, seen


@dataclass
class FrontendRefs:
    imports_core: bool = False
    core_modules: set[str] = field(default_factory=set)
    ops: set[str] = field(default_factory=set)
    composites: set[str] = field(default_factory=set)


def _aliases(core: Core, tree: ast.Module, refs: FrontendRefs) -> dict[str, str]:
    """Names bound to core modules in one file: ``{"lc": "", "num": "numeric", ...}``."""
    pkg_files = set(core.modules)
    op_names = set(core.ops)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == CORE or a.name.startswith(CORE + "."):
                    refs.imports_core = True
                    refs.core_modules.update(_absolute(a.name, pkg_files))
                    refs.core_modules.add("__init__.py")
                    local = a.asname or a.name.split(".")[0]
                    aliases[local] = a.name[len(CORE) + 1:] if a.asname else ""
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and (node.module == CORE or node.module.startswith(CORE + ".")):
            refs.imports_core = True
            refs.core_modules.add("__init__.py")
            refs.core_modules.update(_absolute(node.module, pkg_files))
            sub = node.module[len(CORE) + 1:]
            for a in node.names:
                full = f"{sub}.{a.name}" if sub else a.name
                refs.core_modules.update(_absolute(f"{CORE}.{full}", pkg_files))
                if sub == "numeric" and a.name in core.composites:
                    refs.composites.add(a.name)
                elif sub == "ops" and a.name in op_names:
                    refs.ops.add(a.name)
                else:
                    aliases[a.asname or a.name] = full
    _module_level_aliases(tree, aliases)
    return aliases


def _module_level_aliases(tree: ast.Module, aliases: dict[str, str]) -> None:
    """``num = lc.numeric`` (or ``ops, num = lc.ops, lc.numeric``) at module level binds
    ``num`` to ``numeric``."""
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for t in node.targets:
            if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = zip(t.elts, node.value.elts, strict=False)
            else:
                pairs = [(t, node.value)]
            for target, value in pairs:
                if not isinstance(target, ast.Name) \
                        or not isinstance(value, ast.Attribute | ast.Name):
                    continue
                chain = [value.id] if isinstance(value, ast.Name) else _chain(value)
                if chain and chain[0] in aliases:
                    aliases[target.id] = ".".join(
                        [p for p in aliases[chain[0]].split(".") if p] + chain[1:])


def _relative_target(path: Path, node: ast.ImportFrom) -> list[Path]:
    base = path.parent
    for _ in range(node.level - 1):
        base = base.parent
    if node.module:
        base = base.joinpath(*node.module.split("."))
        return [base.with_suffix(".py"), base / "__init__.py"]
    return [base / "__init__.py"]


def scan_frontend(core: Core, files: list[Path]) -> FrontendRefs:
    """What a frontend's source names in the core (following aliases that its own modules
    share: ``num = lc.numeric`` in one file, ``from .common import num`` in another)."""
    refs = FrontendRefs()
    pkg_files = set(core.modules)
    op_names = set(core.ops)
    trees = {path: _parse(path) for path in files}
    table = {path: _aliases(core, tree, refs) for path, tree in trees.items()}
    for _ in range(3):  # re-exports of re-exports
        for path, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level:
                    for target in _relative_target(path, node):
                        source = table.get(target, {})
                        for a in node.names:
                            if a.name in source:
                                table[path][a.asname or a.name] = source[a.name]
            _module_level_aliases(tree, table[path])
    for path, tree in trees.items():
        aliases = table[path]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                chain = _chain(node)
                if chain and chain[0] in aliases:
                    path_ = [p for p in aliases[chain[0]].split(".") if p] + chain[1:]
                    _note(core, refs, path_, op_names, pkg_files)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value in op_names:
                refs.ops.add(node.value)
    return refs


def _chain(node: ast.Attribute) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _note(core: Core, refs: FrontendRefs, path: list[str], op_names, pkg_files) -> None:
    if len(path) >= 2 and path[0] == "ops" and path[1] in op_names:
        refs.ops.add(path[1])
    elif len(path) >= 2 and path[0] == "ops" and f"linalg_{path[1]}" in op_names:
        refs.ops.add(f"linalg_{path[1]}")
    elif len(path) >= 2 and path[0] == "numeric" and path[1] in core.composites:
        refs.composites.add(path[1])
    elif path:
        refs.core_modules.update(_absolute(f"{CORE}.{path[0]}", pkg_files))


# -- the report -------------------------------------------------------------------------

@dataclass
class FrontendReport:
    name: str
    framework: str
    status: str                 # "ok" | "placeholder" | "missing"
    lines: int = 0
    core_lines_used: int = 0              # infrastructure + the reached names' own lines
    shared_fraction: float | None = None
    core_lines_by_module: int = 0         # the older measure: whole modules, see docstring
    shared_fraction_by_module: float | None = None
    ops_direct: int = 0
    ops_reached: int = 0
    composites_direct: int = 0
    composites_reached: int = 0
    api_entries: int | None = None
    api_unit: str = ""
    files: int = 0
    ops: list[str] = field(default_factory=list)          # the reached ops, by name
    composites: list[str] = field(default_factory=list)   # the reached composites


def _package_files(pkg_src: Path) -> list[Path]:
    return sorted(p for p in pkg_src.rglob("*.py") if "__pycache__" not in p.parts)


def analyse(root: Path, entries: bool = False) -> dict:
    core_src = root / "packages" / CORE / "src" / CORE
    core = load_core(core_src)
    total = sum(m.lines for m in core.modules.values())
    components: dict[str, int] = {}
    for rel, mod in sorted(core.modules.items()):
        comp = next((name for name, prefixes in COMPONENTS
                     if any(rel == p or (p.endswith("/") and rel.startswith(p))
                            for p in prefixes)), "other")
        components[comp] = components.get(comp, 0) + mod.lines
    ordered = {name: components[name] for name, _ in COMPONENTS if name in components}
    if "other" in components:
        ordered["other"] = components["other"]
    frontends = []
    for pkg_dir in sorted((root / "packages").iterdir()):
        name = pkg_dir.name
        if name == CORE or not (pkg_dir / "src" / name).is_dir():
            continue
        framework, unit, registries = FRONTENDS.get(name, (name, "API entries", ()))
        files = _package_files(pkg_dir / "src" / name)
        lines = sum(logical_lines(p.read_text(encoding="utf-8")) for p in files)
        refs = scan_frontend(core, files)
        report = FrontendReport(name, framework, "ok", lines=lines, api_unit=unit,
                                files=len(files))
        if not refs.imports_core or lines == 0:
            report.status = "placeholder"
            frontends.append(report)
            continue
        ops_hit, comps_hit, fns = reach(core, refs.ops, refs.composites)
        infra = core.closure(refs.core_modules | {"__init__.py"})
        if refs.composites:
            infra.add("numeric.py")
        by_module = infra | {core.ops[o] for o in ops_hit if o in core.ops} \
            | {rel for rel, _ in fns}
        report.core_lines_by_module = sum(core.modules[m].lines for m in by_module
                                          if m in core.modules)
        report.shared_fraction_by_module = round(
            report.core_lines_by_module / (report.core_lines_by_module + lines), 4)
        report.core_lines_used = round(_names_lines(core, infra, ops_hit, fns))
        report.shared_fraction = round(report.core_lines_used
                                       / (report.core_lines_used + lines), 4)
        report.ops_direct = len(refs.ops)
        report.ops_reached = len(ops_hit)
        report.composites_direct = len(refs.composites)
        report.composites_reached = len(comps_hit)
        report.ops, report.composites = sorted(ops_hit), sorted(comps_hit)
        if entries and registries:
            report.api_entries = count_entries(root, registries)
        frontends.append(report)
    return {
        "core": {"lines": total, "files": len(core.modules), "components": ordered,
                 "ops": len(core.ops), "composites": len(core.composites),
                 "ops_by_family": _by_family(core),
                 "op_families": {op: Path(rel).stem for op, rel in sorted(core.ops.items())},
                 "composite_names": sorted(core.composites)},
        "frontends": {f.name: asdict(f) for f in frontends},
    }


def _names_lines(core: Core, infra: set[str], ops_hit: set[str], fns) -> float:
    """Infrastructure modules whole; composite functions by their own lines; op-family
    files by the share of their declared ops that are reached."""
    total = float(sum(core.modules[m].lines for m in infra if m in core.modules))
    for rel, name in fns:
        if rel not in infra:
            total += core.modules[rel].function_lines.get(name, 0)
    for rel, mod in core.modules.items():
        if mod.ops and rel not in infra:
            hit = sum(1 for o in mod.ops if o in ops_hit and core.ops.get(o) == rel)
            total += mod.lines * hit / len(mod.ops)
    return total


def _by_family(core: Core) -> dict[str, int]:
    out: dict[str, int] = {}
    for rel in core.ops.values():
        family = Path(rel).stem
        out[family] = out.get(family, 0) + 1
    return dict(sorted(out.items()))


def count_entries(root: Path, registries: tuple[str, ...]) -> int | None:
    """Sum of ``len()`` of the frontend's registries, in a subprocess (imports the
    framework). None when the package or its framework cannot be imported."""
    code = (
        "import importlib, sys\n"
        "total, found = 0, False\n"
        f"for dotted in {list(registries)!r}:\n"
        "    mod, _, attr = dotted.rpartition('.')\n"
        "    try:\n"
        "        total += len(getattr(importlib.import_module(mod), attr)); found = True\n"
        "    except Exception as e:\n"
        "        print(f'{dotted}: {type(e).__name__}: {e}', file=sys.stderr)\n"
        "print(total if found else -1)\n")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=300, cwd=root)
        value = int(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None
    return value if value >= 0 else None


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def markdown(data: dict) -> str:
    core = data["core"]
    out = ["## Shared code per frontend", "",
           "| Frontend | Framework | Frontend lines | Core lines used | Shared | "
           "Shared by module | Core ops reached | Composites reached | API entries |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for f in data["frontends"].values():
        if f["status"] != "ok":
            out.append(f"| `{f['name']}` | {f['framework']} | {f['lines']} | - | - | - | - |"
                       f" - | {f['status']} |")
            continue
        entries = (f"{f['api_entries']} {f['api_unit']} → {f['ops_reached']} core ops"
                   if f["api_entries"] is not None else "n/a")
        out.append(f"| `{f['name']}` | {f['framework']} | {f['lines']} | "
                   f"{f['core_lines_used']} | {_pct(f['shared_fraction'])} | "
                   f"{_pct(f['shared_fraction_by_module'])} | "
                   f"{f['ops_reached']} / {core['ops']} | "
                   f"{f['composites_reached']} / {core['composites']} | {entries} |")
    out += ["", f"## The core: {core['lines']} logical lines, {core['ops']} ops,"
            f" {core['composites']} composites", "",
            "| Component | Logical lines | Share |", "| --- | ---: | ---: |"]
    for name, lines in core["components"].items():
        out.append(f"| {name} | {lines} | {_pct(lines / core['lines'] if core['lines'] else None)} |")
    out += ["", "| Op family | Ops |", "| --- | ---: |"]
    out += [f"| {fam} | {n} |" for fam, n in core["ops_by_family"].items()]
    out += ["", "Logical lines are statements, without blank lines, comments, docstrings or"
            " tests. \"Core lines used\" counts the core infrastructure modules a frontend"
            " imports plus the names it reaches (directly or through composites): each"
            " composite function's own lines and each op family's lines in proportion to"
            " its ops reached; shared = core lines used / (core lines used + frontend"
            " lines). \"By module\" is the older measure that counted a whole module as"
            " shared when one name in it was reached. Generated by `tools/reuse_metrics.py`"
            " (`nox -s reuse`)."]
    return "\n".join(out) + "\n"


def coverage_markdown(data: dict) -> str:
    """Which frontend reaches which core op and composite (generated from the registries)."""
    fronts = [f for f in data["frontends"].values() if f["status"] == "ok"]
    head = "| {} | " + " | ".join(f"`{f['name']}`" for f in fronts) + " |"
    rule = "| --- | --- | " + " | ".join(":---:" for _ in fronts) + " |"
    out = ["### Core ops reached by each frontend", "",
           head.format("Op | Family"), rule]
    for op, family in data["core"]["op_families"].items():
        marks = " | ".join("✓" if op in f["ops"] else "" for f in fronts)
        out.append(f"| `{op}` | {family} | {marks} |")
    out += ["", "### Composites reached by each frontend", "",
            "| Composite | " + " | ".join(f"`{f['name']}`" for f in fronts) + " |",
            "| --- | " + " | ".join(":---:" for _ in fronts) + " |"]
    for name in data["core"]["composite_names"]:
        marks = " | ".join("✓" if name in f["composites"] else "" for f in fronts)
        out.append(f"| `{name}` | {marks} |")
    return "\n".join(out) + "\n"


def package_lines(data: dict) -> dict[str, int]:
    """Logical lines per package: the core and each frontend."""
    return {CORE: data["core"]["lines"],
            **{name: f["lines"] for name, f in data["frontends"].items()}}


def over_line_budget(data: dict, budgets: dict[str, int]) -> list[str]:
    """A message for each package whose logical lines exceed its budget."""
    lines = package_lines(data)
    return [f"{name}: {lines[name]} logical lines > budget {limit}"
            for name, limit in budgets.items() if lines.get(name, 0) > limit]


def _budget(text: str) -> tuple[str, int]:
    name, _, value = text.partition("=")
    if not name or not value.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=N, got {text!r}")
    return name, int(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--json", type=Path, help="write the metrics as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the markdown tables here")
    parser.add_argument("--coverage", type=Path,
                        help="write the op/composite coverage tables (markdown) here")
    parser.add_argument("--entries", action="store_true",
                        help="import each frontend to count its API entries (needs the frameworks)")
    parser.add_argument("--max-lines", type=_budget, action="append", default=[],
                        metavar="NAME=N", help="logical-line budget of a package (repeatable)")
    args = parser.parse_args(argv)
    data = analyse(args.root, entries=args.entries)
    text = markdown(data)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text)
    if args.coverage:
        args.coverage.parent.mkdir(parents=True, exist_ok=True)
        args.coverage.write_text(coverage_markdown(data))
    if not args.json and not args.markdown and not args.coverage:
        sys.stdout.write(text)
    problems = over_line_budget(data, dict(args.max_lines))
    for p in problems:
        print(f"over budget: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
