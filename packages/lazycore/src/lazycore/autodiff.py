"""Reverse-mode autodiff over the IR, for any frontend (lazy_tf's tape uses it).

``grad(outputs, inputs)`` traces ONE new multi-output node, ``vjp``, whose static
attribute is the sub-program from ``inputs`` to ``outputs``. Its lowering
interprets that sub-program inside ``jax.vjp``, so gradients are exact JAX
gradients, stay lazy, and fuse with the forward pass into one XLA program.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from . import ops
from .dtypes import is_inexact
from .ir import LEAF_OPS, Frozen, Node
from .ops.control import scan_vjp
from .ops.registry import OPS, defop
from .tensor import Tensor


def _through_values(roots, wrt, stop) -> set:
    """Positions of ``wrt`` reached from ``roots`` through derivative-carrying values: the
    gradient is None (TF's) past an integer/bool value or a piecewise-constant op, where
    JAX's is a zero (``argmax``, a comparison, ``floor``) that would hide the missing path."""
    pos, seen, found, stack = {id(n): i for i, n in enumerate(wrt)}, set(), set(), list(roots)
    while stack:
        node = stack.pop()
        if id(node) in pos:
            found.add(pos[id(node)])
        elif id(node) not in seen and id(node) not in stop and node.op not in _STEPS and (
                type(node.aval) is tuple or is_inexact(node.aval.dtype)):
            seen.add(id(node))
            stack.extend(node.operands)
    return found


_STEPS = frozenset({"floor", "ceil", "round_half_even", "round_half_away"})


def _cut_program(outputs: list[Node], wrt: list[Node], stop: frozenset = frozenset(),
                 reuse: bool = False):
    """Instructions for the interior between ``wrt`` (cut points) and ``outputs``.
    ``reuse`` (a backward): a ``scan`` inside becomes ``scan_saved``, reading the loop's
    results as leaves (``_saved_refs``) instead of running the loop again, and a
    ``stop_gradient`` is a leaf (its ``_saved_op`` would run its operand's backward on zeros).

    Returns (instructions, leaf operands, reached wrt mask, output positions)."""
    wrt_pos = {id(n): i for i, n in enumerate(wrt)}
    position: dict[int, int] = {}  # argument ref, or -1 - place in the interior
    leaves: list[Node] = []
    interior: list[Node] = []
    reached = [False] * len(wrt)
    for root in outputs:
        stack = [root]
        while stack:
            node = stack[-1]
            key = id(node)
            if key in wrt_pos:
                reached[wrt_pos[key]] = True
                position[key] = wrt_pos[key]
            elif key not in position and (node.op in LEAF_OPS or key in stop or reuse
                                          and node.op == "stop_gradient"):  # no backward behind it
                position[key] = len(wrt) + len(leaves)
                leaves.append(node)
            elif key not in position:
                pending = [o for o in node.operands if id(o) not in position]
                if pending:
                    stack.extend(reversed(pending))
                    continue
                position[key] = -1 - len(interior)
                interior.append(node)
            stack.pop()
    saved = _saved_refs(interior, position, leaves, len(wrt)) if reuse else {}
    for n in interior if reuse else ():  # the forward's results: see _saved_op
        if n.op != "tuple_get" and type(n.aval) is not tuple:
            saved[id(n)] = len(wrt) + len(leaves)
            leaves.append(n)
    n_args = len(wrt) + len(leaves)

    def ref(node):
        p = position[id(node)]
        return p if p >= 0 else n_args - 1 - p

    def head(n):
        if id(n) not in saved:
            return (n.op, n.attrs)
        if n.op == "scan":
            return ("scan_saved", n.attrs + (("saved", saved[id(n)]),))
        return ("saved", (("op", n.op), ("attrs", n.attrs), ("value", saved[id(n)])))

    instructions = [head(n) + (tuple(ref(o) for o in n.operands),) for n in interior]
    return Frozen(instructions), leaves, reached, tuple(ref(r) for r in outputs)


# a visible output's tuple_get node -> a saved ``loops.scan``'s residual gets (its vjp's
# residuals, ``ops.control.scan_vjp``): ``grad`` runs the loop's backward from them instead
# of running the forward loop again. Keyed by the visible outputs (the residuals refer to
# the scan node, never to them), so an entry lives as long as the loop's results.
TRAILS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _saved_op(ins, value, op, attrs):
    """``op`` on ``ins`` whose result is ``value`` (the forward's); its backward runs
    ``jax.vjp`` of the op alone (its re-run there is dead code, or merged by XLA's CSE).
    Re-running the whole forward inside the vjp relied on CSE merging each op with the
    forward's copy, which fails at the first op XLA rewrites differently (a softmax's
    divide by a shared divisor becomes a multiply, an op with a region is never merged)
    and then everything after it ran twice."""
    import jax
    import jax.numpy as jnp

    if not jnp.issubdtype(value.dtype, jnp.inexact):
        return value
    diff = [k for k, v in enumerate(ins) if jnp.issubdtype(v.dtype, jnp.inexact)]
    run = jax.custom_vjp(lambda *args: args[-1])

    def bwd(args, ct):
        def f(*d):
            full = dict(enumerate(args[:-1])) | dict(zip(diff, d, strict=True))
            return OPS[op].lower(*[full[k] for k in range(len(ins))], **dict(attrs))

        got = dict(zip(diff, jax.vjp(f, *[args[k] for k in diff])[1](ct), strict=True))
        return tuple(got.get(k) for k in range(len(ins))) + (None,)

    run.defvjp(lambda *args: (args[-1], args), bwd)
    return run(*ins, value)


def _saved_refs(interior, position, leaves, n_wrt) -> dict:
    """id(scan node) -> one argument ref per output (-1: unused) for each scan in the
    interior whose trail ``loops.scan`` recorded: its used outputs and its trail join
    the leaves, so the vjp reads the forward loop's results."""
    found: dict = {}
    for node in interior:
        scan = node.operands[0] if node in TRAILS else None  # its keys: scan outputs
        if scan is not None and position[id(scan)] < 0:
            if id(scan) not in found:
                trail = TRAILS[node]
                start = n_wrt + len(leaves)
                found[id(scan)] = ([-1] * (len(scan.aval) - len(trail))
                                   + list(range(start, start + len(trail))))
                leaves.extend(trail)
            found[id(scan)][node.attrs[0][1]] = n_wrt + len(leaves)
            leaves.append(node)
    return {k: tuple(v) for k, v in found.items()}


def _saved_scan(ins, outs, spec):
    """A scan whose results are ``outs`` (its forward loop's, zeros where unused; its
    residuals last), with the forward's own vjp as backward: ``scan_vjp``'s pullback
    rebuilt from the residuals, so the backward is one reverse loop and no step runs twice."""
    import jax
    import jax.numpy as jnp

    n_in, n_vis = len(ins), len(spec[1])
    shape = []
    jax.eval_shape(lambda *a: shape.append(jax.tree_util.tree_structure(scan_vjp(spec, a)[1])),
                   *ins)
    diff = [k for k, v in enumerate(ins) if jnp.issubdtype(v.dtype, jnp.inexact)]
    run = jax.custom_vjp(lambda *args: args[n_in:])

    def bwd(args, cts):
        pullback = jax.tree_util.tree_unflatten(shape[0], args[n_in + n_vis:])
        got = dict(zip(diff, pullback([c for c, o in zip(cts, outs[:n_vis], strict=False)
                                       if jnp.issubdtype(o.dtype, jnp.inexact)]), strict=True))
        return tuple(got.get(k) for k in range(n_in)) + (None,) * len(outs)

    run.defvjp(lambda *args: (args[n_in:], args), bwd)
    return run(*ins, *outs)


def _vjp_rule(*avals, program, n_wrt, n_leaves, outputs):
    return tuple(avals[:n_wrt])


def _vjp_lower(*args, program, n_wrt, n_leaves, outputs):
    import jax

    wrt = args[:n_wrt]
    leaves = args[n_wrt:n_wrt + n_leaves]
    cotangents = args[n_wrt + n_leaves:]

    def f(*w):  # ``interpret``, with ``scan_saved`` (``_cut_program``'s reuse) understood
        env = list(w) + list(leaves)
        for op, attrs, refs in program:
            at = dict(attrs)
            if op == "scan_saved":
                outs = [env[r] if r >= 0 else jax.numpy.zeros(a.shape, a.dtype)
                        for r, a in zip(at.pop("saved"), at["spec"][-1], strict=True)]
                env.append(_saved_scan([env[r] for r in refs], outs, **at))
            elif op == "saved":
                env.append(_saved_op([env[r] for r in refs], env[at["value"]], at["op"],
                                     at["attrs"]))
            else:
                env.append(OPS[op].lower(*[env[r] for r in refs], **at))
        return tuple(env[o] for o in outputs)

    _, pullback = jax.vjp(f, *wrt)
    return tuple(pullback(tuple(cotangents)))


vjp = defop("vjp", "autodiff", _vjp_rule, _vjp_lower, multi_output=True)


# gather node -> (index node, tag): a row gather whose gradient a frontend gives as rows
_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Rows(NamedTuple):
    """A gradient as rows: row ``indices[k]`` of the dense gradient gets ``values[k]``
    added (indices may repeat): TF's ``IndexedSlices``. ``tag``: the frontend's mark."""
    values: Tensor
    indices: Tensor
    tag: object


def mark_rows(out: Tensor, index: Tensor, tag=None) -> Tensor:
    """Record that ``out`` (a ``gather`` of rows ``index`` of its first operand, index
    dims first) has a row gradient; ``grad(..., rows=True)`` then gives an input whose
    every use is such a gather (through casts) its gradient as ``Rows``."""
    if out.node.op == "gather":
        _ROWS[out.node] = (index.node, tag)
    return out


def _row_uses(roots, wrt, stop) -> dict[int, list[Node]]:
    """wrt position -> its marked row gathers, for each wrt node used on the way to
    ``roots`` only as the rows of marked gathers (possibly through casts)."""
    cut = {id(n) for n in wrt}
    users: dict[int, list[Node]] = {}
    seen, stack = set(), list(roots)
    while stack:
        n = stack.pop()
        if id(n) in seen or id(n) in cut or id(n) in stop or n.op in LEAF_OPS:
            continue
        seen.add(id(n))
        for o in n.operands:
            users.setdefault(id(o), []).append(n)
        stack.extend(reversed(n.operands))  # first operands first: gathers in source order
    plan = {}
    for k, n in enumerate(wrt):
        found, todo, ok = [], [n], not any(r is n for r in roots)
        while todo and ok:
            m = todo.pop()
            for u in users.get(id(m), ()):
                if u in _ROWS and u.operands[0] is m and u.operands[1] is not m:
                    found.append(u)
                elif u.op == "convert" and is_inexact(u.aval.dtype):
                    todo.append(u)
                else:
                    ok = False
        if ok and found:
            plan[k] = found
    return plan


def _as_rows(gathers: list[Node], grads, dtype) -> Rows:
    """The row gradients of an input's gathers, concatenated in gather order."""
    values, indices = [], []
    for g, ct in zip(gathers, grads, strict=True):
        index, tag = _ROWS[g]
        flat = ops.reshape(Tensor(index), new_sizes=(int(np.prod(index.aval.shape)),))
        ct = ops.reshape(ct, new_sizes=flat.shape + g.operands[0].aval.shape[1:])
        values.append(ct if ct.dtype == dtype else ops.convert(ct, dtype=dtype))
        first = indices[0].dtype if indices else flat.dtype
        indices.append(flat if flat.dtype == first else ops.convert(flat, dtype=first))
    if len(values) == 1:
        return Rows(values[0], indices[0], tag)
    return Rows(ops.concatenate(*values, dimension=0), ops.concatenate(*indices, dimension=0),
                tag)


def grad(outputs, inputs, output_grads=None, constants=(), rows=False) -> list:
    """d(sum of outputs * output_grads)/d(inputs), lazily. ``None`` for an input the
    outputs do not depend on, or of a non-differentiable (integer/bool) dtype.
    ``constants``: Tensors whose values are taken as given (gradients stop there), e.g.
    values a TF GradientTape did not record. ``rows``: an input used only through
    ``mark_rows`` gathers gets ``Rows`` (TF's sparse gradient), not a dense Tensor."""
    outputs, inputs = list(outputs), list(inputs)
    if output_grads is None:
        output_grads = [None] * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, output_grads, strict=True) if is_inexact(o.dtype)]
    diff_inputs = list({id(i.node): i for i in inputs if is_inexact(i.dtype)}.values())
    if not pairs or not diff_inputs:
        return [None] * len(inputs)
    cts = []
    for o, g in pairs:
        if g is None:
            g = ops.broadcast_in_dim(_one(o.dtype), shape=o.shape, broadcast_dimensions=())
        cts.append(g)
    wrt_nodes = [i.node for i in diff_inputs]
    stop = frozenset(id(c.node) for c in constants) - {id(n) for n in wrt_nodes}
    roots = [o.node for o, _ in pairs]
    plan = _row_uses(roots, wrt_nodes, stop) if rows and _ROWS else {}
    wrt = [n for k, n in enumerate(wrt_nodes) if k not in plan]
    wrt += [g for k in sorted(plan) for g in plan[k]]
    program, leaves, reached, outs = _cut_program(roots, wrt, stop, reuse=True)
    live = _through_values(roots, wrt, stop)
    reached = [r and k in live for k, r in enumerate(reached)]
    if not any(reached):
        return [None] * len(inputs)
    leaf_tensors = [Tensor(n) for n in leaves]
    results = vjp(*[Tensor(n) for n in wrt], *leaf_tensors, *cts, program=program,
                  n_wrt=len(wrt), n_leaves=len(leaves), outputs=outs)
    got = iter([r if ok else None for r, ok in zip(results, reached, strict=True)])
    dense = {k: next(got) for k in range(len(wrt_nodes)) if k not in plan}
    for k in sorted(plan):
        dense[k] = _as_rows(plan[k], [next(got) for _ in plan[k]], diff_inputs[k].dtype)
    by_node = {id(t.node): dense[k] for k, t in enumerate(diff_inputs)}
    return [by_node.get(id(i.node)) if is_inexact(i.dtype) else None for i in inputs]


def _one(dtype) -> Tensor:
    from .trace import scalar

    return scalar(np.ones((), dtype), dtype)
