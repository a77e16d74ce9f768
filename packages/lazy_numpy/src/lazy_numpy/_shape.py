"""Shape manipulation, joining/splitting, selection and elementwise helpers
(``reshape`` ... ``where``, ``clip``, ``round``, ``isclose``) in NumPy's signatures."""

from __future__ import annotations

import numpy as np

import lazycore as lc

from . import _views
from ._array import LazyArray
from ._convert import PY_SCALARS, normalize_dtype, promotion_key, tensor, wrap
from ._fallback import NotLazy
from ._reductions import store
from ._registry import IN_PLACE, implements

num = lc.numeric
ops = lc.ops


def result_dtype(*values) -> np.dtype:
    """NEP 50 promotion of arrays and weak Python scalars (NumPy's own rules)."""
    keys = []
    for v in values:
        k = promotion_key(v)
        keys.append(v if isinstance(k, type) else k)
    return np.result_type(*keys)


def tensors_of(values, dtype=None):
    dt = normalize_dtype(dtype) or result_dtype(*values)
    return [tensor(v, dt) for v in values]


def stack_nested(values, dtype=None) -> lc.Tensor:
    """``asarray([[lazy, 1.0], ...])``: nested sequences holding LazyArrays."""
    if isinstance(values, list | tuple):
        parts = [stack_nested(v) for v in values]
        dt = normalize_dtype(dtype) or np.result_type(*[p.dtype for p in parts])
        return num.stack([num.cast(p, dt) for p in parts], 0)
    return tensor(values, dtype)


# -- reshaping ------------------------------------------------------------------------------

def _order(order):
    if order not in ("C", "A", "K", None):
        raise NotLazy("Fortran order")


@implements(np.reshape)
def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    _order(order)
    shape = newshape if shape is None else shape
    if isinstance(shape, LazyArray):
        shape = tuple(shape.tolist())
    out = _views.reshape(a, num.reshape(tensor(a), shape))
    if copy is False and out.base is None and isinstance(a, LazyArray):
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return LazyArray(out._t) if copy and out.base is not None else out


@implements(np.ravel)
def ravel(a, order="C"):
    _order(order)
    return _views.reshape(a, num.reshape(tensor(a), (-1,)))


@implements(np.transpose)
def transpose(a, axes=None):
    x = tensor(a)
    if axes is not None and len(axes) != x.ndim:
        raise ValueError("axes don't match array")
    if axes is not None:
        axes = [num.normalize_axes(ax, x.ndim)[0] for ax in axes]
    perm = tuple(axes) if axes is not None else tuple(range(x.ndim))[::-1]
    return _views.transpose(a, num.transpose(x, axes), perm)


@implements(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose(x, /):
    if np.ndim(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return swapaxes(x, -1, -2)


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    x = tensor(a)
    (i,), (j,) = num.normalize_axes(axis1, x.ndim), num.normalize_axes(axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return _views.transpose(a, num.transpose(x, perm), perm)


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    x = tensor(a)
    moved = num.moveaxis(x, source, destination)  # raises NumPy's errors first
    return _views.transpose(a, moved, _moved_perm(x.ndim, source, destination))


def _moved_perm(ndim, source, destination) -> tuple[int, ...]:
    """The permutation ``moveaxis`` applies (NumPy's algorithm)."""
    norm = np.lib.array_utils.normalize_axis_tuple
    source, destination = norm(source, ndim), norm(destination, ndim)
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        order.insert(dest, src)
    return tuple(order)


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    x = tensor(a)
    n = x.ndim
    (axis,) = num.normalize_axes(axis, n)
    if not -n <= start <= n:
        raise np.exceptions.AxisError(f"start {start} out of range")
    start = start % (n + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


@implements(np.squeeze)
def squeeze(a, axis=None):
    return _views.reshape(a, num.squeeze(tensor(a), axis))


@implements(np.expand_dims)
def expand_dims(a, axis):
    return _views.reshape(a, num.expand_dims(tensor(a), axis))


def _atleast(arys, n):
    out = []
    for a in arys:
        x = tensor(a)
        if x.ndim >= n and isinstance(a, LazyArray):
            out.append(a)  # NumPy returns the array itself
            continue
        if x.ndim < n:
            shape = {1: lambda s: (1,), 2: lambda s: (1,) + s if len(s) == 1 else (1, 1),
                     3: lambda s: ((1, 1, 1) if not s else (1, s[0], 1) if len(s) == 1
                                   else s + (1,))}[n](x.shape)
            x = ops.reshape(x, new_sizes=shape)
        out.append(_views.reshape(a, x))
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_1d)
def atleast_1d(*arys):
    return _atleast(arys, 1)


@implements(np.atleast_2d)
def atleast_2d(*arys):
    return _atleast(arys, 2)


@implements(np.atleast_3d)
def atleast_3d(*arys):
    return _atleast(arys, 3)


@implements(np.broadcast_to)
def broadcast_to(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    x = tensor(array)
    try:
        if num.broadcast_shapes(x.shape, shape) != shape:
            raise lc.ShapeError("")
    except lc.ShapeError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {x.shape} and requested shape {shape}") from None
    return _views.general(array, num.broadcast_to(x, shape),
                          lambda p: num.broadcast_to(p, shape),
                          lambda p: np.broadcast_to(p, shape))


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    return tuple(wrap(num.broadcast_arrays(*[tensor(a) for a in args])))


@implements(np.copy)
def copy(a, order="K", subok=False):
    return LazyArray(tensor(a))


@implements(np.astype)
def astype(x, dtype, /, *, copy=True, device=None):
    return x.astype(dtype) if isinstance(x, LazyArray) else LazyArray(tensor(x, dtype))


@implements(np.shape)
def shape(a):
    return tuple(a.shape)


@implements(np.ndim)
def ndim(a):
    return a.ndim


@implements(np.size)
def size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.result_type)
def result_type(*arrays_and_dtypes):
    return np.result_type(*[x.dtype if isinstance(x, LazyArray) else x
                            for x in arrays_and_dtypes])


@implements(np.can_cast)
def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_.dtype if isinstance(from_, LazyArray) else from_, to, casting)


@implements(np.iscomplexobj)
def iscomplexobj(x):
    return promotion_key(x).kind == "c" if not isinstance(x, type) else False


@implements(np.isrealobj)
def isrealobj(x):
    return not iscomplexobj(x)


@implements(np.shares_memory, np.may_share_memory)
def shares_memory(a, b, max_work=None):
    return _views.shares_memory(a, b)


# -- joining and splitting -------------------------------------------------------------------

def _join(arrays, dtype, casting):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if casting != "same_kind" and dtype is None:
        raise NotLazy("casting")
    return tensors_of(arrays, dtype)


@implements(np.concatenate)
def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return store(num.concatenate(_join(arrays, dtype, casting), axis), out)


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return store(num.stack(_join(arrays, dtype, casting), axis), out)


@implements(np.vstack, *([np.row_stack] if hasattr(np, "row_stack") else []))
def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate(_as_list(atleast_2d(*tup)), 0, dtype=dtype, casting=casting)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = _as_list(atleast_1d(*tup))
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


@implements(np.dstack)
def dstack(tup):
    return concatenate(_as_list(atleast_3d(*tup)), 2)


@implements(np.column_stack)
def column_stack(tup):
    cols = []
    for a in tup:
        x = tensor(a)
        cols.append(LazyArray(ops.reshape(x, new_sizes=(x.size, 1)) if x.ndim < 2 else x))
    return concatenate(cols, 1)


def _as_list(v):
    return list(v) if isinstance(v, tuple) else [v]


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    if isinstance(indices_or_sections, LazyArray):
        indices_or_sections = indices_or_sections.tolist()
    pieces = num.split(tensor(ary), indices_or_sections, axis, strict=True)
    return _split_views(ary, pieces, indices_or_sections, axis)


@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    pieces = num.split(tensor(ary), indices_or_sections, axis, strict=False)
    return _split_views(ary, pieces, indices_or_sections, axis)


def _split_views(ary, pieces, indices_or_sections, axis):
    """NumPy's pieces are slices of ``ary`` (views): ``ary[..., lo:hi]`` at its
    division points (``array_split``'s rule), each value the one ``num.split`` gave."""
    if not isinstance(ary, LazyArray):
        return wrap(pieces)
    (ax,) = num.normalize_axes(axis, ary.ndim)
    n = ary.shape[ax]
    if isinstance(indices_or_sections, int | np.integer):
        each, extra = divmod(n, int(indices_or_sections))
        sizes = [0] + extra * [each + 1] + (int(indices_or_sections) - extra) * [each]
        points = np.cumsum(sizes).tolist()
    else:
        points = [0] + [int(i) for i in indices_or_sections] + [n]
    keys = [(slice(None),) * ax + (slice(lo, hi),)
            for lo, hi in zip(points[:-1], points[1:], strict=True)]
    return [_views.index(ary, piece, key) for piece, key in zip(pieces, keys, strict=True)]


@implements(np.hsplit)
def hsplit(ary, indices_or_sections):
    x = tensor(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if x.ndim > 1 else 0)


@implements(np.vsplit)
def vsplit(ary, indices_or_sections):
    if tensor(ary).ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def dsplit(ary, indices_or_sections):
    if tensor(ary).ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


@implements(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# -- rearranging ------------------------------------------------------------------------------

@implements(np.flip)
def flip(m, axis=None):
    t = tensor(m)
    if axis is not None:  # a 0-d array has no axis to flip (AxisError, as NumPy)
        num.normalize_axes(axis, t.ndim, scalar_axes=())
    return _views.general(m, num.flip(t, axis), lambda p: num.flip(p, axis),
                          lambda p: np.flip(p, axis))


@implements(np.fliplr)
def fliplr(m):
    if tensor(m).ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


@implements(np.flipud)
def flipud(m):
    if tensor(m).ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


@implements(np.roll)
def roll(a, shift, axis=None):
    return LazyArray(num.roll(tensor(a), shift, axis))


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    x = tensor(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = (num.normalize_axes(a, x.ndim)[0] for a in axes)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k %= 4  # views of m, as NumPy's flips and transposes are
    if k in (0, 2):
        return np.flip(m, (a0, a1)) if k else m[...]
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return np.transpose(np.flip(m, a1), perm) if k == 1 else np.flip(np.transpose(m, perm), a1)


@implements(np.tile)
def tile(A, reps):  # noqa: N803 - NumPy's name
    return LazyArray(num.tile(tensor(A), reps))


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    x = tensor(a)
    if isinstance(repeats, LazyArray):
        repeats = np.asarray(repeats)  # the output size depends on the values
    if isinstance(repeats, int | np.integer):
        if repeats < 0:
            raise ValueError("negative dimensions are not allowed")
        return LazyArray(num.repeat(x, int(repeats), axis))
    reps = np.asarray(repeats)
    if axis is None:
        x, axis = num.reshape(x, (-1,)), 0
    (ax,) = num.normalize_axes(axis, x.ndim)
    idx = np.repeat(np.arange(x.shape[ax]), reps)
    return LazyArray(num.take(x, num.host_index(idx), ax))


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    x = tensor(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    return _views.general(a, num.diagonal(x, offset, axis1, axis2),
                          lambda p: num.diagonal(p, offset, axis1, axis2),
                          lambda p: np.diagonal(p, offset, axis1, axis2))


@implements(np.diag)
def diag(v, k=0):
    x = tensor(v)
    if x.ndim == 2:
        return LazyArray(num.diagonal(x, k))
    if x.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = x.shape[0] + abs(k)
    rows = np.arange(x.shape[0]) + max(-k, 0)
    cols = np.arange(x.shape[0]) + max(k, 0)
    z = num.zeros((n, n), x.dtype)
    return LazyArray(num.setitem(z, (rows, cols), x))


@implements(np.diagflat)
def diagflat(v, k=0):
    return diag(ravel(v), k)


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = LazyArray(num.diagonal(tensor(a), offset, axis1, axis2))
    return np.sum(d, axis=-1, dtype=dtype, out=out)


@implements(np.tril)
def tril(m, k=0):
    return LazyArray(num.triangle(tensor(m), k, upper=False))


@implements(np.triu)
def triu(m, k=0):
    return LazyArray(num.triangle(tensor(m), k, upper=True))


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    x = tensor(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if np.any(widths < 0):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        value = kwargs.pop("constant_values", 0)
        if kwargs or np.ndim(value) != 0 or isinstance(value, LazyArray):
            raise NotLazy("pad")
        fill = lc.scalar(np.asarray(value).astype(x.dtype)[()], x.dtype)
        config = tuple((int(lo), int(hi), 0) for lo, hi in widths)
        return LazyArray(ops.pad(x, fill, padding_config=config))
    if mode in ("edge", "wrap", "reflect", "symmetric") and not kwargs:
        return LazyArray(num.pad_indexed(x, widths, mode))
    raise NotLazy("pad")


# -- selection ------------------------------------------------------------------------------

@implements(np.where)
def where(condition, x=None, y=None, /):
    if x is None and y is None:
        return np.nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    cond = tensor(condition, np.bool_)
    tx, ty = tensors_of([x, y])
    shape = num.broadcast_shapes(cond.shape, tx.shape, ty.shape)
    return LazyArray(ops.select(*[num.broadcast_to(t, shape) for t in (cond, tx, ty)]))


@implements(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    choices = tensors_of(list(choicelist) + [default])
    conds = [tensor(c) for c in condlist]
    for c in conds:
        if c.dtype != np.bool_:
            raise TypeError("invalid entry in condlist: should be boolean ndarray")
    shape = num.broadcast_shapes(*[t.shape for t in choices + conds])
    out = num.broadcast_to(choices[-1], shape)
    for c, v in zip(reversed(conds), reversed(choices[:-1]), strict=True):
        out = ops.select(num.broadcast_to(c, shape), num.broadcast_to(v, shape), out)
    return LazyArray(out)


def checked_take(idx, size: int, axis: int, result):
    """``result``, with the lazy indices ``idx`` checked to lie in ``[-size, size)``."""
    lc.checks.index_in_range(idx, size, IndexError,
                             f"index out of bounds for axis {axis} with size {size}",
                             op="take", guards=(result,))
    return result


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    x = tensor(a)
    if axis is None:
        x, axis = num.reshape(x, (-1,)), 0
    (ax,) = num.normalize_axes(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices, LazyArray):
        # mode "raise": num.take counts negative indices from the end, as NumPy; bounds
        # are checked inside the next compiled program (NumPy's IndexError at that barrier)
        idx = indices._t
        if mode == "raise":
            return store(checked_take(idx, n, ax, num.take(x, idx, ax)), out)
        if mode == "wrap":
            idx = tensor(np.remainder(indices, n))
        elif mode == "clip":
            idx = ops.clamp(num.full(idx.shape, 0, idx.dtype), idx,
                            num.full(idx.shape, max(n - 1, 0), idx.dtype))
    else:
        host = np.asarray(indices)
        if host.dtype.kind not in "iu":
            raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') "
                            "according to the rule 'safe'")
        if mode == "raise":
            if host.size and (host.max() >= n or host.min() < -n):
                raise IndexError(f"index {host.max()} is out of bounds for axis {ax} "
                                 f"with size {n}")
        elif mode == "wrap":
            host = host % n
        else:
            host = np.clip(host, 0, n - 1)
        idx = num.host_index(host)
    return store(num.take(x, idx, ax), out)


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    x, idx = tensor(arr), tensor(indices)
    if axis is None:
        x, axis = num.reshape(x, (-1,)), 0
    if idx.ndim != x.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    (ax,) = num.normalize_axes(axis, x.ndim)
    return LazyArray(checked_take(idx, x.shape[ax], ax, num.take_along_axis(x, idx, ax)))


@implements(np.compress)
def compress(condition, a, axis=None, out=None):
    x = tensor(a)
    if axis is None:
        x, axis = num.reshape(x, (-1,)), 0
    (ax,) = num.normalize_axes(axis, x.ndim)
    cond = tensor(condition, np.bool_)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if cond.shape[0] < x.shape[ax]:
        cond = ops.pad(cond, lc.scalar(False, np.bool_),
                       padding_config=((0, x.shape[ax] - cond.shape[0], 0),))
    elif cond.shape[0] > x.shape[ax]:
        raise IndexError("condition too long")
    key = (slice(None),) * ax + (cond,)
    return store(num.getitem(x, key), out)


@implements(np.extract)
def extract(condition, arr):
    return LazyArray(num.getitem(num.reshape(tensor(arr), (-1,)),
                                 num.reshape(tensor(condition, np.bool_), (-1,))))


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, LazyArray):
        raise NotLazy("copyto")
    s = tensor(src)
    if not np.can_cast(promotion_key(src) if isinstance(src, PY_SCALARS) else s.dtype,
                       dst.dtype, casting):
        raise TypeError(f"Cannot cast scalar from {s.dtype!r} to {dst.dtype!r} according to "
                        f"the rule '{casting}'")
    s = num.broadcast_to(num.cast(s, dst.dtype), dst.shape)
    if where is not True:
        s = ops.select(num.broadcast_to(tensor(where, np.bool_), dst.shape), s, dst._t)
    dst._t = s


@implements(np.putmask)
def putmask(a, mask, values):
    if not isinstance(a, LazyArray) or np.size(values) != 1:
        raise NotLazy("putmask")
    copyto(a, values, casting="unsafe", where=mask)


@implements(np.place)
def place(arr, mask, vals):
    raise NotLazy("place")


for _f in (np.put, np.put_along_axis, np.place, np.putmask, np.copyto, np.fill_diagonal,
           np.nan_to_num):
    IN_PLACE[_f] = 0


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [num.reshape(tensor(x), (-1,)) for x in xi]
    n = len(xs)
    shapes = []
    for i, x in enumerate(xs):
        s = [1] * n
        s[i] = x.shape[0]
        if indexing == "xy" and n > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        shapes.append(tuple(s))
    out = [num.reshape(x, s) for x, s in zip(xs, shapes, strict=True)]
    if not sparse:
        out = num.broadcast_arrays(*out)
    return tuple(wrap(out))


# -- elementwise helpers -------------------------------------------------------------------------

@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,  # noqa: A002
         max=np._NoValue, **kwargs):
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    if kwargs:
        raise NotLazy("clip")
    dtype = tensor(a).dtype
    if dtype.kind in "iu":  # NumPy 2: a Python-int bound beyond the integer dtype is no bound
        info = np.iinfo(dtype)
        lo = None if type(lo) is int and lo <= info.min else lo
        hi = None if type(hi) is int and hi >= info.max else hi
    if lo is None and hi is None:
        return LazyArray(tensor(a)) if out is None else np.positive(a, out=out)
    if hi is None:
        return np.maximum(a, lo, out=out)
    if lo is None:
        return np.minimum(a, hi, out=out)
    return np.minimum(np.maximum(a, lo), hi, out=out)


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    x = tensor(a)
    if x.dtype.kind in "biu":
        if decimals >= 0:
            return store(x, out)
        raise NotLazy("round")
    if x.dtype.kind == "c":
        raise NotLazy("round")
    return store(num.round_decimals(x, decimals), out)


@implements(np.real)
def real(val):
    x = tensor(val)
    if x.dtype.kind != "c":  # NumPy returns the array itself
        return val if isinstance(val, LazyArray) else LazyArray(x)
    return _views.general(val, ops.real(x), ops.real, lambda p: p.real,
                          put=num.with_part)


@implements(np.imag)
def imag(val):
    x = tensor(val)
    if x.dtype.kind != "c":  # NumPy: a new read-only array of zeros
        out = LazyArray(ops.imag(x))
        out.setflags(write=False)
        return out
    return _views.general(val, ops.imag(x), ops.imag, lambda p: p.imag,
                          put=lambda p, c: num.with_part(p, c, imaginary=True))


@implements(np.angle)
def angle(z, deg=False):
    x = tensor(z)
    if x.dtype.kind not in "fc":
        x = num.cast(x, np.float64)
    return LazyArray(num.angle(x, deg))


@implements(np.isreal)
def isreal(x):
    return np.imag(x) == 0


@implements(np.iscomplex)
def iscomplex(x):
    return np.imag(x) != 0


@implements(np.sinc)
def sinc(x):
    y = np.pi * np.where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = tensor(x)
    if t.dtype.kind not in "fc":
        return LazyArray(t) if copy else x
    if t.dtype.kind == "c":
        raise NotLazy("nan_to_num")  # NumPy's, writing into x (IN_PLACE) for copy=False
    return store(num.nan_to_num(t, nan, posinf, neginf), None if copy else x)


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = (v if isinstance(v, LazyArray) else LazyArray(tensor(v)) for v in (a, b))
    dt = result_dtype(a, b, 1.0)
    a, b = a.astype(dt), b.astype(dt)
    finite = np.isfinite(a) & np.isfinite(b)
    close = np.abs(a - b) <= atol + rtol * np.abs(b)
    out = (finite & close) | (a == b)
    if equal_nan:
        out = out | (np.isnan(a) & np.isnan(b))
    return out


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(isclose(a, b, rtol, atol, equal_nan)))


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    if np.shape(a1) != np.shape(a2):
        return False
    eq = np.equal(a1, a2)
    if equal_nan:
        eq = eq | (np.isnan(a1) & np.isnan(a2))
    return bool(np.all(eq))


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    x = a if isinstance(a, LazyArray) else LazyArray(tensor(a))
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    (ax,) = num.normalize_axes(axis, x.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is np._NoValue:
            parts.append(None)
            continue
        e = extra if isinstance(extra, LazyArray) else LazyArray(tensor(extra))
        if e.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            e = np.broadcast_to(e, tuple(shape))
        parts.append(e)
    seq = [p for p in (parts[0], x, parts[1]) if p is not None]
    if len(seq) > 1:
        x = concatenate(seq, ax)
    op = np.not_equal if x.dtype == np.bool_ else np.subtract
    for _ in range(n):
        hi = (slice(None),) * ax + (slice(1, None),)
        lo = (slice(None),) * ax + (slice(None, -1),)
        x = op(x[hi], x[lo])
    return x


@implements(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    if y is not None or fweights is not None or aweights is not None:
        raise NotLazy("cov")
    x = atleast_2d(m if isinstance(m, LazyArray) else LazyArray(tensor(m)))
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if not rowvar and x.shape[0] != 1:
        x = x.T
    dt = normalize_dtype(dtype) or np.result_type(x.dtype, np.float64)
    x = x.astype(dt)
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = x.shape[1]
    xc = x - x.mean(axis=1, keepdims=True)
    c = np.matmul(xc, np.conj(xc).T) / (n - ddof)
    return c.squeeze() if c.shape == (1, 1) else c


@implements(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = np.diag(c)
    stddev = np.sqrt(d.real)
    c = c / stddev[:, None] / stddev[None, :]
    if c.dtype.kind == "c":
        raise NotLazy("corrcoef")
    return np.clip(c, -1, 1)
