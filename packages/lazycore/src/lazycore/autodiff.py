"""Reverse-mode autodiff over the IR, for any frontend (lazy_tf's tape uses it).

``grad(outputs, inputs)`` traces ONE new multi-output node, ``vjp``, whose static
attribute is the sub-program from ``inputs`` to ``outputs``. Its lowering
interprets that sub-program inside ``jax.vjp``, so gradients are exact JAX
gradients, stay lazy, and fuse with the forward pass into one XLA program.
"""

from __future__ import annotations

import numpy as np

from . import ops
from .dtypes import is_inexact
from .ir import LEAF_OPS, Frozen, Node
from .ops.registry import defop, interpret
from .tensor import Tensor


def _cut_program(outputs: list[Node], wrt: list[Node], stop: frozenset = frozenset()):
    """Instructions for the interior between ``wrt`` (cut points) and ``outputs``.

    Returns (instructions, leaf operands, reached wrt mask, output positions)."""
    wrt_pos = {id(n): i for i, n in enumerate(wrt)}
    position: dict[int, int] = {}
    leaves: list[Node] = []
    interior: list[Node] = []
    reached = [False] * len(wrt)
    order: list[Node] = []
    for root in outputs:
        stack = [root]
        while stack:
            node = stack[-1]
            if id(node) in position:
                stack.pop()
                continue
            if id(node) in wrt_pos:
                reached[wrt_pos[id(node)]] = True
                position[id(node)] = ("wrt", wrt_pos[id(node)])
                stack.pop()
                continue
            if node.op in LEAF_OPS or id(node) in stop:
                position[id(node)] = ("leaf", len(leaves))
                leaves.append(node)
                stack.pop()
                continue
            pending = [o for o in node.operands if id(o) not in position]
            if pending:
                stack.extend(reversed(pending))
                continue
            stack.pop()
            position[id(node)] = ("node", len(interior))
            interior.append(node)
            order.append(node)
    n_wrt = len(wrt)

    def flat(p):
        kind, i = p
        return i if kind == "wrt" else n_wrt + i if kind == "leaf" else None

    n_args = n_wrt + len(leaves)
    instructions = []
    for node in interior:
        refs = []
        for o in node.operands:
            kind, i = position[id(o)]
            refs.append(n_args + i if kind == "node" else flat((kind, i)))
        instructions.append((node.op, node.attrs, tuple(refs)))
    outs = []
    for r in outputs:
        kind, i = position[id(r)]
        outs.append(n_args + i if kind == "node" else flat((kind, i)))
    return Frozen(instructions), leaves, reached, tuple(outs)


def _vjp_rule(*avals, program, n_wrt, n_leaves, outputs):
    return tuple(avals[:n_wrt])


def _vjp_lower(*args, program, n_wrt, n_leaves, outputs):
    import jax

    wrt = args[:n_wrt]
    leaves = args[n_wrt:n_wrt + n_leaves]
    cotangents = args[n_wrt + n_leaves:]

    def f(*w):
        return interpret(program, tuple(w) + tuple(leaves), outputs)

    _, pullback = jax.vjp(f, *wrt)
    return tuple(pullback(tuple(cotangents)))


vjp = defop("vjp", "autodiff", _vjp_rule, _vjp_lower, multi_output=True)


def grad(outputs, inputs, output_grads=None, constants=()) -> list[Tensor | None]:
    """d(sum of outputs * output_grads)/d(inputs), lazily. ``None`` for an input the
    outputs do not depend on, or of a non-differentiable (integer/bool) dtype.
    ``constants``: Tensors whose values are taken as given (gradients stop there), e.g.
    values a TF GradientTape did not record."""
    outputs, inputs = list(outputs), list(inputs)
    if output_grads is None:
        output_grads = [None] * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, output_grads, strict=True) if is_inexact(o.dtype)]
    diff_inputs = [i for i in inputs if is_inexact(i.dtype)]
    if not pairs or not diff_inputs:
        return [None] * len(inputs)
    cts = []
    for o, g in pairs:
        if g is None:
            g = ops.broadcast_in_dim(_one(o.dtype), shape=o.shape, broadcast_dimensions=())
        cts.append(g)
    wrt_nodes = [i.node for i in diff_inputs]
    stop = frozenset(id(c.node) for c in constants) - {id(n) for n in wrt_nodes}
    program, leaves, reached, outs = _cut_program([o.node for o, _ in pairs], wrt_nodes, stop)
    if not any(reached):
        return [None] * len(inputs)
    leaf_tensors = [Tensor(n) for n in leaves]
    results = vjp(*diff_inputs, *leaf_tensors, *cts, program=program, n_wrt=len(diff_inputs),
                  n_leaves=len(leaves), outputs=outs)
    by_input = {id(t): (r if ok else None)
                for t, r, ok in zip(diff_inputs, results, reached, strict=True)}
    return [by_input.get(id(i)) for i in inputs]


def _one(dtype) -> Tensor:
    from .trace import scalar

    return scalar(np.ones((), dtype), dtype)
