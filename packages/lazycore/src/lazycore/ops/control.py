"""Loops: ``scan`` records a loop as ONE node holding its body, lowered to ``lax.scan``.

A recurrent layer unrolled over T time steps records T copies of its cell (thousands
of ops per step, each traced in Python and hashed); as a scan it records the cell once,
so the trace and the program do not grow with the sequence length, and XLA compiles
one loop. ``scan(body, init, xs, consts)`` traces ``body`` once on placeholder leaves
(the same capture as ``lazycore.subprogram``) and records a multi-output ``scan`` node
whose static attribute is the captured body. Values the body closes over (scalars it
made, device data it read) become extra operands of the node, passed on every call.

The op has no derivative rule: a frontend that needs gradients writes its backward as
another ``scan`` (lazy_torch's recurrent layers do: a reverse scan of the cell's
gradient, with the weight gradients taken as one matmul over all steps afterwards).
"""

from __future__ import annotations

from ..errors import ShapeError
from ..ir import Aval, Frozen
from .registry import defop

FAMILY = "control"


def _scan_rule(*avals, spec):
    return spec[-1]


_JITTED: dict = {}


def _scan_lower(*args, spec):
    """``lax.scan`` over the body, jitted once per spec: the interpreter tier dispatches
    it eagerly, and an eager ``lax.scan`` would re-trace its body every call."""
    fn = _JITTED.get(spec)
    if fn is None:
        import jax

        fn = _JITTED[spec] = jax.jit(_scan_function(spec))
        if len(_JITTED) > 256:
            _JITTED.pop(next(iter(_JITTED)))
    return tuple(fn(*args))


def _scan_function(spec):
    from jax import lax

    from ..autodiff import interpret

    program, outputs, n_carry, n_x, n_const, length, reverse, _ = spec

    def run(*args):
        init = tuple(args[:n_carry])
        xs = tuple(args[n_carry:n_carry + n_x])
        rest = tuple(args[n_carry + n_x:])

        def step(carry, x):
            out = interpret(program, carry + x + rest, outputs)
            return tuple(out[:n_carry]), tuple(out[n_carry:])

        carry, ys = lax.scan(step, init, xs, length=length, reverse=reverse)
        return carry + ys

    return run


scan_op = defop("scan", FAMILY, _scan_rule, _scan_lower, multi_output=True)


def scan(body, init, xs, consts=(), *, reverse: bool = False):
    """Run ``body(carry, x, consts) -> (new_carry, y)`` over the leading axis of ``xs``.

    ``init``, ``xs``, ``consts``: lists of ``lazycore.Tensor``; each ``xs`` entry has the
    loop length as its first dimension, the body sees one slice. ``new_carry`` must have
    ``init``'s shapes and dtypes. Returns (final carry list, list of stacked ``y``s, each
    with the loop length first). ``reverse``: run from the last slice to the first (the
    ``y``s are still stacked in input order). Records one node, whatever the length."""
    from ..autodiff import _cut_program
    from ..subprogram import capturing, placeholder
    from ..tensor import Tensor

    init, xs, consts = list(init), list(xs), list(consts)
    if not xs:
        raise ValueError("scan needs at least one sequence in xs")
    length = xs[0].shape[0] if xs[0].ndim else None
    for x in xs:
        if not x.ndim or x.shape[0] != length:
            raise ShapeError(f"scan: every xs entry needs the loop length {length} first, "
                             f"got {x.aval}", op="scan")
    holders = ([placeholder(t.aval, "carry") for t in init]
               + [placeholder(Aval(x.shape[1:], x.dtype), "x") for x in xs]
               + [placeholder(c.aval, "const") for c in consts])
    n_carry, n_x = len(init), len(xs)
    with capturing() as captured:
        new_carry, ys = body(holders[:n_carry], holders[n_carry:n_carry + n_x],
                             holders[n_carry + n_x:])
    new_carry, ys = list(new_carry), list(ys)
    if captured.checks:
        raise ShapeError("scan: a body that registers data checks (index bounds) is not "
                         "supported", op="scan")
    if len(new_carry) != n_carry:
        raise ShapeError(f"scan: the body returned {len(new_carry)} carries for {n_carry}",
                         op="scan")
    for a, b in zip(init, new_carry, strict=True):
        if a.aval != b.aval:
            raise ShapeError(f"scan: the body changed a carry from {a.aval} to {b.aval}",
                             op="scan")
    in_nodes = [h.node for h in holders]
    out_nodes = [t.node for t in new_carry + ys]
    program, leaves, _, outs = _cut_program(out_nodes, in_nodes)
    for leaf in leaves:
        if leaf.op == "failed":
            raise ShapeError(f"scan: the body depends on a value that failed: {leaf.value}",
                             op="scan")
    out_avals = (tuple(t.aval for t in new_carry)
                 + tuple(Aval((length,) + t.shape, t.dtype) for t in ys))
    spec = Frozen((program, outs, n_carry, n_x, len(consts) + len(leaves), length, reverse,
                   out_avals))
    values = scan_op(*init, *xs, *consts, *[Tensor(n) for n in leaves], spec=spec)
    return list(values[:n_carry]), list(values[n_carry:])
