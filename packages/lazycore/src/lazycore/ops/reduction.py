"""Reductions, arg-reductions, cumulative ops and windowed reductions (pooling)."""

from __future__ import annotations

import numpy as np
from jax import lax

from ..dtypes import bfloat16, canonical
from ..errors import AxisError
from ..ir import Aval
from .registry import defop
from .rules import check_dtype, jax_rule

FAMILY = "reduction"


def _reduce_rule(name, cls):
    def rule(x: Aval, *, axes) -> Aval:
        check_dtype(name, cls, x)
        if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
            raise AxisError(f"axes {tuple(axes)} out of range or repeated for {x}")
        return Aval(tuple(s for i, s in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def _sum(x, axes):  # float16/bfloat16 accumulate in float32, rounded once (NumPy, PyTorch)
    acc = np.float32 if x.dtype in (np.float16, bfloat16) else x.dtype
    return lax.reduce_or(x, axes) if x.dtype == bool else lax.convert_element_type(
        lax.reduce_sum(lax.convert_element_type(x, acc), axes), x.dtype)


_REDUCERS = {
    "reduce_sum": ("any", _sum),
    "reduce_prod": ("any", lambda x, axes: lax.reduce_and(x, axes) if x.dtype == bool
                    else lax.reduce_prod(x, axes)),
    "reduce_max": ("ordered", lax.reduce_max),
    "reduce_min": ("ordered", lax.reduce_min),
    "reduce_and": ("int_or_bool", lax.reduce_and),
    "reduce_or": ("int_or_bool", lax.reduce_or),
    "reduce_xor": ("int_or_bool", lax.reduce_xor),
}

for _name, (_cls, _fn) in _REDUCERS.items():
    globals()[_name] = defop(_name, FAMILY, _reduce_rule(_name, _cls),
                             (lambda fn: lambda x, *, axes: fn(x, tuple(axes)))(_fn))


def _arg_rule(name):
    def rule(x: Aval, *, axis, index_dtype) -> Aval:
        check_dtype(name, "ordered", x)
        if not 0 <= axis < x.ndim:
            raise AxisError(f"axis {axis} out of range for {x}")
        if x.shape[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return Aval(tuple(s for i, s in enumerate(x.shape) if i != axis), canonical(index_dtype))
    return rule


def _argext(fn):
    # NaN wins, first occurrence wins: the NumPy/PyTorch convention
    def lower(x, *, axis, index_dtype):
        return fn(x, axis, canonical(index_dtype))
    return lower


argmax = defop("argmax", FAMILY, _arg_rule("argmax"), _argext(lax.argmax))
argmin = defop("argmin", FAMILY, _arg_rule("argmin"), _argext(lax.argmin))


def _cum_rule(name):
    def rule(x: Aval, *, axis, reverse=False) -> Aval:
        if not 0 <= axis < max(x.ndim, 1):
            raise AxisError(f"axis {axis} out of range for {x}")
        return x
    return rule


_CUMULATIVE = {
    "cumsum": lax.cumsum,
    "cumprod": lax.cumprod,
    "cummax": lax.cummax,
    "cummin": lax.cummin,
    "cumlogsumexp": lax.cumlogsumexp,
}

for _name, _fn in _CUMULATIVE.items():
    globals()[_name] = defop(
        _name, FAMILY, _cum_rule(_name),
        (lambda fn: lambda x, *, axis, reverse=False:
         fn(x, axis=axis, reverse=reverse) if x.ndim else x)(_fn))


_WINDOW_INIT = {
    "reduce_window_sum": (lambda d: np.array(0, d), lax.add),
    "reduce_window_max": (lambda d: np.array(-np.inf, d) if np.issubdtype(d, np.inexact)
                          else np.array(np.iinfo(d).min, d), lax.max),
    "reduce_window_min": (lambda d: np.array(np.inf, d) if np.issubdtype(d, np.inexact)
                          else np.array(np.iinfo(d).max, d), lax.min),
}


def _make_window(init_fn, comp):
    def lower(x, *, window_dimensions, window_strides, padding, base_dilation=None,
              window_dilation=None):
        # a concrete identity lets jax pick its differentiable monoid reducer
        return lax.reduce_window(x, init_fn(np.dtype(x.dtype)), comp, window_dimensions,
                                 window_strides, padding, base_dilation, window_dilation)
    return lower


for _name, (_init, _comp) in _WINDOW_INIT.items():
    _lower = _make_window(_init, _comp)
    globals()[_name] = defop(_name, FAMILY, jax_rule(_lower), _lower)
