"""Shape manipulation, slicing, gathering, selection, sorting (tf.* top level)."""

from __future__ import annotations

import collections
import math

import numpy as np

import lazycore as lc

from ._api_linalg import swap_last
from ._api_math import composite
from ._convert import is_lazy_class, np_dtype, same_dtype, static, static_int, to_core
from ._indexing import _getitem
from ._table import INT, REAL, api, in_range, require

ops, num = lc.ops, lc.numeric


def _int_list(v) -> list[int]:
    out = static(v)
    return [int(s) for s in (out if isinstance(out, list) else [out])]


@api("reshape", "reshape", tensors=("tensor",))
def _reshape(tensor, shape, name=None):
    return num.reshape(to_core(tensor), tuple(_int_list(shape)))


@api("transpose", "transpose", tensors=("a",))
def _transpose(a, perm=None, conjugate=False, name="transpose"):
    t = to_core(a)
    perm = None if perm is None else _int_list(perm)
    if perm is not None and sorted(perm) != list(range(t.ndim)):
        raise lc.AxisError(f"perm {perm} is not a permutation of {t.ndim} axes")
    out = num.transpose(t, perm)
    return ops.conj(out) if conjugate and lc.dtypes.is_complex(out.dtype) else out


@api("linalg.matrix_transpose", "transpose", tensors=("a",))
def _matrix_transpose(a, name="matrix_transpose", conjugate=False):
    t = to_core(a)
    if t.ndim < 2:
        raise lc.ShapeError("matrix_transpose needs rank >= 2")
    return swap_last(t, conjugate)


@api("concat", "concatenate", lists=("values",))
def _concat(values, axis, name="concat"):
    ts = same_dtype(*values)
    if any(t.ndim == 0 for t in ts):
        raise lc.ShapeError("Can't concatenate scalars (use tf.stack instead)")
    return num.concatenate(ts, static_int(axis))


@api("stack", "reshape, concatenate", lists=("values",))
def _stack(values, axis=0, name="stack"):
    return num.stack(same_dtype(*values), static_int(axis))


@api("unstack", "slice, reshape", tensors=("value",))
def _unstack(value, num=None, axis=0, name="unstack"):  # noqa: A002 - TF's parameter name
    t = to_core(value)
    (a,) = lc.numeric.normalize_axes(static_int(axis), t.ndim, scalar_axes=())
    if num is not None and num != t.shape[a]:
        raise lc.ShapeError(f"num {num} does not match dimension {t.shape[a]}")
    return [lc.numeric.squeeze(p, a) for p in lc.numeric.split_sizes(t, [1] * t.shape[a], a)]


@api("split", "slice", tensors=("value",))
def _split(value, num_or_size_splits, axis=0, num=None, name="split"):  # noqa: A002
    t = to_core(value)
    (a,) = lc.numeric.normalize_axes(static_int(axis), t.ndim, scalar_axes=())
    spec = static(num_or_size_splits)
    if isinstance(spec, int):
        if spec <= 0 or t.shape[a] % spec:
            raise lc.ShapeError(f"dimension {t.shape[a]} is not divisible into {spec} splits")
        return lc.numeric.split_sizes(t, [t.shape[a] // spec] * spec, a)
    sizes = [int(s) for s in spec]
    if -1 in sizes:  # (a second -1, or a size below it, fails the check below)
        sizes[sizes.index(-1)] = t.shape[a] - (sum(sizes) + 1)
    if sum(sizes) != t.shape[a] or any(s < 0 for s in sizes):
        raise lc.ShapeError(f"size_splits {sizes} do not add up to {t.shape[a]}")
    return lc.numeric.split_sizes(t, sizes, a)


@api("squeeze", "reshape", tensors=("input",))
def _squeeze(input, axis=None, name=None):  # noqa: A002
    return num.squeeze(to_core(input), None if axis is None else _int_list(axis))


@api("expand_dims", "reshape", tensors=("input",))
def _expand_dims(input, axis, name=None):  # noqa: A002
    t = to_core(input)
    a = static_int(axis)
    if not -t.ndim - 1 <= a <= t.ndim:
        raise lc.AxisError(f"axis {a} out of range for rank {t.ndim}")
    return num.expand_dims(t, a % (t.ndim + 1))


@api("tile", "broadcast_in_dim, reshape", tensors=("input",))
def _tile(input, multiples, name=None):  # noqa: A002
    t = to_core(input)
    reps = _int_list(multiples)
    if len(reps) != t.ndim:
        raise lc.ShapeError(f"multiples {reps} must have length {t.ndim}")
    return num.tile(t, tuple(reps))


@api("repeat", "broadcast_in_dim, reshape", tensors=("input",))
def _repeat(input, repeats, axis=None, name=None):  # noqa: A002
    r = static(repeats)
    r = r[0] if isinstance(r, list) and len(r) == 1 else r
    if not isinstance(r, int) or r < 0:  # a count per element: not traced
        raise NotImplementedError("tf.repeat with per-element repeats runs eagerly")
    return num.repeat(to_core(input), r, None if axis is None else static_int(axis))


@api("pad", "pad; gather (REFLECT/SYMMETRIC)", tensors=("tensor",))
def _pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    t = to_core(tensor)
    pads = static(paddings)
    if len(pads) != t.ndim or any(len(p) != 2 or min(p) < 0 for p in pads):
        raise lc.ShapeError(f"paddings {pads} do not fit rank {t.ndim}")
    if str(mode).upper() != "CONSTANT":  # another mode: a KeyError, TF's own error
        return num.pad_indexed(t, pads, {"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[
            str(mode).upper()], strict=True)
    return ops.pad(t, to_core(constant_values, t.dtype),
                   padding_config=tuple((int(lo), int(hi), 0) for lo, hi in pads))


@api("reverse", "rev", tensors=("tensor",))
def _reverse(tensor, axis, name=None):
    return num.flip(to_core(tensor), tuple(_int_list(axis)))


@api("roll", "slice, concatenate", tensors=("input",))
def _roll(input, shift, axis, name=None):  # noqa: A002
    return num.roll(to_core(input), tuple(_int_list(shift)), tuple(_int_list(axis)))


for _tf, _lowers, _fn in [("identity", "(none)", lambda t: t),
                          ("stop_gradient", "stop_gradient", ops.stop_gradient),
                          ("rank", "constant (static rank)", lambda t: lc.constant(np.int32(t.ndim)))]:
    api(_tf, _lowers, tensors=("input",))(composite(_fn, None, _tf))


@api("broadcast_to", "broadcast_in_dim", tensors=("input",))
def _broadcast_to(input, shape, name=None):  # noqa: A002
    t = to_core(input)
    shape = tuple(_int_list(shape))
    return num.broadcast_to(t, num.broadcast_shapes(t.shape, shape))


@api("fill", "broadcast_in_dim", tensors=("value",))
def _fill(dims, value, name=None, layout=None):
    v = to_core(value)
    if v.ndim:
        raise lc.ShapeError("value must be a scalar")
    return num.broadcast_to(v, tuple(_int_list(dims)))


@api("where", "select (one argument: nonzero, syncs the count)", tensors=("condition", "x", "y"))
def _where(condition, x=None, y=None, name=None):
    c = to_core(condition)
    if x is None and y is None:
        idx = num.nonzero(c if c.dtype == np.bool_ else ops.ne(c, num.full(c.shape, 0, c.dtype)))
        return num.stack([num.cast(i, np.int64) for i in idx], 1) if idx else \
            num.zeros((0, c.ndim), np.int64)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    if c.dtype != np.bool_:
        raise lc.DTypeError("condition must be bool")
    a, b = same_dtype(x, y)
    shape = num.broadcast_shapes(c.shape, a.shape, b.shape)
    return ops.select(*(num.broadcast_to(v, shape) for v in (c, a, b)))


@api("gather", "gather (+ a range check)", tensors=("params", "indices"))
def _gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    p, i = to_core(params), require(to_core(indices), INT, "gather indices")
    b = static_int(batch_dims)
    b += i.ndim if b < 0 else 0
    (a,) = num.normalize_axes(b if axis is None else static_int(axis), p.ndim, scalar_axes=())
    if b:  # an axis before the batch or unequal batch shapes: TF's error (eager re-run)
        return in_range(i, p.shape[a], num.take_batched(p, i, a, b), "GatherV2")
    out = in_range(i, p.shape[a], num.take(p, i, a), "GatherV2")
    # a literal axis 0 has TF's sparse gradient (IndexedSlices)
    return lc.autodiff.mark_rows(out, i, np.int32) if a == 0 and axis in (None, 0) else out


@api("gather_nd", "gather (+ a range check)", tensors=("params", "indices"))
def _gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy=""):
    if static(batch_dims):
        raise NotImplementedError("gather_nd with batch_dims runs eagerly")
    p, i = to_core(params), require(to_core(indices), INT, "gather_nd indices")
    k = i.shape[-1]
    if i.ndim == 0 or k > p.ndim:
        raise lc.ShapeError(f"index depth {k} exceeds params rank {p.ndim}")
    cols = [num.squeeze(c, -1) for c in num.split_sizes(i, [1] * k, i.ndim - 1)]
    out = _points_in_range(cols, p.shape, num.gather_points(p, list(range(k)), cols), "GatherNd")
    return lc.autodiff.mark_rows(out, i, i.dtype) if i.shape[1:] == (1,) else out


@api("slice", "slice; dynamic_slice (a traced begin)", tensors=("input_",))
def _slice(input_, begin, size, name=None):
    """A lazy ``begin`` with sizes given (no -1) is never read: a dynamic slice, each
    start checked in ``[0, dim - size]`` at the next barrier (TF's InvalidArgumentError)."""
    t, s = to_core(input_), _int_list(size)
    if is_lazy_class(begin.__class__) and -1 not in s:
        if to_core(begin).shape != (t.ndim,) or len(s) != t.ndim:
            raise lc.ShapeError(f"begin/size must have {t.ndim} entries")
        starts = [num.getitem(to_core(begin), (d,)) for d in range(t.ndim)]
        return ops.dynamic_slice(t, *[in_range(
            at, t.shape[d] - s[d] + 1, at, "Slice", f"Expected begin[{d}] in [0, {t.shape[d]}] "
            f"and size[{d}] = {s[d]} in [0, {t.shape[d]} - begin[{d}]] (TF's checks)")
            for d, at in enumerate(starts)], slice_sizes=tuple(s))
    b = _int_list(begin)
    if len(b) != t.ndim or len(s) != t.ndim:
        raise lc.ShapeError(f"begin/size must have {t.ndim} entries")
    end = [t.shape[d] if sz == -1 else bd + sz for d, (bd, sz) in enumerate(zip(b, s, strict=True))]
    return ops.slice(t, start_indices=tuple(b), limit_indices=tuple(end))


@api("strided_slice", "slice, rev, reshape (core getitem)", tensors=("input_",))
def _strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                   new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    b, e = _bounds(begin), _bounds(end)
    st = [1] * len(b) if strides is None else _int_list(strides)
    key = []
    for i in range(len(b)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b[i])
        else:
            key.append(slice(None if begin_mask & bit else b[i], None if end_mask & bit else e[i],
                             st[i]))
    return _getitem(input_, tuple(key))


def _bounds(v) -> list:
    """``begin``/``end`` as ints; while a graph is captured, a list's lazy scalars or a
    lazy vector's elements stay lazy (``_indexing.dynamic_slices`` cuts at them)."""
    if lc.checks.CAPTURING[0] and (isinstance(v, list | tuple) or is_lazy_class(v.__class__)
                                   and v.shape.rank == 1):
        return [x if is_lazy_class(x.__class__) else static_int(x) for x in (
            v if isinstance(v, list | tuple) else [v[i] for i in range(v.shape[0])])]
    return _int_list(v)


@api("one_hot", "one_hot (composite), select", tensors=("indices",))
def _one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    i = require(to_core(indices), INT, "one_hot indices")
    depth = static_int(depth)
    if dtype is not None:
        out_dtype = np_dtype(dtype)
    else:
        given = [to_core(v).dtype for v in (on_value, off_value) if v is not None]
        out_dtype = given[0] if given else np.dtype(np.float32)
    on = to_core(1 if on_value is None else on_value, out_dtype)
    off = to_core(0 if off_value is None else off_value, out_dtype)
    hit = num.one_hot(i, depth, -1 if axis is None else static_int(axis))
    return ops.select(hit, num.broadcast_to(on, hit.shape), num.broadcast_to(off, hit.shape))


@api("shape", "constant (static shape)", tensors=("input",))
def _shape(input, out_type=None, name=None):  # noqa: A002
    return lc.constant(np.asarray(to_core(input).shape, dtype=np_dtype(out_type) or np.int32))


@api("size", "constant (static size)", tensors=("input",))
def _size(input, out_type=None, name=None):  # noqa: A002
    return lc.constant(np.asarray(to_core(input).size, dtype=np_dtype(out_type) or np.int32))


@api("boolean_mask", "gather (syncs the mask's count)", tensors=("tensor", "mask"))
def _boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    t, m = to_core(tensor), to_core(mask)
    if m.dtype != np.bool_:
        raise lc.DTypeError("mask must be bool")
    a = 0 if axis is None else static_int(axis)
    if t.shape[a:a + m.ndim] != m.shape:
        raise lc.ShapeError(f"mask shape {m.shape} does not match tensor shape {t.shape}")
    return lc.numeric.getitem(t, (slice(None),) * a + (m,))


def _direction(direction) -> bool:
    d = str(direction).upper()
    if d not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be ASCENDING or DESCENDING, got {direction}")
    return d == "DESCENDING"


@api("sort", "sort", tensors=("values",))
def _sort(values, axis=-1, direction="ASCENDING", name=None):
    return num.sort(require(to_core(values), REAL, "sort"), static_int(axis),
                    descending=_direction(direction))


@api("argsort", "sort (with iota payload)", tensors=("values",))
def _argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    return num.argsort(require(to_core(values), REAL, "argsort"), static_int(axis),
                       descending=_direction(direction), index_dtype=np.int32)


@api("math.top_k", "top_k", tensors=("input",))
def _top_k(input, k=1, sorted=True, index_type="int32", name=None):  # noqa: A002
    t = require(to_core(input), REAL, "top_k")
    k = static_int(k)
    if t.ndim == 0 or k > t.shape[-1] or k < 0:
        raise lc.ShapeError(f"input must have at least k={k} columns")
    values, indices = num.top_k(t, k, -1)
    return _TopK(values, num.cast(indices, np_dtype(index_type)))


# TF's ``TopKV2(values, indices)`` namedtuple
_TopK = collections.namedtuple("TopKV2", ["values", "indices"])


def _points_in_range(columns, shape, out, op: str):
    """``out``, with each index column checked against its dimension (TF's CPU kernels)."""
    for d, c in enumerate(columns):
        in_range(c, shape[d], out, op, f"indices do not index into param shape {list(shape)}")
    return out


def _scatter_nd(mode):
    def impl(tensor, indices, updates, *policy, name=None):
        t, u = same_dtype(tensor, updates)
        i = require(to_core(indices), INT, "scatter indices")
        k, batch, window = i.shape[-1], i.shape[:-1], t.shape[i.shape[-1]:]
        flat_i = ops.reshape(i, new_sizes=(math.prod(batch), k))
        if u.shape != batch + window:
            raise lc.ShapeError(f"updates shape {u.shape} must be {batch + window}")
        flat_u = ops.reshape(u, new_sizes=(flat_i.shape[0],) + window)
        op = ops.scatter_add if mode == "add" else ops.scatter
        return _points_in_range(num.split_sizes(flat_i, [1] * k, 1), t.shape, op(
            num.cast(t, t.dtype), num.cast(flat_i, np.int64), flat_u,
            update_window_dims=tuple(range(1, 1 + len(window))),
            inserted_window_dims=tuple(range(k)), scatter_dims_to_operand_dims=tuple(range(k)),
            mode="fill"), "TensorScatterNd")
    return impl


api("tensor_scatter_nd_update", "scatter", tensors=("tensor", "updates"))(_scatter_nd("set"))
api("tensor_scatter_nd_add", "scatter_add", tensors=("tensor", "updates"))(_scatter_nd("add"))


def _equality(op, flip: bool):
    def impl(self, other):
        a = to_core(self)
        b = to_core(other, a.dtype)
        try:
            shape = num.broadcast_shapes(a.shape, b.shape)
        except lc.ShapeError:  # tf.Tensor: incompatible shapes compare unequal
            return lc.constant(np.bool_(flip))
        return op(num.broadcast_to(a, shape), num.broadcast_to(b, shape))
    return impl


api("__operators__.eq", "eq", tensors=("self", "other"))(_equality(ops.eq, False))
api("__operators__.ne", "ne", tensors=("self", "other"))(_equality(ops.ne, True))
