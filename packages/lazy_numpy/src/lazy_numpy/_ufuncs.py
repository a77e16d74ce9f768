"""``__array_ufunc__``: every ufunc call and method, traced through the kernel table.

Loop dtypes come from NumPy itself (``ufunc.resolve_dtypes``, which implements NEP 50
with weak Python scalars), so ``int8 + 300`` raises ``OverflowError``, ``int / int``
is float64 and ``sqrt(int8)`` is float16 exactly as in NumPy. The kernels in
``_kernels`` then compute in those dtypes (real 64-bit where NumPy is 64-bit).
Methods: ``__call__`` (with ``out=``, ``where=``, ``dtype=``), ``reduce``,
``accumulate``, ``outer`` and ``at``; anything else falls back to NumPy (counted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

import lazycore as lc

from . import _fallback
from ._array import LazyArray
from ._convert import cast_like_c, numpy_errors, promotion_key, tensor
from ._fallback import NotLazy
from ._kernels import GUFUNCS, HALF_NATIVE, IN_OUTPUT_DTYPE, KERNELS

_numeric = lc.numeric
_resolved: dict = {}
_FLOAT32 = np.dtype(np.float32)
_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"})


def resolve(ufunc, keys: tuple, dtype=None, casting="same_kind") -> tuple:
    """Loop dtypes (inputs..., outputs...) as NumPy would pick them (memoized)."""
    cache_key = (ufunc, keys, dtype, casting)
    loop = _resolved.get(cache_key)
    if loop is None:
        if dtype is not None:
            signature = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
            loop = ufunc.resolve_dtypes(keys + (None,) * ufunc.nout, signature=signature,
                                        casting=casting)
        else:
            loop = ufunc.resolve_dtypes(keys + (None,) * ufunc.nout, casting=casting)
        _resolved[cache_key] = loop
    return loop


def _operands(ufunc, inputs, dtype, casting):
    keys = tuple(promotion_key(x) for x in inputs)
    loop = resolve(ufunc, keys, dtype, casting)
    try:
        tensors = [tensor(x, d) for x, d in zip(inputs, loop, strict=False)]
    except OverflowError:
        if ufunc.__name__ not in _COMPARISONS:
            raise
        # NumPy compares out-of-range Python ints exactly: widen the loop instead
        keys = tuple(np.dtype(np.float64) if isinstance(k, type) else k for k in keys)
        loop = resolve(ufunc, tuple(np.dtype(np.float64) if k.kind in "iu" else k
                                    for k in keys), None, casting)
        tensors = [tensor(x, d) for x, d in zip(inputs, loop, strict=False)]
    return tensors, loop


def call(ufunc, inputs, kwargs):
    name = ufunc.__name__
    kernel = KERNELS.get(name)
    if kernel is None:
        raise NotLazy(name)
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", True)
    dtype = kwargs.pop("dtype", None)
    casting = kwargs.pop("casting", "same_kind")
    signature = kwargs.pop("signature", None)
    kwargs.pop("subok", None)
    kwargs.pop("order", None)
    if kwargs or signature is not None or casting in ("no", "equiv"):
        raise NotLazy(name)  # axes=, axis=, keepdims= of gufuncs; resolve_dtypes of a
        # Python scalar under casting="equiv" crashes NumPy 2.4
    if dtype is not None:
        dtype = np.dtype(dtype)
    fast = _static_power(name, inputs, out, where, dtype, casting, ufunc)
    if fast is not None:
        return fast
    tensors, loop = _operands(ufunc, inputs, dtype, casting)
    if out is not None:  # NumPy checks output casting before broadcasting the inputs
        for o, d in zip(out if isinstance(out, tuple) else (out,), loop[ufunc.nin:],
                        strict=False):
            if o is not None and not np.can_cast(d, o.dtype, casting):
                raise _casting_error(ufunc, d, o.dtype)
    if name not in GUFUNCS:
        tensors = _numeric.broadcast_arrays(*tensors) if len(tensors) > 1 else tensors
    results = _run_kernel(name, kernel, tensors, loop[ufunc.nin:])
    if not isinstance(results, tuple):
        results = (results,)
    results = [_numeric.cast(r, d) for r, d in zip(results, loop[ufunc.nin:], strict=True)]
    return _finish(name, results, out, where, casting)


class Plan(NamedTuple):
    """What ``call`` decides for one operand signature, so an operator can replay it:
    per input the loop dtype and the kernel's dtype (None: no cast), the broadcast
    shape, the kernel and the output dtype."""

    loop: tuple
    kernel_in: tuple
    shape: tuple
    kernel: Callable
    out: np.dtype


def plan(ufunc, keys: tuple, shapes: tuple) -> Plan | None:
    """The plan of ``call(ufunc, inputs, {})`` for inputs with these promotion keys and
    shapes (None for a Python scalar); None where ``call`` would do anything else (a
    Python int exponent of ``power``: ``_static_power``). Gufuncs (``matmul``) have no
    broadcast step: their plan's shape is None."""
    name = ufunc.__name__
    kernel = KERNELS.get(name)
    if kernel is None or ufunc.nout != 1 or (name == "power" and keys[-1] is int):
        return None
    try:
        loop = resolve(ufunc, keys)
        shape = None if name in GUFUNCS else _numeric.broadcast_shapes(
            *[s for s in shapes if s is not None])
    except (TypeError, ValueError, lc.LazyError):
        return None
    ins, out = loop[:ufunc.nin], loop[ufunc.nin]
    if any(k is complex and d.kind != "c" for k, d in zip(keys, ins, strict=True)):
        return None  # ``tensor`` refuses the conversion: ``call`` raises
    return Plan(ins, kernel_casts(name, ins, (out,)), shape, kernel, out)


def _static_power(name, inputs, out, where, dtype, casting, ufunc):
    """``x ** n`` with a Python int ``n``: XLA's integer_pow (repeated squaring), as
    numexpr and jax.numpy do, instead of a general pow with the exponent as a parameter."""
    if name != "power" or out is not None or where is not True or len(inputs) != 2:
        return None
    n = inputs[1]
    if type(n) is not int or abs(n) > 64:
        return None
    tensors, loop = _operands(ufunc, (inputs[0], n), dtype, casting)
    x, out_dtype = tensors[0], loop[ufunc.nin]
    if np.dtype(out_dtype).kind in "iu" and n < 0:
        if x.size:  # NumPy's loop raises on its first element
            raise ValueError("Integers to negative integer powers are not allowed.")
        return None
    return LazyArray(int_power(x, n, out_dtype))


def int_power(x, n: int, out_dtype):
    """``integer_pow`` in ``out_dtype``; float16 in float32, rounded once (NumPy's half
    loops), not rounded after every multiplication."""
    k = kernel_casts("power", (out_dtype,), (out_dtype,))[0] or out_dtype
    return _numeric.cast(lc.ops.integer_pow(_numeric.cast(x, k), y=n), out_dtype)


def _casting_error(ufunc, from_dtype, to_dtype) -> TypeError:
    """NumPy's own UFuncTypeError subclass where available (it is private)."""
    cls = getattr(getattr(np._core, "_exceptions", None), "_UFuncOutputCastingError", None)
    if cls is not None:
        return cls(ufunc, "same_kind", np.dtype(from_dtype), np.dtype(to_dtype), 0)
    return TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {from_dtype!r} to "
                     f"{to_dtype!r} with casting rule 'same_kind'")


def _run_kernel(name, kernel, tensors, out_dtypes):
    casts = kernel_casts(name, tuple(t.dtype for t in tensors), out_dtypes)
    return kernel(*[t if d is None else _numeric.cast(t, d)
                    for t, d in zip(tensors, casts, strict=True)])


def kernel_casts(name, in_dtypes, out_dtypes) -> tuple:
    """Per input, the dtype its kernel computes in when that is not the loop's (else
    None); shared by ``call`` and the operator plans so both record the same casts."""
    if name in IN_OUTPUT_DTYPE:
        return tuple(None if d == out_dtypes[0] else out_dtypes[0] for d in in_dtypes)
    if in_dtypes and in_dtypes[0] == np.float16 and name not in HALF_NATIVE:
        # NumPy evaluates half-precision loops in float32 and rounds once
        return tuple(_FLOAT32 if d == np.float16 else None for d in in_dtypes)
    return (None,) * len(in_dtypes)


def _finish(name, results, out, where, casting="same_kind"):
    outs = out if out is not None else (None,) * len(results)
    if len(outs) != len(results):
        raise ValueError(f"{name}: 'out' must have {len(results)} entries")
    final = []
    for r, o in zip(results, outs, strict=True):
        final.append(_store(name, r, o, where, casting))
    return final[0] if len(final) == 1 else tuple(final)


def _store(name, r, out, where, casting):
    if out is None:
        if where is not True:
            w = tensor(where, np.bool_)
            shape = _numeric.broadcast_shapes(w.shape, r.shape)
            # NumPy leaves unselected entries uninitialized; we give zeros
            r = _numeric.where(_numeric.broadcast_to(w, shape), _numeric.broadcast_to(r, shape),
                               _numeric.zeros(shape, r.dtype))
        return LazyArray(r)
    if not np.can_cast(r.dtype, out.dtype, casting):
        raise TypeError(f"Cannot cast ufunc '{name}' output from {r.dtype!r} to "
                        f"{out.dtype!r} with casting rule '{casting}'")
    try:
        shape = _numeric.broadcast_shapes(r.shape, out.shape)
    except lc.ShapeError:
        shape = None
    if shape != tuple(out.shape):
        raise ValueError(f"non-broadcastable output operand with shape {tuple(out.shape)} "
                         f"doesn't match the broadcast shape {r.shape}")
    r = _numeric.broadcast_to(cast_like_c(r, out.dtype), out.shape)
    if isinstance(out, np.ndarray):
        host = lc.to_numpy(r)
        np.copyto(out, host, where=True if where is True else np.asarray(where))
        return out
    if where is not True:
        w = _numeric.broadcast_to(tensor(where, np.bool_), out.shape)
        r = lc.ops.select(w, r, out._t)
    out._t = r
    return out


# -- reduce / accumulate / outer / at ---------------------------------------------------

_REDUCERS = {
    "add": ("reduce_sum", 0), "multiply": ("reduce_prod", 1),
    "maximum": ("reduce_max", None), "minimum": ("reduce_min", None),
    "logical_and": ("reduce_and", True), "logical_or": ("reduce_or", False),
    "bitwise_and": ("reduce_and", -1), "bitwise_or": ("reduce_or", 0),
    "bitwise_xor": ("reduce_xor", 0),
}
_NO_VALUE = np._NoValue


def reduce(ufunc, inputs, kwargs):
    name = ufunc.__name__
    if name not in _REDUCERS or len(inputs) != 1:
        raise NotLazy(name)
    op_name, identity = _REDUCERS[name]
    x = tensor(inputs[0])
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    keepdims = kwargs.pop("keepdims", False)
    initial = kwargs.pop("initial", _NO_VALUE)
    where = kwargs.pop("where", True)
    if kwargs:
        raise NotLazy(name)
    if name.startswith("logical"):
        x = _numeric.cast(x, np.bool_)
    elif name.startswith("bitwise"):
        resolve(ufunc, (x.dtype, x.dtype))  # TypeError for floats, as NumPy
    if where is not True:
        fill = initial if initial is not _NO_VALUE else identity
        if fill is None:
            raise ValueError(f"reduction operation '{name}' does not have an identity, so to "
                             "use a where mask one has to specify 'initial'")
        w = _numeric.broadcast_to(tensor(where, np.bool_), x.shape)
        x = lc.ops.select(w, x, _numeric.full(x.shape, fill, x.dtype))
    axes = _numeric.normalize_axes(axis, x.ndim)
    if initial is not _NO_VALUE and identity is None and any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape)) if keepdims else \
            tuple(s for i, s in enumerate(x.shape) if i not in axes)
        r = _numeric.full(shape, initial, dtype or x.dtype)
    else:
        r = _numeric.reduce(op_name, x, axes, keepdims, dtype)
        if initial is not _NO_VALUE:
            r = KERNELS[name](r, _numeric.full(r.shape, initial, r.dtype))
    return _finish(name, [r], out, True)


_ACCUMULATORS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
                 "minimum": "cummin", "logaddexp": "cumlogsumexp"}


def accumulate(ufunc, inputs, kwargs):
    name = ufunc.__name__
    if name not in _ACCUMULATORS:
        raise NotLazy(name)
    x = tensor(inputs[0])
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    if kwargs:
        raise NotLazy(name)
    if x.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    if name in ("maximum", "minimum") and x.dtype.kind == "c":
        raise NotLazy(name)
    if name == "logaddexp" and x.dtype.kind not in "f":
        raise NotLazy(name)
    if name in ("maximum", "minimum") and x.dtype.kind == "f" and dtype is None:
        return _finish(name, [_nan_running_extreme(_ACCUMULATORS[name], x, axis)], out, True)
    r = _numeric.cumulative(_ACCUMULATORS[name], x, axis, dtype=dtype)
    return _finish(name, [r], out, True)


def _nan_running_extreme(op_name, x, axis):
    """NumPy's running max/min: once a NaN is seen, every later entry is NaN."""
    ops = lc.ops
    nan = ops.ne(x, x)
    fill = -np.inf if op_name == "cummax" else np.inf
    clean = ops.select(nan, _numeric.full(x.shape, fill, x.dtype), x)
    r = _numeric.cumulative(op_name, clean, axis, dtype=x.dtype)
    seen = _numeric.cumulative("cumsum", _numeric.cast(nan, np.int32), axis, dtype=np.int32)
    seen = ops.gt(seen, _numeric.full(seen.shape, 0, seen.dtype))
    return ops.select(seen, _numeric.full(x.shape, np.nan, x.dtype), r)


def outer(ufunc, inputs, kwargs):
    a, b = (x if isinstance(x, LazyArray) else LazyArray(tensor(np.asarray(x)))
            for x in inputs)
    a2 = LazyArray(lc.ops.reshape(a._t, new_sizes=a.shape + (1,) * b.ndim))
    return call(ufunc, (a2, b), kwargs)


def at(ufunc, inputs, kwargs):
    a, indices = inputs[0], inputs[1]
    if not isinstance(a, LazyArray) or ufunc.__name__ not in ("add", "subtract") or kwargs:
        raise NotLazy(ufunc.__name__)
    b = inputs[2] if len(inputs) > 2 else None
    loop = resolve(ufunc, (a.dtype, promotion_key(b)))
    if not np.can_cast(loop[-1], a.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {loop[-1]} to "
                        f"{a.dtype} with casting rule 'same_kind'")
    v = tensor(b, loop[1])
    if ufunc.__name__ == "subtract":
        v = lc.ops.neg(v)
    from ._indexing import checked, core_key

    k = core_key(indices)
    a._t = checked(a.shape, k, _numeric.setitem(a._t, k, _numeric.cast(v, a.dtype), mode="add"),
                   f"{ufunc.__name__}.at")


_METHODS = {"__call__": call, "reduce": reduce, "accumulate": accumulate, "outer": outer,
            "at": at}


@numpy_errors
def array_ufunc(ufunc, method, inputs, kwargs):
    handler = _METHODS.get(method)
    if handler is not None:
        try:
            return handler(ufunc, inputs, dict(kwargs))
        except NotLazy:
            pass
    outs = kwargs.get("out") or ()
    if method == "at":
        outs = (inputs[0],)
    return _fallback.run(f"{ufunc.__name__}.{method}" if method != "__call__" else
                         ufunc.__name__, getattr(ufunc, method) if method != "__call__"
                         else ufunc, inputs, kwargs, outs)
