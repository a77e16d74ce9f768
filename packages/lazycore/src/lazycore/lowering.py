"""Graph -> jax function -> compiled XLA executable, and IR/StableHLO/HLO text.

``linearize`` turns the graph under some roots into a ``Program``: a topologically
ordered instruction list with explicit operand positions, its inputs (data and
parameter leaves) and outputs. The program's ``key`` is what the compile cache looks
up: node hashes plus operand positions (which leaves are shared) and leaf avals.
``to_function`` interprets a program with each op's ``jax.lax`` lowering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import jax
import numpy as np

from .ir import Node
from .ops.registry import OPS


@dataclass
class Program:
    nodes: list[Node]
    operand_positions: list[tuple[int, ...]]
    input_positions: list[int]
    output_positions: list[int]
    key: tuple
    inputs: list[Node] = field(default_factory=list)

    def input_avals(self):
        return [n.aval for n in self.inputs]


def linearize(roots: list[Node]) -> Program:
    """Post-order the graph under ``roots`` (iteratively: graphs can be deep).

    This runs on every sync, so it is written for speed: one pass, C-level maps."""
    position: dict[int, int] = {}
    nodes: list[Node] = []
    for root in roots:
        if id(root) in position:
            continue
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            operands = node.operands
            if i < len(operands):
                stack[-1] = (node, i + 1)
                child = operands[i]
                if id(child) not in position:
                    stack.append((child, 0))
            else:
                stack.pop()
                if id(node) not in position:  # a shared child may finish twice on a path
                    position[id(node)] = len(nodes)
                    nodes.append(node)
    lookup = position.__getitem__
    operand_positions = [tuple(map(lookup, map(id, n.operands))) for n in nodes]
    input_positions = [i for i, n in enumerate(nodes) if n.op in _INPUT_OPS]
    inputs = [nodes[i] for i in input_positions]
    key_parts = tuple(zip([n.hash for n in nodes], operand_positions, strict=True))
    outputs = [position[id(r)] for r in roots]
    key = (key_parts, tuple(outputs))
    return Program(nodes, operand_positions, input_positions, outputs, key, inputs)


_INPUT_OPS = frozenset({"data", "param", "failed"})


def to_function(program: Program):
    """A pure function ``f(*inputs) -> tuple(outputs)`` built from lowering rules."""
    instructions = []
    for node, ops_pos in zip(program.nodes, program.operand_positions, strict=True):
        if node.op in ("data", "param"):
            instructions.append(None)
        elif node.op == "const":
            instructions.append(("const", np.asarray(node.value)))
        elif node.op == "tuple_get":
            instructions.append(("get", ops_pos[0], node.attrs[0][1]))
        else:
            instructions.append(("op", OPS[node.op].lower, ops_pos, dict(node.attrs)))
    input_positions = program.input_positions
    outputs = program.output_positions

    def run(*args):
        env: list = [None] * len(instructions)
        for pos, arg in zip(input_positions, args, strict=True):
            env[pos] = arg
        for i, ins in enumerate(instructions):
            if ins is None:
                continue
            kind = ins[0]
            if kind == "op":
                try:
                    env[i] = ins[1](*[env[p] for p in ins[2]], **ins[3])
                except Exception as e:
                    e.lazy_op = program.nodes[i].op  # the runtime names it in its error
                    raise
            elif kind == "get":
                env[i] = env[ins[1]][ins[2]]
            else:
                env[i] = ins[1]
        return tuple(env[p] for p in outputs)

    return run


def abstract_args(program: Program, shardings=None):
    if shardings is None:
        return [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in program.input_avals()]
    return [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s)
            for a, s in zip(program.input_avals(), shardings, strict=True)]


def lower(program: Program, donate: tuple[int, ...] = (), shardings=None):
    """``jax.stages.Lowered`` for the program (StableHLO available via ``.as_text()``).

    ``shardings``: one ``jax.sharding.Sharding`` per input (``sharding.plan``) for a
    program that runs on a device mesh; jit takes them as its input shardings and
    leaves the outputs' to XLA's propagation."""
    fn = to_function(program)
    jitted = jax.jit(fn, donate_argnums=donate)
    return jitted.lower(*abstract_args(program, shardings))


def stablehlo_text(program: Program, shardings=None) -> str:
    return lower(program, (), shardings).as_text()


def hlo_text(program: Program, shardings=None) -> str:
    """Optimized HLO after XLA's passes (shows fusion, and the collectives SPMD added)."""
    return lower(program, (), shardings).compile().as_text()
