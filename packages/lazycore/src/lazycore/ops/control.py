"""Loops: the ``scan`` op, ONE node holding its body, lowered to ``lax.scan`` (the
builder that captures the body, ``lazycore.loops.scan``, sits above the capture).

A recurrent layer unrolled over T time steps records T copies of its cell (thousands
of ops per step, each traced in Python and hashed); as a scan it records the cell once,
so the trace and the program do not grow with the sequence length, and XLA compiles
one loop. ``scan(body, init, xs, consts)`` traces ``body`` once on placeholder leaves
(the same capture as ``lazycore.subprogram``) and records a multi-output ``scan`` node
whose static attribute is the captured body. Values the body closes over (scalars it
made, device data it read) become extra operands of the node, passed on every call.

The op has no derivative rule of its own. ``lazycore.grad`` differentiates it through
JAX, reading the carry trail ``loops.scan`` records (``autodiff``'s ``scan_saved``), so
the forward loop runs once and the backward is one reverse loop. A frontend may write
its backward as another ``scan`` instead (lazy_torch's recurrent layers do: a reverse
scan of the cell's gradient, the weight gradients one matmul over all steps afterwards).
"""

from __future__ import annotations

from .registry import defop, interpret

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
