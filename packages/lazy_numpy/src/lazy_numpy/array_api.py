"""An Array API (2024.12) namespace over LazyArrays: ``x.__array_namespace__()``.

Functions are thin adapters onto the NumPy functions lazy_numpy already traces (so
they share one implementation and one conformance suite); where the standard's
signature differs (``permute_dims``, ``std(correction=)``, ``sort(descending=)``,
``vector_norm``...), the adapter translates. ``tests/numpy/test_array_api.py``
compares this namespace with ``array-api-strict``.
"""

from __future__ import annotations

import builtins
import math
from typing import NamedTuple as _NamedTuple

import numpy as np

from lazycore.composites.sorting import isin as _isin

from . import _creation
from ._array import LazyArray

__array_api_version__ = "2024.12"

bool = np.bool_  # noqa: A001 - the standard's names
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None


def _lazy(x):
    return x if isinstance(x, LazyArray) else _creation.asarray(x)


def _first_lazy(*args):
    """At least one LazyArray among the operands, so NumPy dispatches to us."""
    if builtins.any(isinstance(a, LazyArray) for a in args):
        return args
    return (_lazy(args[0]),) + args[1:]


def _elementwise(name, ufunc):
    """The standard's signature: ``f(x, /)`` or ``f(x1, x2, /)``."""
    if ufunc.nin == 1:
        def fn(x, /):
            return ufunc(_lazy(x))
    else:
        def fn(x1, x2, /):
            return ufunc(*_first_lazy(x1, x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Array API ``{name}`` (NumPy ``{ufunc.__name__}``)."
    return fn


ELEMENTWISE = {
    "abs": np.absolute, "acos": np.arccos, "acosh": np.arccosh, "add": np.add,
    "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan, "atan2": np.arctan2,
    "atanh": np.arctanh, "bitwise_and": np.bitwise_and, "bitwise_left_shift": np.left_shift,
    "bitwise_invert": np.invert, "bitwise_or": np.bitwise_or,
    "bitwise_right_shift": np.right_shift, "bitwise_xor": np.bitwise_xor, "ceil": np.ceil,
    "conj": np.conjugate, "copysign": np.copysign, "cos": np.cos, "cosh": np.cosh,
    "divide": np.true_divide, "equal": np.equal, "exp": np.exp, "expm1": np.expm1,
    "floor": np.floor, "floor_divide": np.floor_divide, "greater": np.greater,
    "greater_equal": np.greater_equal, "hypot": np.hypot, "isfinite": np.isfinite,
    "isinf": np.isinf, "isnan": np.isnan, "less": np.less, "less_equal": np.less_equal,
    "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "logaddexp": np.logaddexp, "logical_and": np.logical_and, "logical_not": np.logical_not,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "maximum": np.maximum,
    "minimum": np.minimum, "multiply": np.multiply, "negative": np.negative,
    "nextafter": np.nextafter, "not_equal": np.not_equal, "positive": np.positive,
    "pow": np.power, "reciprocal": np.reciprocal, "remainder": np.remainder,
    "sign": np.sign, "signbit": np.signbit, "sin": np.sin, "sinh": np.sinh,
    "square": np.square, "sqrt": np.sqrt, "subtract": np.subtract, "tan": np.tan,
    "tanh": np.tanh, "trunc": np.trunc,
}
globals().update({name: _elementwise(name, uf) for name, uf in ELEMENTWISE.items()})


def real(x, /):
    return np.real(_lazy(x))


def imag(x, /):
    return np.imag(_lazy(x))


def round(x, /):  # noqa: A001
    return np.round(_lazy(x))


def clip(x, /, min=None, max=None):  # noqa: A002
    return np.clip(_lazy(x), min, max)


# -- creation -------------------------------------------------------------------------------

def asarray(obj, /, *, dtype=None, device=None, copy=None):
    return _creation.asarray(obj, dtype, copy=copy)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    return _creation.arange(start, stop, step, dtype)


def empty(shape, *, dtype=None, device=None):
    return _creation.zeros(shape, dtype or float64)


def zeros(shape, *, dtype=None, device=None):
    return _creation.zeros(shape, dtype or float64)


def ones(shape, *, dtype=None, device=None):
    return _creation.ones(shape, dtype or float64)


def full(shape, fill_value, *, dtype=None, device=None):
    return _creation.full(shape, fill_value, dtype)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    return _creation.eye(n_rows, n_cols, k, dtype or float64)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    return _creation.linspace(start, stop, num, endpoint, dtype=dtype)


def empty_like(x, /, *, dtype=None, device=None):
    return np.empty_like(_lazy(x), dtype=dtype)


def zeros_like(x, /, *, dtype=None, device=None):
    return np.zeros_like(_lazy(x), dtype=dtype)


def ones_like(x, /, *, dtype=None, device=None):
    return np.ones_like(_lazy(x), dtype=dtype)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    return np.full_like(_lazy(x), fill_value, dtype=dtype)


def from_dlpack(x, /, *, device=None, copy=None):
    return _creation.asarray(np.from_dlpack(x))


def meshgrid(*arrays, indexing="xy"):
    return list(np.meshgrid(*[_lazy(a) for a in arrays], indexing=indexing))


def tril(x, /, *, k=0):
    return np.tril(_lazy(x), k)


def triu(x, /, *, k=0):
    return np.triu(_lazy(x), k)


# -- data types -----------------------------------------------------------------------------

def astype(x, dtype, /, *, copy=True, device=None):
    return _lazy(x).astype(dtype)


def can_cast(from_, to, /):
    return np.can_cast(from_.dtype if isinstance(from_, LazyArray) else from_, to)


def result_type(*arrays_and_dtypes):
    return np.result_type(*[a.dtype if isinstance(a, LazyArray) else a
                            for a in arrays_and_dtypes])


class _FInfo(_NamedTuple):
    """The standard's finfo: Python floats (NumPy's float32 finfo holds float32 scalars)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


def finfo(type, /):  # noqa: A002
    info = np.finfo(type.dtype if isinstance(type, LazyArray) else type)
    return _FInfo(int(info.bits), float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), info.dtype)


def iinfo(type, /):  # noqa: A002
    return np.iinfo(type.dtype if isinstance(type, LazyArray) else type)


_KINDS = {
    "bool": lambda d: d == np.bool_, "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u", "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f", "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind):
    d = np.dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        return _KINDS[kind](d)
    return d == np.dtype(kind)


# -- manipulation -----------------------------------------------------------------------------

def broadcast_arrays(*arrays):
    return list(np.broadcast_arrays(*[_lazy(a) for a in arrays]))


def broadcast_to(x, /, shape):
    return np.broadcast_to(_lazy(x), shape)


def concat(arrays, /, *, axis=0):
    return np.concatenate([_lazy(a) for a in arrays], axis=axis)


def expand_dims(x, /, axis):
    return np.expand_dims(_lazy(x), axis)


def flip(x, /, *, axis=None):
    return np.flip(_lazy(x), axis)


def moveaxis(x, source, destination, /):
    return np.moveaxis(_lazy(x), source, destination)


def permute_dims(x, /, axes):
    return np.transpose(_lazy(x), axes)


def repeat(x, repeats, /, *, axis=None):
    return np.repeat(_lazy(x), repeats, axis)


def reshape(x, /, shape, *, copy=None):
    return np.reshape(_lazy(x), shape)


def roll(x, /, shift, *, axis=None):
    return np.roll(_lazy(x), shift, axis)


def squeeze(x, /, axis):
    return np.squeeze(_lazy(x), axis)


def stack(arrays, /, *, axis=0):
    return np.stack([_lazy(a) for a in arrays], axis)


def tile(x, repetitions, /):
    return np.tile(_lazy(x), repetitions)


def unstack(x, /, *, axis=0):
    x = np.moveaxis(_lazy(x), axis, 0)
    return tuple(x[i] for i in range(x.shape[0]))


# -- searching, sets, sorting ---------------------------------------------------------------

def argmax(x, /, *, axis=None, keepdims=False):
    return np.argmax(_lazy(x), axis, keepdims=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    return np.argmin(_lazy(x), axis, keepdims=keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    return np.count_nonzero(_lazy(x), axis, keepdims=keepdims)


def nonzero(x, /):
    return np.nonzero(_lazy(x))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    return np.searchsorted(_lazy(x1), _lazy(x2), side, sorter)


def where(condition, x1, x2, /):
    return np.where(*_first_lazy(condition, x1, x2))


def unique_all(x, /):
    return np.unique_all(_lazy(x))


def unique_counts(x, /):
    return np.unique_counts(_lazy(x))


def unique_inverse(x, /):
    return np.unique_inverse(_lazy(x))


def unique_values(x, /):
    return np.unique_values(_lazy(x))


def sort(x, /, *, axis=-1, descending=False, stable=True):
    x = _lazy(x)
    if descending:
        return np.flip(np.sort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return np.sort(x, axis=axis)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    x = _lazy(x)
    if descending:  # stable descending: sort the reversed array, map indices back
        n = x.shape[axis]
        idx = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
        return np.flip(n - 1 - idx, axis)
    return np.argsort(x, axis=axis, kind="stable")


# -- statistics and utilities -----------------------------------------------------------------

def _stat(fn):
    def impl(x, /, *, axis=None, dtype=None, keepdims=False):
        return fn(_lazy(x), axis=axis, dtype=dtype, keepdims=keepdims)
    impl.__name__ = fn.__name__
    return impl


sum = _stat(np.sum)  # noqa: A001
prod = _stat(np.prod)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.max(_lazy(x), axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.min(_lazy(x), axis=axis, keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    return np.mean(_lazy(x), axis=axis, keepdims=keepdims)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return np.std(_lazy(x), axis=axis, ddof=correction, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return np.var(_lazy(x), axis=axis, ddof=correction, keepdims=keepdims)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return np.cumulative_sum(_lazy(x), axis=axis, dtype=dtype, include_initial=include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return np.cumulative_prod(_lazy(x), axis=axis, dtype=dtype,
                              include_initial=include_initial)


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.all(_lazy(x), axis=axis, keepdims=keepdims)


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return np.any(_lazy(x), axis=axis, keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(_lazy(x), n=n, axis=axis, **kw)


# -- linear algebra -----------------------------------------------------------------------------

def matmul(x1, x2, /):
    return np.matmul(*_first_lazy(x1, x2))


def matrix_transpose(x, /):
    return np.matrix_transpose(_lazy(x))


def tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(*_first_lazy(x1, x2), axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """The standard's rules: numeric dtypes, a negative ``axis`` counted before
    broadcasting, the same size along it in both (no broadcasting there)."""
    x1, x2 = _first_lazy(x1, x2)
    x1, x2 = _lazy(x1), _lazy(x2)
    if x1.dtype == np.bool_ or x2.dtype == np.bool_:
        raise TypeError("Only numeric dtypes are allowed in vecdot")
    if axis >= 0:
        raise ValueError("axis must be negative in vecdot")
    if axis < builtins.min(-1, -x1.ndim, -x2.ndim):
        raise ValueError("axis is out of bounds for x1 and x2")
    ndim = builtins.max(x1.ndim, x2.ndim)
    s1 = (1,) * (ndim - x1.ndim) + tuple(x1.shape)
    s2 = (1,) * (ndim - x2.ndim) + tuple(x2.shape)
    if s1[axis] != s2[axis]:
        raise ValueError("x1 and x2 must have the same size along the given axis")
    x1, x2 = np.broadcast_arrays(x1, x2)
    return np.vecdot(np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1))


class _Linalg:
    """``xp.linalg``: the Array API linear-algebra extension."""

    cholesky = staticmethod(lambda x, /, *, upper=False: np.linalg.cholesky(_lazy(x),
                                                                            upper=upper))
    det = staticmethod(lambda x, /: np.linalg.det(_lazy(x)))
    diagonal = staticmethod(lambda x, /, *, offset=0: np.diagonal(_lazy(x), offset, -2, -1))
    eigh = staticmethod(lambda x, /: np.linalg.eigh(_lazy(x)))
    eigvalsh = staticmethod(lambda x, /: np.linalg.eigvalsh(_lazy(x)))
    inv = staticmethod(lambda x, /: np.linalg.inv(_lazy(x)))
    matmul = staticmethod(matmul)
    matrix_power = staticmethod(lambda x, n, /: np.linalg.matrix_power(_lazy(x), n))
    matrix_rank = staticmethod(lambda x, /, *, rtol=None: np.linalg.matrix_rank(_lazy(x)))
    matrix_transpose = staticmethod(matrix_transpose)
    outer = staticmethod(lambda x1, x2, /: np.outer(*_first_lazy(x1, x2)))
    pinv = staticmethod(lambda x, /, *, rtol=None: np.linalg.pinv(_lazy(x)))
    qr = staticmethod(lambda x, /, *, mode="reduced": np.linalg.qr(_lazy(x), mode))
    slogdet = staticmethod(lambda x, /: np.linalg.slogdet(_lazy(x)))
    solve = staticmethod(lambda x1, x2, /: np.linalg.solve(*_first_lazy(x1, x2)))
    svd = staticmethod(lambda x, /, *, full_matrices=True: np.linalg.svd(
        _lazy(x), full_matrices=full_matrices))
    svdvals = staticmethod(lambda x, /: np.linalg.svd(_lazy(x), compute_uv=False))
    tensordot = staticmethod(tensordot)
    trace = staticmethod(lambda x, /, *, offset=0, dtype=None: np.trace(
        _lazy(x), offset, -2, -1, dtype))
    vecdot = staticmethod(vecdot)
    cross = staticmethod(lambda x1, x2, /, *, axis=-1: np.cross(*_first_lazy(x1, x2),
                                                                axis=axis))

    @staticmethod
    def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
        """The reduced axes (all, one, several or none) are one vector; NumPy's ``norm``
        would take a pair of axes as a matrix."""
        x = _lazy(x)
        axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        axes = sorted({a % x.ndim for a in axes})
        kept = [d for d in range(x.ndim) if d not in axes]
        vectors = np.reshape(np.permute_dims(x, kept + axes), [x.shape[d] for d in kept]
                             + [math.prod(x.shape[d] for d in axes)])
        r = np.linalg.norm(vectors, ord=ord, axis=-1)
        return np.reshape(r, [1 if d in axes else n for d, n in enumerate(x.shape)]) \
            if keepdims else r

    @staticmethod
    def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
        return np.linalg.norm(_lazy(x), ord=ord, axis=(-2, -1), keepdims=keepdims)


linalg = _Linalg()


def _fft_1d(fn):
    def transform(x, /, *, n=None, axis=-1, norm="backward"):
        return fn(_lazy(x), n=n, axis=axis, norm=norm)
    transform.__name__ = transform.__qualname__ = fn.__name__
    return transform


def _fft_nd(fn):
    def transform(x, /, *, s=None, axes=None, norm="backward"):
        return fn(_lazy(x), s=s, axes=axes, norm=norm)
    transform.__name__ = transform.__qualname__ = fn.__name__
    return transform


def _fft_shift(fn):
    def shift(x, /, *, axes=None):
        return fn(_lazy(x), axes=axes)
    shift.__name__ = shift.__qualname__ = fn.__name__
    return shift


def _fft_freq(fn):
    def freq(n, /, *, d=1.0, dtype=None, device=None):
        return _creation.asarray(fn(n, d), dtype)
    freq.__name__ = freq.__qualname__ = fn.__name__
    return freq


class _FFT:
    """``xp.fft``: the Array API FFT extension, in the standard's signatures."""


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    setattr(_FFT, _name, staticmethod(_fft_1d(getattr(np.fft, _name))))
for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    setattr(_FFT, _name, staticmethod(_fft_nd(getattr(np.fft, _name))))
for _name in ("fftshift", "ifftshift"):
    setattr(_FFT, _name, staticmethod(_fft_shift(getattr(np.fft, _name))))
for _name in ("fftfreq", "rfftfreq"):
    setattr(_FFT, _name, staticmethod(_fft_freq(getattr(np.fft, _name))))

fft = _FFT()


class _Info:
    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        return {"real floating": np.dtype(float64), "complex floating": np.dtype(complex128),
                "integral": np.dtype(int64), "indexing": np.dtype(int64)}

    def dtypes(self, *, device=None, kind=None):
        names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"]
        out = {n: np.dtype(n) for n in names}
        return out if kind is None else {n: d for n, d in out.items() if isdtype(d, kind)}


def __array_namespace_info__():
    return _Info()


def take(x, indices, /, *, axis=None):
    return np.take(_lazy(x), _lazy(indices), axis=axis)


def take_along_axis(x, indices, /, *, axis=-1):
    return np.take_along_axis(_lazy(x), _lazy(indices), axis)


def broadcast_shapes(*shapes):
    return np.broadcast_shapes(*shapes)


def isin(x1, x2, /, *, invert=False):
    return LazyArray(_isin(_lazy(x1)._t, _lazy(x2)._t, invert))
