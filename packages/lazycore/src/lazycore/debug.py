"""IR and HLO text for pending values: what would run at the next sync.

Each function takes a tensor or a list of them: core ``Tensor`` handles or any
frontend's lazy tensor (a torch ``LazyTensor``, a ``LazyArray``, a lazy_tf tensor: anything
with ``__lazycore_tensor__``). With sources on (debug, verify, ``LAZYCORE_SOURCES=1``)
each op is annotated with the user's ``file:line`` that recorded it.

- ``ir_text``: the lazycore IR as a listing; ``ir_dot``: the same graph as Graphviz DOT
  (``dot -Tsvg graph.dot -o graph.svg``);
- ``stablehlo_text``: the lowered program; ``hlo_text``: the optimized HLO after XLA's
  passes; ``fusions`` / ``fusion_count``: what XLA fused into which kernels;
- ``graph_hash``: the structural hash the compile cache keys on;
- ``sharding_text`` / ``sharding_of``: how a value is split over a device mesh.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from . import sharding as _sharding
from .interop import unwrap
from .listing import aval_str, program_ir_text  # noqa: F401 (lc.debug.program_ir_text)
from .lowering import hlo_text as _hlo
from .lowering import linearize
from .lowering import stablehlo_text as _stablehlo
from .sharded import sharding_of, sharding_text  # noqa: F401  (layout and per-device shapes)
from .sources import site_of


def _roots(tensors):
    if unwrap(tensors) is not None:
        tensors = [tensors]
    roots = []
    for t in tensors:
        core = unwrap(t)
        if core is None:
            raise TypeError(f"expected a lazy tensor (lazycore.Tensor or a frontend's), got"
                            f" {type(t).__name__}")
        roots.append(core.node)
    return roots


def ir_text(tensors) -> str:
    """A readable listing of the graph computing ``tensors``."""
    return program_ir_text(linearize(_roots(tensors)))


def stablehlo_text(tensors) -> str:
    """The StableHLO module the next sync would hand to XLA (before XLA's own passes)."""
    program = linearize(_roots(tensors))
    return _stablehlo(program, _input_shardings(program))


def hlo_text(tensors) -> str:
    """Optimized HLO (after XLA fusion and, on a device mesh, SPMD partitioning)."""
    program = linearize(_roots(tensors))
    return _hlo(program, _input_shardings(program))


def _input_shardings(program):
    placement = _sharding.plan(program)
    return placement.shardings if placement else None


def graph_hash(tensors) -> int:
    """A hash of the structural key the compile cache files the program computing
    ``tensors`` under: two steps with different hashes compile separately."""
    return hash(linearize(_roots(tensors)).key)


# -- Graphviz ---------------------------------------------------------------------------

_LEAF_STYLE = {"data": "shape=box, style=filled, fillcolor=lightblue",
               "param": "shape=box, style=filled, fillcolor=khaki",
               "const": "shape=box, style=filled, fillcolor=lightgrey",
               "failed": "shape=box, style=filled, fillcolor=salmon"}


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def ir_dot(tensors, *, name: str = "lazycore") -> str:
    """The graph computing ``tensors`` as a Graphviz DOT digraph.

    Leaves are boxes (device data blue, scalar parameters yellow, baked constants
    grey); outputs have a double border; edges run from operand to user.
    """
    program = linearize(_roots(tensors))
    outputs = set(program.output_positions)
    lines = [f'digraph "{_dot_escape(name)}" {{', "  rankdir=TB;",
             '  node [fontname="monospace", fontsize=10];']
    for i, (node, operands) in enumerate(zip(program.nodes, program.operand_positions,
                                             strict=True)):
        head = f"%{i} {node.op}"
        if node.op in ("param", "const") and np.size(node.value) <= 4:
            head += f" {np.asarray(node.value).tolist()}"
        attrs = ", ".join(f"{k}={v}" for k, v in node.attrs)
        parts = [head, attrs[:60], aval_str(node.aval)] if attrs else [head, aval_str(node.aval)]
        site = None if node.is_leaf else site_of(node)
        if site:
            parts.append(site.rpartition("/")[2])  # file name and line: the full path is long
        label = "\\n".join(_dot_escape(p) for p in parts)  # DOT's line break is \n
        style = _LEAF_STYLE.get(node.op, "shape=ellipse")
        if i in outputs:
            style += ", peripheries=2"
        lines.append(f'  n{i} [label="{label}", {style}];')
        lines.extend(f"  n{p} -> n{i};" for p in operands)
    lines.append("}")
    return "\n".join(lines)


# -- what XLA fused -------------------------------------------------------------------

@dataclass(frozen=True)
class Fusion:
    """One fused kernel of the optimized HLO: its name, XLA fusion kind and the ops inside."""

    name: str
    kind: str
    ops: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind}): {', '.join(self.ops)}"


_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%(\S+)\s*\(.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%(\S+)\s*=\s*.*?\s([a-z][a-z0-9_-]*)\((.*)$")
_SKIP_IN_COUNT = frozenset({"parameter", "constant", "bitcast", "tuple", "get-tuple-element"})


def parse_fusions(hlo: str) -> list[Fusion]:
    """The fusion instructions of an optimized HLO module, in program order."""
    bodies: dict[str, list[str]] = {}
    calls: list[tuple[str, str, str]] = []
    current = None
    for line in hlo.splitlines():
        m = _COMPUTATION.match(line)
        if m:
            current = m.group(1)
            bodies[current] = []
            continue
        if line.strip() == "}":
            current = None
            continue
        ins = _INSTRUCTION.match(line)
        if ins is None or current is None:
            continue
        name, opcode, rest = ins.groups()
        bodies[current].append(opcode)
        if opcode == "fusion":
            kind = re.search(r"kind=(\w+)", rest)
            called = re.search(r"calls=%([\w.\-]+)", rest)
            calls.append((name, kind.group(1) if kind else "?",
                          called.group(1) if called else ""))
    return [Fusion(name, kind, tuple(op for op in bodies.get(called, ())
                                     if op not in _SKIP_IN_COUNT))
            for name, kind, called in calls]


def fusions(tensors) -> list[Fusion]:
    """The kernels XLA made of the program computing ``tensors`` (after its fusion passes)."""
    return parse_fusions(hlo_text(tensors))


def frontend_entry(fn):
    """``fn`` taking the tensors as arguments (``ir_text(a, b)``): what a frontend's
    ``debug`` module exports, so every frontend offers the same tools."""
    @functools.wraps(fn)
    def entry(*tensors, **kwargs):
        return fn(list(tensors), **kwargs)
    return entry


#: The tools each frontend's ``debug`` module re-exports through ``frontend_entry``.
FRONTEND_TOOLS = ("ir_text", "ir_dot", "stablehlo_text", "hlo_text", "fusions",
                  "fusion_count", "graph_hash")


def fusion_count(tensors) -> int:
    """How many fused kernels the optimized program has (fewer kernels: more fusion)."""
    return len(fusions(tensors))
