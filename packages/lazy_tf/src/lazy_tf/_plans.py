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
_CACHES: dict = {}   # kernel -> PlanCache {(signature, signature): plan, or False: general}
_filled = lc.trace.filled
_broadcast_shapes = lc.numeric.broadcast_shapes
_plans = lc.plans


def cache_for(kernel) -> lc.plans.PlanCache:
    """The plans of ``kernel`` (APIs sharing a kernel share its plans)."""
    cache = _CACHES.get(kernel)
    if cache is None:
        cache = _CACHES[kernel] = _plans.PlanCache()
    return cache


TAPES, STOPPED = _state.active_tapes, _state.stopped


def taping() -> bool:
    """While a tape records, operands are read by ``to_core`` and results wrapped by
    ``_dispatch.wrap``: both do the tape's bookkeeping."""
    return bool(TAPES) or STOPPED[0] > 0


# -- deriving a plan -------------------------------------------------------------------------

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
    return _plans.Fill(dtype, shape)


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
            step = _plans.tensor_step(s, shape=shape)
        steps.append(step)
    return _plans.binary_runner(kernel, *steps)


def learn(plans: dict, key: tuple, kernel, result: lc.Tensor, x, y) -> None:
    """Keep the plan of signatures ``key`` if it reproduces ``result`` (the general
    path's, on the operands ``x``, ``y``: core handles or scalars); else mark the key
    general. The kernel's dtype check passed for this key: the plan skips it. A plan
    is ``(run, shape, dtype)``: its result's TensorShape and DType are known too."""
    run = plan(kernel, *key)
    aval = result.node.aval
    if run is not None:
        try:
            ok = run(x, y).node.aval == aval
        except Exception:  # noqa: BLE001 - a plan that fails is no plan
            ok = False
        run = plan(getattr(kernel, "core_op", kernel), *key) if ok else None
    plans.keep(key, (run, *meta(aval)) if run is not None else None)


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
