"""Helpers the lowering families share: PyTorch dtype promotion, dims, scalars."""

from __future__ import annotations

import numpy as np
import torch

import lazycore as lc

from .._convert import TO_NP, np_dtype

D = lc.dtypes
OPMATH = (D.float16, D.bfloat16)  # eager computes these in float32 and rounds once
num = lc.numeric
ops = lc.ops

DEFAULT, INT_TO_FLOAT, ALWAYS_BOOL, COMPLEX_TO_FLOAT, BOOL_TO_LONG = range(5)
_TO_COMPLEX = {D.float32: D.complex64, D.float64: D.complex128, D.float16: D.complex64,
               D.bfloat16: D.complex64}
_PAIR_CACHE: dict = {}


def default_float() -> np.dtype:
    return TO_NP[torch.get_default_dtype()]


def _pair(a, b):
    if a == b:
        return a
    key = (a, b)
    out = _PAIR_CACHE.get(key)
    if out is None:
        out = _PAIR_CACHE[key] = _promote_pair(a, b)
    return out


def _promote_pair(a, b):
    """PyTorch's tensor-tensor promotion: a higher category wins outright
    (int32 + float16 -> float16); within a category the wider type wins."""
    ca, cb = D.category(a), D.category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if D.is_complex(hi) and D.is_floating(lo):
            return D.complex128 if D.float64 in (lo,) or hi == D.complex128 else D.complex64
        return hi
    if ca == 2:
        if {a, b} == {D.float16, D.bfloat16}:
            return D.float32
        return a if a.itemsize >= b.itemsize else b
    return np.promote_types(a, b)


def _wrapped(v):
    if isinstance(v, bool | np.bool_):
        return D.bool_
    if isinstance(v, int | np.integer):
        return D.int64
    if isinstance(v, float | np.floating):
        return default_float()
    if isinstance(v, complex | np.complexfloating):
        return _TO_COMPLEX[default_float()]
    raise TypeError(f"unsupported operand {type(v).__name__}")


def _combine(higher, lower):
    """c10's combine_categories: a lower-priority group only lifts the category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if D.is_complex(higher):
        return higher
    if D.is_complex(lower):
        return _TO_COMPLEX.get(higher, lower) if D.is_floating(higher) else lower
    if D.is_floating(higher):
        return higher
    if D.is_bool(higher) or D.is_floating(lower):
        return _pair(higher, lower)
    return higher


def result_dtype(*args) -> np.dtype:
    """``torch.result_type`` over core tensors (dim / zero-dim) and Python scalars."""
    dim = zero = wrapped = None
    for a in args:
        if isinstance(a, lc.Tensor):
            if a.ndim:
                dim = a.dtype if dim is None else _pair(dim, a.dtype)
            else:
                zero = a.dtype if zero is None else _pair(zero, a.dtype)
        elif a is not None:
            w = _wrapped(a)
            wrapped = w if wrapped is None else _pair(wrapped, w)
    return _combine(dim, _combine(zero, wrapped))


def compute_dtype(args, kind=DEFAULT) -> np.dtype:
    dt = result_dtype(*args)
    if kind == INT_TO_FLOAT and not D.is_inexact(dt):
        return default_float()
    if kind == BOOL_TO_LONG and D.is_bool(dt):
        return D.int64
    return dt


_SCALAR_PLANS: dict = {}


def _binary_fast(a, b, kind):
    """The common binary cases without the general walk: two tensors of one aval, or a
    tensor and a Python scalar whose promoted dtype (memoized) is the tensor's."""
    if type(a) is not lc.Tensor:
        return None
    aval = a.node.aval
    if type(b) is lc.Tensor:
        if b.node.aval != aval or (kind != DEFAULT and _kind_changes(kind, aval.dtype)):
            return None
        return [a, b]
    key = (kind, aval.dtype, not aval.shape, type(b))
    dt = _SCALAR_PLANS.get(key)
    if dt is None:
        if key[3] not in (bool, int, float, complex):
            return None
        dt = _SCALAR_PLANS[key] = compute_dtype([a, b], kind)
    if dt is not aval.dtype and dt != aval.dtype:
        return None
    if key[3] is int:
        b = wrap_int(b, dt)
    return [a, num.full(aval.shape, b, dt)]


def wrap_int(v, dt):
    """A Python int operand in the op's integer dtype: eager PyTorch casts it with
    two's-complement wrap-around (``int8 + 200`` is ``int8 + -56``), it does not raise."""
    if type(v) is int and dt.kind in "iu":
        info = np.iinfo(dt)
        if not info.min <= v <= info.max and -(1 << 63) <= v < (1 << 63):  # else eager raises
            v &= (1 << info.bits) - 1
            if dt.kind == "i" and v >= 1 << (info.bits - 1):
                v -= 1 << info.bits
    return v


def _kind_changes(kind, dt) -> bool:
    """Whether ``compute_dtype`` moves a common dtype ``dt`` for this kind."""
    if kind == INT_TO_FLOAT:
        return not D.is_inexact(dt)
    if kind == BOOL_TO_LONG:
        return D.is_bool(dt)
    return False


def promote(args, kind=DEFAULT, dtype=None):
    if dtype is None and len(args) == 2:
        fast = _binary_fast(args[0], args[1], kind)
        if fast is not None:
            return fast
    dt = dtype if dtype is not None else compute_dtype(args, kind)
    shape = getattr(args[0], "shape", None)
    for a in args:  # hot path: tensors that already agree need no casts or broadcasts
        if not (isinstance(a, lc.Tensor) and a.dtype == dt and a.shape == shape):
            return num.promote([wrap_int(v, dt) for v in args], dtype=dt)
    return list(args)


def ew(op: str, *args, kind=DEFAULT):
    """Promote (PyTorch rules) + broadcast + trace core op ``op``."""
    return ops.OPS[op](*promote(args, kind))  # the registry's dict: no frame


def as_tensor(v, dtype) -> lc.Tensor:
    return v if isinstance(v, lc.Tensor) else lc.scalar(v, dtype)


def wrap_dim(dim: int, ndim: int) -> int:
    """PyTorch's dim wrapping (a 0-d tensor accepts dims -1 and 0); IndexError otherwise."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}],"
                         f" but got {dim})")
    return dim % n if ndim else 0


def wrap_dims(dims, ndim: int) -> tuple[int, ...]:
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    if len(dims) == 0:
        return tuple(range(ndim))
    out = tuple(sorted({wrap_dim(d, ndim) for d in dims}))
    return out if ndim else ()


def to_np(dtype) -> np.dtype | None:
    return None if dtype is None else np_dtype(dtype)


def opmath(dt) -> np.dtype:
    """Where eager's CPU kernels compute ``dt``: float16/bfloat16 in float32 (with Python
    scalars at that precision), rounded once at the end; a composite computed in the half
    type would round every intermediate."""
    return D.float32 if dt in OPMATH else dt


def in_opmath(fn, x, *args):
    """``fn(x, *args)`` computed in ``opmath(x.dtype)``, rounded once."""
    return num.cast(fn(num.cast(x, opmath(x.dtype)), *args), x.dtype)


def full_like(x: lc.Tensor, value, dtype=None) -> lc.Tensor:
    return num.full(x.shape, value, dtype or x.dtype)
