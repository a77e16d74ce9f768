"""Reductions: sum/mean/prod/amax/argmax/var/std/any/all/logsumexp/cumulative/norms."""

from __future__ import annotations

import numpy as np

from .common import OPMATH, D, default_float, num, ops, to_np, wrap_dim, wrap_dims
from .registry import lower


def _keep(out, x, dims, keepdim):
    if not keepdim:
        return out
    return ops.reshape(out, new_sizes=tuple(1 if i in dims else s for i, s in enumerate(x.shape)))


def _sum_dtype(x, dtype):
    if dtype is not None:
        return to_np(dtype)
    if D.is_bool(x.dtype) or D.is_integer(x.dtype):
        return D.int64
    return x.dtype


@lower("sum.dim_IntList", "sum.default")
def sum_(x, dim=None, keepdim=False, *, dtype=None):
    dims = wrap_dims(dim, x.ndim)
    x = num.cast(x, _sum_dtype(x, dtype))
    return _keep(ops.reduce_sum(x, axes=dims), x, dims, keepdim)


@lower("prims.sum.default")
def prims_sum(x, dims, *, output_dtype=None):
    x = num.cast(x, to_np(output_dtype) if output_dtype is not None else x.dtype)
    return ops.reduce_sum(x, axes=tuple(dims))


@lower("prod.dim_int", "prod.default")
def prod(x, dim=None, keepdim=False, *, dtype=None):
    dims = (wrap_dim(dim, x.ndim),) if dim is not None and x.ndim else tuple(range(x.ndim))
    return num.prod(x, dims, keepdim, dtype=_sum_dtype(x, dtype))


@lower("prims.prod.default")
def prims_prod(x, dims, *, output_dtype=None):
    return ops.reduce_prod(x, axes=tuple(dims))


@lower("mean.dim", "mean.default")
def mean(x, dim=None, keepdim=False, *, dtype=None):
    dt = to_np(dtype) if dtype is not None else x.dtype
    if not D.is_inexact(dt):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_name(dt)}")
    dims, acc = wrap_dims(dim, x.ndim), D.float32 if dt in OPMATH else dt
    return num.cast(num.mean(num.cast(x, acc), dims, keepdims=keepdim), dt)


def _name(dt):
    return {D.int64: "Long", D.int32: "Int", D.bool_: "Bool", D.uint8: "Byte"}.get(dt, str(dt))


def _extreme(core):
    def fn(x, dim=(), keepdim=False):
        dims = wrap_dims(dim, x.ndim)
        for d in dims:
            if x.shape[d] == 0:
                raise IndexError(f"{core}(): Expected reduction dim {d} to have non-zero size.")
        return (num.max if core == "amax" else num.min)(x, dims, keepdims=keepdim)
    return fn


lower("amax.default", "prims.amax.default")(_extreme("amax"))
lower("amin.default", "prims.amin.default")(_extreme("amin"))


def _all_of(core):
    """``max()``/``min()`` of every element: eager's error for an empty input."""
    def fn(x):
        if x.size == 0:
            raise RuntimeError(f"{core[1:]}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        return _extreme(core)(x)
    return fn


lower("max.default")(_all_of("amax"))
lower("min.default")(_all_of("amin"))


def _arg(core, x, dim, keepdim):
    if D.is_bool(x.dtype):
        x = num.cast(x, D.uint8)
    d = None if dim is None else wrap_dim(dim, x.ndim)
    if d is not None and x.ndim and x.shape[d] == 0:
        raise IndexError(f"{core}(): Expected reduction dim {d} to have non-zero size.")
    return (num.argmax if core == "argmax" else num.argmin)(x, d, keepdim)


@lower("argmax.default")
def argmax(x, dim=None, keepdim=False):
    return _arg("argmax", x, dim, keepdim)


@lower("argmin.default")
def argmin(x, dim=None, keepdim=False):
    return _arg("argmin", x, dim, keepdim)


@lower("max.dim")
def max_dim(x, dim, keepdim=False):
    return _extreme("amax")(x, dim, keepdim), argmax(x, dim, keepdim)


@lower("min.dim")
def min_dim(x, dim, keepdim=False):
    return _extreme("amin")(x, dim, keepdim), argmin(x, dim, keepdim)


@lower("var.correction", "var.dim", "var.default")
def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(x, dim, unbiased, keepdim, correction)


def _var(x, dim, unbiased, keepdim, correction):
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = wrap_dims(dim, x.ndim)
    if not D.is_inexact(x.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return num.cast(num.var(num.cast(x, D.float32 if x.dtype in OPMATH else x.dtype), dims,
                            keepdims=keepdim, correction=correction), x.dtype)


@lower("std.correction", "std.dim", "std.default")
def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return ops.sqrt(_var(x, dim, unbiased, keepdim, correction))


@lower("var_mean.correction")
def var_mean(x, dim=None, *, correction=None, keepdim=False):
    return _var(x, dim, None, keepdim, correction), mean(x, dim, keepdim)


@lower("std_mean.correction")
def std_mean(x, dim=None, *, correction=None, keepdim=False):
    v, m = var_mean(x, dim, correction=correction, keepdim=keepdim)
    return ops.sqrt(v), m


@lower("prims.var.default")
def prims_var(x, dims, correction, *, output_dtype=None):
    return num.var(x, tuple(dims), correction=correction)


@lower("any.default", "any.dim", "any.dims", "_is_any_true.default")
def any_(x, dim=None, keepdim=False):
    dims = wrap_dims(dim, x.ndim)
    return _keep(ops.reduce_or(num.cast(x, D.bool_), axes=dims), x, dims, keepdim)


@lower("all.default", "all.dim", "all.dims", "_is_all_true.default")  # Distribution checks
def all_(x, dim=None, keepdim=False):
    dims = wrap_dims(dim, x.ndim)
    return _keep(ops.reduce_and(num.cast(x, D.bool_), axes=dims), x, dims, keepdim)


@lower("logsumexp.default")
def logsumexp(x, dim, keepdim=False):
    if not D.is_inexact(x.dtype):
        x = num.cast(x, default_float())
    dims = wrap_dims(dim, x.ndim)
    if not dims:
        return x
    return num.logsumexp(x, dims, keepdims=keepdim)


def _cumulative(core):
    def fn(x, dim, *, dtype=None):
        d = wrap_dim(dim, x.ndim)
        x = num.cast(x, _sum_dtype(x, dtype) if core in ("cumsum", "cumprod") else x.dtype)
        if x.ndim == 0:
            return x
        return ops.get(core)(x, axis=d)
    return fn


lower("cumsum.default", "cumsum_.default")(_cumulative("cumsum"))
lower("cumprod.default", "cumprod_.default")(_cumulative("cumprod"))


@lower("logcumsumexp.default")
def logcumsumexp(x, dim):
    return x if x.ndim == 0 else ops.cumlogsumexp(x, axis=wrap_dim(dim, x.ndim))


lower("cummax.default")(lambda x, dim: num.cumulative("cummax", x, wrap_dim(dim, x.ndim),
                                                     return_indices=True))
lower("cummin.default")(lambda x, dim: num.cumulative("cummin", x, wrap_dim(dim, x.ndim),
                                                     return_indices=True))


@lower("linalg_vector_norm.default")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    if dtype is not None:
        x = num.cast(x, to_np(dtype))
    if not D.is_inexact(x.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_name(x.dtype)}")
    return num.vector_norm(x, ord, wrap_dims(dim, x.ndim), keepdim)


@lower("histc.default")
def histc(x, bins=100, min=0, max=0):  # noqa: A002
    """Counts per equal-width bin of ``[min, max]`` with eager's bin arithmetic in the
    input's dtype. Integer inputs, which CPU PyTorch refuses, count as CUDA's histc does
    (transformers' MoE routers send int32 to any device but the CPU). A range taken from
    the data (``min == max``) and eager's errors go to eager."""
    if not min < max or bins <= 0 or not np.isfinite([min, max]).all():
        return NotImplemented
    return num.histogram(x, bins, min, max)


@lower("median.default")
def median(x):
    """``torch.median(x)`` (no ``dim``: the value only, so no index to choose among equal
    values); empty input and complex go to eager."""
    return num.lower_median(x) if x.size and not D.is_complex(x.dtype) else NotImplemented


@lower("nanmedian.default")
def nanmedian(x):
    return num.lower_median(x, ignore_nan=True) if x.size and not D.is_complex(x.dtype) \
        else NotImplemented
