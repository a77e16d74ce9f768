"""Reductions: sum/mean/prod/amax/argmax/var/std/any/all/logsumexp/cumulative/norms."""

from __future__ import annotations

import numpy as np

import lazycore as lc

from .common import D, default_float, full_like, num, ops, to_np, wrap_dim, wrap_dims
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
    x = num.cast(x, _sum_dtype(x, dtype))
    return _keep(ops.reduce_prod(x, axes=dims), x, dims, keepdim)


@lower("prims.prod.default")
def prims_prod(x, dims, *, output_dtype=None):
    return ops.reduce_prod(x, axes=tuple(dims))


@lower("mean.dim", "mean.default")
def mean(x, dim=None, keepdim=False, *, dtype=None):
    dt = to_np(dtype) if dtype is not None else x.dtype
    if not D.is_inexact(dt):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_name(dt)}")
    dims = wrap_dims(dim, x.ndim)
    return num.mean(num.cast(x, dt), dims, keepdims=keepdim)


def _name(dt):
    return {D.int64: "Long", D.int32: "Int", D.bool_: "Bool", D.uint8: "Byte"}.get(dt, str(dt))


def _extreme(core):
    def fn(x, dim=(), keepdim=False):
        dims = wrap_dims(dim, x.ndim)
        for d in dims:
            if x.shape[d] == 0:
                raise IndexError(f"{core}(): Expected reduction dim {d} to have non-zero size.")
        if D.is_bool(x.dtype):
            red = ops.reduce_or if core == "amax" else ops.reduce_and
            return _keep(red(x, axes=dims), x, dims, keepdim)
        out = ops.get("reduce_max" if core == "amax" else "reduce_min")(x, axes=dims)
        if D.is_inexact(x.dtype) and dims:  # NaN propagates, as in PyTorch
            nan = ops.reduce_or(ops.ne(x, x), axes=dims)
            out = ops.select(nan, full_like(out, np.nan), out)
        return _keep(out, x, dims, keepdim)
    return fn


lower("amax.default")(_extreme("amax"))
lower("amin.default")(_extreme("amin"))


@lower("prims.amax.default")
def prims_amax(x, dims):
    return _extreme("amax")(x, tuple(dims))


@lower("prims.amin.default")
def prims_amin(x, dims):
    return _extreme("amin")(x, tuple(dims))


@lower("max.default")
def max_all(x):
    if x.size == 0:
        raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == "
                           "0. Specify the reduction dim with the 'dim' argument.")
    return _extreme("amax")(x)


@lower("min.default")
def min_all(x):
    if x.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == "
                           "0. Specify the reduction dim with the 'dim' argument.")
    return _extreme("amin")(x)


def _arg(core, x, dim, keepdim):
    if D.is_bool(x.dtype):
        x = num.cast(x, D.uint8)
    if dim is None:
        flat = ops.reshape(x, new_sizes=(x.size,))
        out = ops.get(core)(flat, axis=0, index_dtype=D.int64) if x.ndim else \
            lc.scalar(0, D.int64)
        return ops.reshape(out, new_sizes=(1,) * x.ndim) if keepdim else out
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return lc.scalar(0, D.int64)
    if x.shape[d] == 0:
        raise IndexError(f"{core}(): Expected reduction dim {d} to have non-zero size.")
    return _keep(ops.get(core)(x, axis=d, index_dtype=D.int64), x, (d,), keepdim)


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
    if isinstance(unbiased, bool) and correction is None:
        correction = 1 if unbiased else 0
    if correction is None:
        correction = 1
    dims = wrap_dims(dim, x.ndim)
    if not D.is_inexact(x.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return num.var(x, dims, keepdims=keepdim, correction=correction)


@lower("std.correction", "std.dim", "std.default")
def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return ops.sqrt(_var(x, dim, unbiased, keepdim, correction))


@lower("var_mean.correction")
def var_mean(x, dim=None, *, correction=None, keepdim=False):
    dims = wrap_dims(dim, x.ndim)
    return _var(x, dim, None, keepdim, correction), num.mean(x, dims, keepdims=keepdim)


@lower("std_mean.correction")
def std_mean(x, dim=None, *, correction=None, keepdim=False):
    v, m = var_mean(x, dim, correction=correction, keepdim=keepdim)
    return ops.sqrt(v), m


@lower("prims.var.default")
def prims_var(x, dims, correction, *, output_dtype=None):
    return num.var(x, tuple(dims), correction=correction)


@lower("any.default", "any.dim", "any.dims")
def any_(x, dim=None, keepdim=False):
    dims = wrap_dims(dim, x.ndim)
    return _keep(ops.reduce_or(num.cast(x, D.bool_), axes=dims), x, dims, keepdim)


@lower("all.default", "all.dim", "all.dims")
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
    d = wrap_dim(dim, x.ndim)
    return x if x.ndim == 0 else ops.cumlogsumexp(x, axis=d)


def _cum_ext(core, arg):
    def fn(x, dim):
        d = wrap_dim(dim, x.ndim)
        if x.ndim == 0:
            return x, lc.scalar(0, D.int64)
        values = ops.get(core)(x, axis=d)
        # index of the running extreme: last position where x equals the running value
        iota = ops.iota(dtype=D.int64, shape=x.shape, dimension=d)
        hit = ops.eq(x, values)
        if D.is_inexact(x.dtype):
            hit = ops.get("or")(hit, ops.ne(x, x))
        idx = ops.cummax(ops.select(hit, iota, num.full(x.shape, 0, D.int64)), axis=d)
        return values, idx
    return fn


lower("cummax.default")(_cum_ext("cummax", "argmax"))
lower("cummin.default")(_cum_ext("cummin", "argmin"))


@lower("linalg_vector_norm.default")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    if dtype is not None:
        x = num.cast(x, to_np(dtype))
    if not D.is_inexact(x.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_name(x.dtype)}")
    dims = wrap_dims(dim, x.ndim)
    a = ops.abs(x)
    if ord == 2:
        out = ops.sqrt(ops.reduce_sum(ops.mul(a, a), axes=dims))
    elif ord == 1:
        out = ops.reduce_sum(a, axes=dims)
    elif ord == float("inf"):
        out = ops.reduce_max(a, axes=dims)
    elif ord == float("-inf"):
        out = ops.reduce_min(a, axes=dims)
    elif ord == 0:
        out = ops.reduce_sum(num.cast(ops.ne(a, full_like(a, 0)), a.dtype), axes=dims)
    else:
        p = ops.reduce_sum(ops.pow(a, full_like(a, ord)), axes=dims)
        out = ops.pow(p, full_like(p, 1.0 / ord))
    return _keep(out, x, dims, keepdim)
