"""TF's operand conversion for binary kernels, decided once per operand signature.

A binary API (``tf.add``, ``tf.maximum``, ``x * 0.5``, ...) converts its operands with
TF's rules (``_convert.broadcast``: the first tensor's dtype wins, Python scalars
adopt it, a tensor of another dtype is refused) and broadcasts them before its kernel
runs. All of that depends only on the operands' signatures -- a lazy operand's core
aval, a Python scalar's type -- so each kernel keeps a plan per signature pair: which
operand is broadcast to what shape, which scalar becomes a fill of which dtype, and
whether the kernel's dtype check (TF's per-op dtype list) passed.

A signature's first call runs the general conversion (and raises where TF refuses);
only after the kernel succeeded is a plan derived, and it is kept only if it
reproduces that call's result aval. Other operand types (NumPy, tf.Tensor, lists,
NumPy scalars), Python ints out of the dtype's range and any error inside a plan take
the general conversion unchanged.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from . import _state
from ._convert import _PY_SCALARS, broadcast, int_range, scalar_accepted, to_core
from ._tensor import LazyTensor, handle, meta
from ._variable import Variable

LAZY = frozenset({LazyTensor, Variable})  # exact classes: other subclasses go general
SCALARS = frozenset(_PY_SCALARS)
_MAX_PLANS = 1024  # per kernel; a program with ever new shapes must not grow it forever
_CACHES: dict = {}   # kernel -> {(signature, signature): plan, or False for "general"}
_filled = lc.trace.filled
_broadcast_to = lc.numeric.broadcast_to
_broadcast_shapes = lc.numeric.broadcast_shapes


def cache_for(kernel) -> dict:
    """The plans of ``kernel`` (APIs sharing a kernel share its plans)."""
    return _CACHES.setdefault(kernel, {})


TAPES, STOPPED = _state.active_tapes, _state.stopped


def taping() -> bool:
    """While a tape records, operands are read by ``to_core`` and results wrapped by
    ``_dispatch.wrap``: both do the tape's bookkeeping."""
    return bool(TAPES) or STOPPED[0] > 0


# -- deriving a plan -------------------------------------------------------------------------

class _Fill(tuple):
    """A plain scalar step: ``filled(v, dtype, shape)`` (runners inline it)."""


def _scalar_step(kind: type, dtype: np.dtype, shape: tuple):
    """A Python scalar of type ``kind`` -> its fill (``to_core`` + broadcast), or None
    where TF refuses every value of that type for ``dtype``."""
    if not scalar_accepted(kind, dtype):
        return None
    if kind is int and lc.dtypes.is_integer(dtype):
        lo, hi = int_range(dtype)

        def checked(v):
            if not lo <= v <= hi:  # TF's answer depends on the value: the general path
                raise OverflowError(f"{v} does not fit {dtype}")
            return _filled(v, dtype, shape)
        return checked
    return _Fill((dtype, shape))


def _tensor_step(aval, shape: tuple):
    """A lazy operand's broadcast to the result shape; None when it already has it."""
    if aval.shape == shape:
        return None
    return lambda t: _broadcast_to(t, shape)


def _callable(step):
    if isinstance(step, _Fill):
        dtype, shape = step
        return lambda v: _filled(v, dtype, shape)
    return step


def _runner(kernel, step_x, step_y):
    """``(x, y) -> kernel(step_x(x), step_y(y))`` with as few Python frames as possible:
    this runs once per traced op."""
    if step_x is None and step_y is None:
        return kernel
    if step_x is None and isinstance(step_y, _Fill):
        dtype, shape = step_y
        return lambda x, y: kernel(x, _filled(y, dtype, shape))
    if step_y is None and isinstance(step_x, _Fill):
        dtype, shape = step_x
        return lambda x, y: kernel(_filled(x, dtype, shape), y)
    step_x, step_y = _callable(step_x), _callable(step_y)
    if step_x is None:
        return lambda x, y: kernel(x, step_y(y))
    if step_y is None:
        return lambda x, y: kernel(step_x(x), y)
    return lambda x, y: kernel(step_x(x), step_y(y))


def plan(kernel, sx, sy):
    """``(x, y) -> core result`` for operands of signatures ``sx``, ``sy`` (a core aval,
    or a Python scalar type), in TF's argument order; None where no plan applies."""
    avals = [s for s in (sx, sy) if not isinstance(s, type)]
    if not avals:
        return None
    dtype = avals[0].dtype
    if any(a.dtype != dtype for a in avals):
        return None  # TF refuses mixed dtypes
    try:
        shape = _broadcast_shapes(*[a.shape for a in avals])
    except lc.ShapeError:
        return None
    steps = []
    for s in (sx, sy):
        if isinstance(s, type):
            step = _scalar_step(s, dtype, shape)
            if step is None:
                return None
        else:
            step = _tensor_step(s, shape)
        steps.append(step)
    return _runner(kernel, *steps)


def learn(plans: dict, key: tuple, kernel, result: lc.Tensor, x, y) -> None:
    """Keep the plan of signatures ``key`` if it reproduces ``result`` (the general
    path's, on the operands ``x``, ``y``: core handles or scalars); else mark the key
    general. The kernel's dtype check passed for this key: the plan skips it. A plan
    is ``(run, shape, dtype)``: its result's TensorShape and DType are known too."""
    if len(plans) >= _MAX_PLANS:
        plans.clear()
    run = plan(kernel, *key)
    aval = result.node.aval
    if run is not None:
        try:
            ok = run(x, y).node.aval == aval
        except Exception:  # noqa: BLE001 - a plan that fails is no plan
            ok = False
        run = plan(getattr(kernel, "core_op", kernel), *key) if ok else None
    plans[key] = (run, *meta(aval)) if run is not None else False


# -- the general path of a binary kernel ------------------------------------------------------

def read(v, tape: bool):
    """(core handle or scalar, signature) of an operand; signature None off the plans."""
    kind = v.__class__
    if kind in LAZY:
        h = to_core(v) if tape else v.__dict__.get("_h") or handle(v)
        return h, h.node.aval
    if kind in SCALARS:
        return v, kind
    return v, None


def binary(kernel):
    """``(x, y) -> kernel(*broadcast(x, y))`` for TF operands, from a plan once the
    operands' signatures have one."""
    plans = cache_for(kernel)

    def run(x, y):
        tape = taping()
        hx, sx = read(x, tape)
        hy, sy = read(y, tape)
        key = (sx, sy)
        known = plans.get(key) if sx is not None and sy is not None else False
        if known:
            try:
                return known[0](hx, hy)
            except Exception:  # noqa: BLE001 - the general conversion raises TF's error
                pass
        out = kernel(*broadcast(x, y))
        if known is None:
            learn(plans, key, kernel, out, hx, hy)
        return out
    return run
