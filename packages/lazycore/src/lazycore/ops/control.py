"""Loops: the ``scan`` op, ONE node holding its body, lowered to ``lax.scan`` (the
builder that captures the body, ``lazycore.loops.scan``, sits above the capture).

A recurrent layer unrolled over T time steps records T copies of its cell (thousands
of ops per step, each traced in Python and hashed); as a scan it records the cell once,
so the trace and the program do not grow with the sequence length, and XLA compiles
one loop. ``scan(body, init, xs, consts)`` traces ``body`` once on placeholder leaves
(the same capture as ``lazycore.subprogram``) and records a multi-output ``scan`` node
whose static attribute is the captured body. Values the body closes over (scalars it
made, device data it read) become extra operands of the node, passed on every call.

The op has no derivative rule of its own. A loop with ``saved`` in its spec also
outputs the residuals of JAX's vjp of the loop (``scan_vjp``: each step's activations,
stacked, what TF's and JAX's own loop gradients keep); ``lazycore.grad`` rebuilds that
vjp from them (``autodiff``'s ``scan_saved``), so no step runs twice and the backward is
one reverse loop. Unused, XLA drops them with the work behind them. A frontend may write
its backward as another ``scan`` instead (lazy_torch's recurrent layers do: a reverse
scan of the cell's gradient, the weight gradients one matmul over all steps afterwards).
"""

from __future__ import annotations

from functools import lru_cache

from .registry import defop, interpret

FAMILY = "control"


def _scan_rule(*avals, spec):
    return spec[-1]


def _scan_lower(*args, spec):
    return tuple(_jitted(spec)(*args))


@lru_cache(maxsize=256)
def _jitted(spec):
    """``lax.scan`` over the body, jitted once per spec: the interpreter tier dispatches
    it eagerly, and an eager ``lax.scan`` would re-trace its body every call."""
    import jax

    return jax.jit(_scan_function(spec))


def _scan_function(spec):
    """The loop as a JAX function. Its steps are checkpointed keeping only matrix
    products: differentiated, the backward recomputes a step's elementwise work (cheap,
    fused) instead of storing each intermediate per step."""
    import jax

    program, outputs, n_carry, n_x, n_const, length, reverse, saved, _ = spec

    def run(*args):
        if saved:
            out, vjp = scan_vjp(spec, args)
            return tuple(out) + tuple(jax.tree_util.tree_leaves(vjp))

        def step(carry, x):
            out = interpret(program, carry + x + tuple(args[n_carry + n_x:]), outputs)
            return tuple(out[:n_carry]), tuple(out[n_carry:])

        policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
        carry, ys = jax.lax.scan(jax.checkpoint(step, policy=policy), tuple(args[:n_carry]),
                                 tuple(args[n_carry:n_carry + n_x]), length=length,
                                 reverse=reverse)
        return carry + ys

    return run


def scan_vjp(spec, args):
    """``(outputs, vjp)``: ``jax.vjp`` of the loop with respect to its inexact inputs, of
    its inexact outputs (a pytree whose leaves are the residuals a ``saved`` loop outputs)."""
    import jax
    import jax.numpy as jnp

    diff = [k for k, v in enumerate(args) if jnp.issubdtype(v.dtype, jnp.inexact)]

    def f(*d):
        given = dict(zip(diff, d, strict=True))
        out = _scan_function(spec[:7] + (False,) + spec[8:])(
            *[given.get(k, v) for k, v in enumerate(args)])
        return [o for o in out if jnp.issubdtype(o.dtype, jnp.inexact)], out

    _, vjp, out = jax.vjp(f, *[args[k] for k in diff], has_aux=True)
    return out, vjp


@lru_cache(maxsize=256)
def residual_avals(spec, avals) -> tuple:
    """The avals of the residuals a ``saved`` loop outputs after its results, found once
    per loop and input avals by ``jax.eval_shape`` (``spec``'s own avals are not read)."""
    import jax

    from ..ir import Aval

    got = jax.eval_shape(_scan_function(spec), *[jax.ShapeDtypeStruct(a.shape, a.dtype)
                                                 for a in avals])
    return tuple(Aval(r.shape, r.dtype) for r in got[len(spec[1]):])


scan_op = defop("scan", FAMILY, _scan_rule, _scan_lower, multi_output=True)
