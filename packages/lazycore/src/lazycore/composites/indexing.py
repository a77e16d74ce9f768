"""NumPy-style indexing shared by every frontend: ``getitem`` and ``setitem``.

Basic indexing (ints, slices, ``None``, ``...``) becomes ``slice``/``rev``/``reshape``;
advanced indexing (integer and boolean arrays) becomes one ``gather`` with NumPy's
placement rule for the broadcast index dimensions. ``setitem`` indexes an iota of
flat positions with the same key and scatters there, so every key that ``getitem``
understands can be assigned to. Boolean masks need their number of ``True`` values:
that syncs (counted as ``sync::data_dependent``).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..config import settings
from ..errors import IndexOutOfRange, ShapeError
from ..runtime import asarray
from ..tensor import Tensor
from ..trace import filled, scalar
from .broadcasting import broadcast_shapes, broadcast_to, cast, full
from .dynamic import count_true, nonzero_mask


def host_index(values) -> Tensor:
    """A host integer array as an int64 index tensor: device data, not a baked constant,
    so a loop whose index values change step to step does not recompile."""
    return asarray(np.asarray(values, dtype=np.int64))


def _wrap_negative(idx: Tensor, size: int) -> Tensor:
    return ops.select(ops.lt(idx, full(idx.shape, 0, idx.dtype)),
                      ops.add(idx, full(idx.shape, size, idx.dtype)), idx)


def gather_points(x: Tensor, dims, index_tensors) -> Tensor:
    """``x`` indexed on ``dims`` by integer tensors (broadcast together, may be negative).

    Result layout: broadcast index shape first, then the remaining dims in order."""
    dims = list(dims)
    idx_shape = broadcast_shapes(*[t.shape for t in index_tensors])
    columns = []
    for d, t in zip(dims, index_tensors, strict=True):
        t = _wrap_negative(cast(t, np.int64), x.shape[d])
        columns.append(ops.reshape(broadcast_to(t, idx_shape), new_sizes=idx_shape + (1,)))
    indices = columns[0] if len(columns) == 1 else ops.concatenate(
        *columns, dimension=len(idx_shape))
    others = [d for d in range(x.ndim) if d not in dims]
    return ops.gather(
        x, indices,
        offset_dims=tuple(range(len(idx_shape), len(idx_shape) + len(others))),
        collapsed_slice_dims=tuple(sorted(dims)), start_index_map=tuple(dims),
        slice_sizes=tuple(1 if d in dims else x.shape[d] for d in range(x.ndim)),
        mode="clip")


def take_along_axis(x: Tensor, idx: Tensor, axis: int) -> Tensor:
    """NumPy ``take_along_axis`` (``idx`` has ``x``'s rank; broadcasts elsewhere)."""
    axis %= x.ndim
    shape = list(broadcast_shapes(tuple(s for i, s in enumerate(x.shape) if i != axis),
                                  tuple(s for i, s in enumerate(idx.shape) if i != axis)))
    shape.insert(axis, idx.shape[axis])
    shape = tuple(shape)
    grids = []
    for d in range(x.ndim):
        if d == axis:
            grids.append(broadcast_to(idx, shape))
        else:
            grids.append(ops.iota(dtype=np.int64, shape=shape, dimension=d))
    return gather_points(x, list(range(x.ndim)), grids)


def one_hot(indices: Tensor, depth: int, axis: int = -1) -> Tensor:
    """Boolean one-hot of integer ``indices``: a new axis of ``depth`` classes at ``axis``
    of the result (``-1``: last). An index outside ``[0, depth)`` has an all-false row."""
    axis %= indices.ndim + 1
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    classes = ops.iota(dtype=indices.dtype, shape=shape, dimension=axis)
    return ops.eq(classes, ops.broadcast_in_dim(indices, shape=shape, broadcast_dimensions=tuple(
        d if d < axis else d + 1 for d in range(indices.ndim))))


def take(x: Tensor, idx: Tensor, axis: int) -> Tensor:
    """``x`` indexed by ``idx`` along ``axis``; the index dims replace that axis (a 0-d
    ``x`` is read as one element along axis 0)."""
    if x.ndim == 0:
        x = ops.reshape(x, new_sizes=(1,))
    axis %= x.ndim
    return _move_front(gather_points(x, [axis], [idx]), idx.ndim, axis)


_SCATTER_OPS = {None: "scatter", "add": "scatter_add", "mul": "scatter_mul",
                "max": "scatter_max", "min": "scatter_min"}


def scatter_along_axis(x: Tensor, axis: int, index: Tensor, src, reduce=None) -> Tensor:
    """``x`` with ``src`` written at ``index`` along ``axis`` and at its own position
    along every other axis (``torch.scatter``, ``np.put_along_axis``); ``reduce``
    (``"add"``, ``"mul"``, ``"max"``, ``"min"``) combines instead of overwriting.
    ``index`` has ``x``'s rank; a tensor ``src`` is read over ``index``'s shape, a
    scalar ``src`` is written everywhere. Negative indices count from the end;
    out-of-range ones are dropped (a frontend checks them)."""
    if x.ndim == 0:
        def flat(t):
            return ops.reshape(t, new_sizes=(t.size,)) if isinstance(t, Tensor) else t
        out = scatter_along_axis(flat(x), 0, flat(index), flat(src), reduce)
        return ops.reshape(out, new_sizes=())
    axis %= x.ndim
    if index.size == 0:
        return x
    if isinstance(src, Tensor):
        src = cast(src, x.dtype)
        if src.shape != index.shape:
            src = ops.slice(src, start_indices=(0,) * src.ndim, limit_indices=index.shape)
    else:
        src = full(index.shape, src, x.dtype)
    index = _wrap_negative(cast(index, np.int64), x.shape[axis])
    cols = [ops.reshape(index if d == axis else
                        ops.iota(dtype=np.int64, shape=index.shape, dimension=d),
                        new_sizes=index.shape + (1,)) for d in range(x.ndim)]
    points = cols[0] if len(cols) == 1 else ops.concatenate(*cols, dimension=index.ndim)
    every = tuple(range(x.ndim))
    return ops.get(_SCATTER_OPS[reduce])(x, points, src, update_window_dims=(),
                                         inserted_window_dims=every,
                                         scatter_dims_to_operand_dims=every, mode="fill")


def index_copy(x: Tensor, axis: int, index: Tensor, src: Tensor, mode: str = "set") -> Tensor:
    """``x`` with slice ``i`` of ``src`` along ``axis`` written at row ``index[i]``
    (``torch.index_copy``; ``mode="add"`` accumulates repeated rows: ``index_add``,
    ``np.add.at`` along one axis): one windowed scatter, rows outside ``[0, size)``
    dropped (frontends check them); a 0-d ``x`` is one row."""
    if x.ndim == 0:
        return ops.reshape(index_copy(ops.reshape(x, new_sizes=(1,)), 0, index, src, mode),
                           new_sizes=())
    axis %= x.ndim
    rows = ops.reshape(cast(src, x.dtype), new_sizes=x.shape[:axis] + (index.size,) + x.shape[axis + 1:])
    scatter = ops.scatter_add if mode == "add" else ops.scatter
    return scatter(x, ops.reshape(index, new_sizes=(index.size, 1)), rows,
                   update_window_dims=tuple(d for d in range(x.ndim) if d != axis),
                   inserted_window_dims=(axis,), scatter_dims_to_operand_dims=(axis,), mode="fill")


def index_add(x: Tensor, axis: int, index: Tensor, src: Tensor) -> Tensor:
    return index_copy(x, axis, index, src, mode="add")


def index_fill(x: Tensor, axis: int, index: Tensor, value) -> Tensor:
    """``x`` with every slice ``index[i]`` along ``axis`` set to ``value`` (a scalar or
    a 0-d tensor); a 0-d ``x`` is one element along axis 0."""
    idx = ops.reshape(index, new_sizes=(index.size,))
    v = cast(value, x.dtype) if isinstance(value, Tensor) else scalar(value, x.dtype)
    if x.ndim == 0:
        return ops.reshape(setitem(ops.reshape(x, new_sizes=(1,)), (idx,), v), new_sizes=())
    axis %= x.ndim
    return setitem(x, (slice(None),) * axis + (idx,), v)


def pad_indexed(x: Tensor, pads, mode: str, strict: bool = False) -> Tensor:
    """NumPy's ``edge``/``wrap``/``reflect``/``symmetric`` padding: one gather per padded
    axis of the positions ``np.pad`` gives ``arange`` (its errors too: an empty axis).
    ``strict``: TF's ``REFLECT``/``SYMMETRIC``, which refuse a pad as wide as the axis
    (``SYMMETRIC``: wider) where NumPy reflects again."""
    for axis, (lo, hi) in enumerate(pads):
        if strict and max(lo, hi) > x.shape[axis] - (mode == "reflect"):
            raise ShapeError(f"pad {lo, hi} too wide for axis {axis} of {x.aval}", op="pad")
        if lo or hi:
            x = take(x, host_index(np.pad(np.arange(x.shape[axis]), (int(lo), int(hi)),
                                          mode=mode)), axis)
    return x


def take_batched(x: Tensor, idx: Tensor, axis: int, batch_dims: int) -> Tensor:
    """TF's ``gather`` with ``batch_dims``: ``out[b.., a.., j.., r..] = x[b.., a.., idx[b..,
    j..], r..]``, the leading ``batch_dims`` axes of ``x`` and ``idx`` paired (equal)."""
    b, j, a = batch_dims, idx.ndim - batch_dims, axis - batch_dims
    if a < 0 or x.shape[:b] != idx.shape[:b]:
        raise ShapeError(f"batch_dims {b} with axis {axis}: {x.aval} and {idx.aval}", op="gather")
    grids = [ops.iota(dtype=np.int64, shape=idx.shape, dimension=d) for d in range(b)]
    out = gather_points(x, list(range(b)) + [axis], grids + [idx])  # (B, J, A, R)
    return ops.transpose(out, permutation=(*range(b), *range(b + j, b + j + a), *range(b, b + j),
                                           *range(b + j + a, out.ndim)))


def _move_front(x: Tensor, count: int, position: int) -> Tensor:
    """Move the first ``count`` axes to start at ``position``."""
    if count == 0 or position == 0:
        return x
    rest = list(range(count, x.ndim))
    perm = rest[:position] + list(range(count)) + rest[position:]
    return ops.transpose(x, permutation=tuple(perm))


# -- key parsing -----------------------------------------------------------------------

def is_int(k) -> bool:
    return isinstance(k, int | np.integer) and not isinstance(k, bool | np.bool_)


def _expand_key(key, ndim: int, nonzero) -> list:
    """Tuple-ize, turn masks into integer arrays and replace ``...`` with slices."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if isinstance(k, list | range):  # a sequence (not a tuple) is an index array
            k = np.asarray(k)
            if k.dtype == object:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), "
                                 "numpy.newaxis (`None`) and integer or boolean arrays are "
                                 "valid indices")
            if k.size == 0:
                k = k.astype(np.int64)
        items.append(k)
    consumed = 0
    for k in items:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, bool | np.bool_):
            continue
        if isinstance(k, Tensor | np.ndarray) and k.dtype == np.bool_:
            consumed += k.ndim
        else:
            consumed += 1
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    out = []
    for k in items:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        elif isinstance(k, bool | np.bool_):
            out.append(("scalar_bool", bool(k)))
        elif isinstance(k, Tensor | np.ndarray) and k.dtype == np.bool_ and k.ndim == 0:
            # a 0-d mask acts like True/False: a new axis of length 1 or 0 (syncs if lazy)
            if isinstance(k, np.ndarray):
                out.append(("scalar_bool", bool(k)))
            else:
                out.append(("scalar_bool", count_true(k) > 0))
        elif isinstance(k, Tensor | np.ndarray) and k.dtype == np.bool_:
            out.extend(("adv", t) for t in nonzero(k))
        elif isinstance(k, Tensor | np.ndarray):
            if not (np.issubdtype(k.dtype, np.integer)):
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            out.append(("adv", k))
        elif k is None or isinstance(k, slice) or is_int(k):
            out.append(k)
        elif hasattr(k, "__index__"):
            out.append(int(k.__index__()))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
    if not any(k is Ellipsis for k in items):
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _host_nonzero(mask: np.ndarray):
    return [np.asarray(i, dtype=np.int64) for i in np.nonzero(mask)]


def basic_signature(key):
    """A hashable stand-in for a key of Python ints and slices with int/None bounds
    (the stencils and row reads of every loop), or None for any other key."""
    items = key if type(key) is tuple else (key,)
    sig = []
    for k in items:
        t = type(k)
        if t is slice:
            a, b, c = k.start, k.stop, k.step
            if not ((a is None or type(a) is int) and (b is None or type(b) is int)
                    and (c is None or type(c) is int)):
                return None
            sig.append((a, b, c))
        elif t is int:
            sig.append(k)
        else:
            return None
    return tuple(sig)


_BASIC_PLANS: dict = {}


def _basic_plan(shape: tuple, sig: tuple):
    """(slice attrs or None, flipped dims, result shape, integer indices) of ``x[key]``
    for a basic signature: computed once per (shape, key); IndexError as NumPy's."""
    if len(sig) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {len(sig)} were indexed")
    starts, limits, strides, flips, out, ints = [], [], [], [], [], {}
    for d, size in enumerate(shape):
        k = sig[d] if d < len(sig) else (None, None, None)
        if type(k) is tuple:
            lo, hi, st = slice(*k).indices(size)
            if st > 0:
                n = max(0, -(-(hi - lo) // st))
                starts.append(lo)
                limits.append(lo + (n - 1) * st + 1 if n else lo)
            else:
                n = max(0, -(-(lo - hi) // -st))
                starts.append(lo + (n - 1) * st if n else 0)
                limits.append(lo + 1 if n else 0)
            strides.append(abs(st))
            flips.append(st < 0)
            out.append(n)
        else:
            if not -size <= k < size:
                raise IndexOutOfRange(f"index {k} is out of bounds for axis {d} with size "
                                      f"{size}", op="getitem")
            ints[d] = k % size  # read at a parameter: x[i] in a loop is one program
            starts.append(0)
            limits.append(size)
            strides.append(1)
            flips.append(False)
    whole = all(s == 0 for s in starts) and tuple(limits) == tuple(shape) and all(
        st == 1 for st in strides)
    attrs = None if whole or not shape else dict(
        start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides))
    flip_dims = tuple(d for d, f in enumerate(flips) if f)
    if len(_BASIC_PLANS) > 4096:
        _BASIC_PLANS.clear()
    plan = _BASIC_PLANS[(shape, sig)] = (attrs, flip_dims, tuple(out), ints)
    return plan


def _basic_getitem(x: Tensor, sig: tuple) -> Tensor:
    plan = _BASIC_PLANS.get((x.shape, sig))
    if plan is None:
        plan = _basic_plan(x.shape, sig)
    attrs, flip_dims, shape, ints = plan
    y = x if attrs is None else ops.slice(x, **attrs)
    if ints:
        starts = [scalar(ints.get(d, 0), np.int64, bake=d not in ints or settings.bake_scalars)
                  for d in range(y.ndim)]  # a captured trace bakes: a static slice
        y = ops.dynamic_slice(y, *starts, slice_sizes=tuple(
            1 if d in ints else n for d, n in enumerate(y.shape)))
    if flip_dims:
        y = ops.rev(y, dimensions=flip_dims)
    return y if y.shape == shape else ops.reshape(y, new_sizes=shape)


def getitem(x: Tensor, key, nonzero=None) -> Tensor:
    """``x[key]`` with NumPy semantics. ``nonzero(mask)`` turns a boolean mask into
    index arrays (default: ``lazycore.numeric.nonzero``, which syncs the count)."""
    sig = basic_signature(key)
    if sig is not None:
        return _basic_getitem(x, sig)
    if nonzero is None:
        nonzero = nonzero_mask
    items = _expand_key(key, x.ndim, lambda m: _host_nonzero(m) if isinstance(m, np.ndarray)
                        else nonzero(m))
    if any(isinstance(k, tuple) and k[0] == "adv" for k in items):
        # next to an index array, an integer is an advanced (0-d array) index too
        items = [("adv", np.asarray(k, dtype=np.int64)) if is_int(k) else k for k in items]
    # 1) basic indexing: slices, ints, None; advanced entries keep their axis
    starts, limits, strides, flips = [], [], [], []
    out_shape_plan = []  # per output axis after basic step: ("dim", d) / ("new",)
    int_dims = []
    adv = []  # (axis in the sliced array, index)
    dim = 0
    for k in items:
        if k is None:
            out_shape_plan.append(("new",))
            continue
        if isinstance(k, tuple) and k[0] == "scalar_bool":
            out_shape_plan.append(("bool", k[1]))
            continue
        size = x.shape[dim]
        if isinstance(k, slice):
            lo, hi, st = k.indices(size)
            if st > 0:
                n = max(0, -(-(hi - lo) // st))
                starts.append(lo)
                limits.append(lo + (n - 1) * st + 1 if n else lo)
                strides.append(st)
                flips.append(False)
            else:
                n = max(0, -(-(lo - hi) // -st))
                # reversed: take the same elements ascending, then flip
                starts.append(lo + (n - 1) * st if n else 0)
                limits.append(lo + 1 if n else 0)
                strides.append(-st)
                flips.append(True)
            out_shape_plan.append(("dim", dim))
        elif isinstance(k, tuple) and k[0] == "adv":
            starts.append(0)
            limits.append(size)
            strides.append(1)
            flips.append(False)
            adv.append((dim, k[1]))
            out_shape_plan.append(("adv", dim))
        else:
            i = int(k)
            if not -size <= i < size:
                raise IndexOutOfRange(f"index {i} is out of bounds for axis {dim} with size "
                                      f"{size}", op="getitem")
            i %= size
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            flips.append(False)
            int_dims.append(dim)
        dim += 1
    y = x
    if x.ndim and (any(s != 0 for s in starts) or any(lim != s for lim, s in zip(
            limits, x.shape, strict=True)) or any(st != 1 for st in strides)):
        y = ops.slice(x, start_indices=tuple(starts), limit_indices=tuple(limits),
                      strides=tuple(strides))
    flip_dims = tuple(d for d, f in enumerate(flips) if f)
    if flip_dims:
        y = ops.rev(y, dimensions=flip_dims)
    # 2) advanced indexing on the kept dims
    if adv:
        tensors = []
        for d, idx in adv:
            if isinstance(idx, np.ndarray):
                size = x.shape[d]
                if idx.size and (idx.max() >= size or idx.min() < -size):
                    bad = idx[(idx >= size) | (idx < -size)].flat[0]
                    raise IndexOutOfRange(f"index {bad} is out of bounds for axis {d} with "
                                          f"size {size}", op="getitem")
                idx = host_index(idx)
            tensors.append(idx)
        # drop the int-indexed dims first so axis numbers line up with the plan
        kept = [d for d in range(x.ndim) if d not in int_dims]
        if int_dims:
            y = ops.reshape(y, new_sizes=tuple(y.shape[d] for d in kept))
        pos = [kept.index(d) for d, _ in adv]
        g = gather_points(y, pos, tensors)
        nb = g.ndim - (y.ndim - len(pos))
        plan = [p for p in out_shape_plan]
        adjacent = _adjacent([i for i, p in enumerate(plan) if p[0] == "adv"], plan)
        if adjacent:
            first = next(i for i, p in enumerate(plan) if p[0] == "adv")
            insert_at = sum(1 for p in plan[:first] if p[0] == "dim")
            g = _move_front(g, nb, insert_at)
            plan = [p for p in plan[:first] if p[0] != "adv"] + [("idx",)] + \
                [p for p in plan[first:] if p[0] != "adv"]
        else:  # result: index dims then the remaining kept dims in order
            plan = [("idx",)] + [p for p in plan if p[0] != "adv"]
        return _apply_plan(g, plan, nb)
    shape = []
    dims_iter = iter(s for d, s in enumerate(y.shape) if d not in int_dims)
    for p in out_shape_plan:
        if p[0] == "new":
            shape.append(1)
        elif p[0] == "bool":
            shape.append(1 if p[1] else 0)
        else:
            shape.append(next(dims_iter))
    shape = tuple(shape)
    if any(p[0] == "bool" and not p[1] for p in out_shape_plan):
        return ops.reshape(ops.slice(ops.reshape(y, new_sizes=(y.size,)), start_indices=(0,),
                                     limit_indices=(0,)), new_sizes=shape) if y.size else \
            ops.reshape(y, new_sizes=shape)
    return y if shape == y.shape else ops.reshape(y, new_sizes=shape)


def _adjacent(positions, plan) -> bool:
    """NumPy keeps index dims in place only when advanced indices are contiguous."""
    if len(positions) <= 1:
        return True
    return positions == list(range(positions[0], positions[-1] + 1)) and not any(
        p[0] in ("new", "bool") for p in plan[positions[0]:positions[-1] + 1])


def _apply_plan(g: Tensor, plan, nb: int) -> Tensor:
    """Insert the ``None`` / scalar-bool axes into the gathered result."""
    if all(p[0] in ("idx", "dim") for p in plan):
        return g
    shape, dims, i = [], list(g.shape), 0
    for p in plan:
        if p[0] == "idx":
            shape.extend(dims[i:i + nb])
            i += nb
        elif p[0] == "dim":
            shape.append(dims[i])
            i += 1
        elif p[0] == "new":
            shape.append(1)
        else:
            shape.append(1 if p[1] else 0)
    if 0 in shape and g.size:
        return ops.reshape(ops.slice(ops.reshape(g, new_sizes=(g.size,)), start_indices=(0,),
                                     limit_indices=(0,)), new_sizes=tuple(shape))
    return ops.reshape(g, new_sizes=tuple(shape))


def setitem(x: Tensor, key, value: Tensor, mode: str = "set", nonzero=None) -> Tensor:
    """A new value equal to ``x`` with ``x[key] = value`` applied (``mode="add"``
    accumulates, as ``index_put_(accumulate=True)``)."""
    value = cast(value, x.dtype)
    fast = _basic_region(x, key)
    if fast is not None and mode == "set":
        starts, sizes, shape = fast
        try:
            v = broadcast_to(value, shape)
        except ShapeError:
            raise ShapeError(f"could not broadcast input array from shape {value.shape} into "
                             f"shape {shape}", op="setitem") from None
        if v.shape != sizes:  # an int in the key: its axis of 1
            v = ops.reshape(v, new_sizes=sizes)
        start_tensors = [scalar(int(s), np.int64) for s in starts]  # no recompile per start
        return ops.dynamic_update_slice(x, v, *start_tensors)
    positions = ops.iota(dtype=np.int64, shape=(x.size,), dimension=0)
    positions = ops.reshape(positions, new_sizes=x.shape)
    picked = getitem(positions, key, nonzero)
    try:
        v = broadcast_to(value, picked.shape)
    except ShapeError:
        raise ShapeError(f"shape mismatch: value array of shape {value.shape} could not be "
                         f"broadcast to indexing result of shape {picked.shape}",
                         op="setitem") from None
    flat_idx = ops.reshape(picked, new_sizes=(picked.size, 1))
    flat_v = ops.reshape(v, new_sizes=(v.size,))
    flat_x = ops.reshape(x, new_sizes=(x.size,))
    scatter = ops.scatter_add if mode == "add" else ops.scatter
    out = scatter(flat_x, flat_idx, flat_v, update_window_dims=(), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,), mode="fill")
    return ops.reshape(out, new_sizes=x.shape)


def _basic_region(x: Tensor, key):
    """For keys of ints, step-1 slices, ``...``: (starts, block sizes, result shape)."""
    items = key if isinstance(key, tuple) else (key,)
    if any(not (k is Ellipsis or isinstance(k, slice) or is_int(k)) for k in items):
        return None
    if sum(1 for k in items if k is Ellipsis) > 1:
        return None
    n_real = sum(1 for k in items if k is not Ellipsis)
    if n_real > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{n_real} were indexed")
    expanded = []
    for k in items:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - n_real))
        else:
            expanded.append(k)
    expanded.extend([slice(None)] * (x.ndim - len(expanded)))
    starts, sizes, shape = [], [], []
    for d, k in enumerate(expanded):
        size = x.shape[d]
        if isinstance(k, slice):
            lo, hi, st = k.indices(size)
            if st != 1:
                return None
            starts.append(lo)
            sizes.append(max(hi - lo, 0))
            shape.append(max(hi - lo, 0))
        else:
            i = int(k)
            if not -size <= i < size:
                raise IndexOutOfRange(f"index {i} is out of bounds for axis {d} with size "
                                      f"{size}", op="setitem")
            starts.append(i % size)
            sizes.append(1)
    return starts, tuple(sizes), tuple(shape)


# -- writes at flat positions (element writes, writes through views) -----------------------

_FLAT = dict(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
             mode="fill")


def write_elements(x: Tensor, writes: dict) -> Tensor:
    """``x`` with ``writes`` (flat C-order position -> host scalar already in ``x``'s
    dtype) applied: the element writes a frontend collected since ``x`` was last read
    (``u0[i, j] = T`` in a Python loop) as ONE scatter. Positions and values are device
    data (other positions or values reuse the program); equal values are one parameter.
    The count is padded to a power of two by repeating the last write (the same value
    at the same position, whatever the scatter's order), so a run of N writes meets
    log2(N) shapes, not N: shape rules and programs are reused. Positions are distinct
    otherwise (a dict), so the order of updates does not matter."""
    n = len(writes)
    if not n:
        return x
    m = 1 << (n - 1).bit_length()
    table = np.array(list(writes.values()), dtype=x.dtype)
    if table.tobytes() == table[:1].tobytes() * n:  # bitwise: -0.0 is not 0.0, NaN is NaN
        values = filled(table[0], x.dtype, (m,))
    else:
        values = asarray(np.concatenate([table, np.repeat(table[-1:], m - n)]))
    where = np.empty((m, 1), np.int64)
    where[:n, 0] = np.fromiter(writes, dtype=np.int64, count=n)
    where[n:, 0] = where[n - 1, 0]
    return ops.reshape(ops.scatter(ops.reshape(x, new_sizes=(x.size,)), host_index(where),
                                   values, **_FLAT), new_sizes=x.shape)


def write_positions(x: Tensor, positions, values: Tensor, *,
                    last_changed: bool = False) -> Tensor:
    """``x`` with the elements at flat (row-major) ``positions`` set to ``values`` (of
    ``positions``' size; positions in range): a write through a strided view of ``x``'s
    storage. ``positions``: an integer tensor, or a host integer array (then device
    data: other positions reuse the program). Positions are distinct -- one scatter --
    unless ``last_changed``: then where several elements share a position (overlapping
    windows of ``as_strided``), the last one in order whose value differs bitwise from
    what ``x`` holds there wins, as an element-by-element copy into shared memory leaves
    it (an element written back unchanged does not undo another's write)."""
    n = values.size
    flat = ops.reshape(x, new_sizes=(x.size,))
    child = ops.reshape(cast(values, x.dtype), new_sizes=(n,))
    if isinstance(positions, Tensor):
        pos = ops.reshape(cast(positions, np.int64), new_sizes=(n,))
    else:
        pos = host_index(np.asarray(positions).reshape(n))
    where = ops.reshape(pos, new_sizes=(n, 1))
    if not last_changed:
        return ops.reshape(ops.scatter(flat, where, child, **_FLAT), new_sizes=x.shape)
    old = take(flat, pos, 0)
    order = ops.iota(dtype=np.dtype(np.int64), shape=(n,), dimension=0)
    last = ops.select(_differs(old, child), order, full((n,), -1, np.int64))
    winner = ops.scatter_max(full((x.size,), -1, np.int64), where, last, **_FLAT)
    picked = take(child, ops.max(winner, full((x.size,), 0, np.int64)), 0)
    return ops.reshape(ops.select(ops.ge(winner, full((x.size,), 0, np.int64)), picked, flat),
                       new_sizes=x.shape)


def _differs(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise: ``a`` and ``b`` differ bitwise (NaN equals the same NaN, ``-0.0``
    differs from ``0.0``; complex: either part)."""
    kind = a.dtype.kind
    if kind == "c":
        parts = [_differs(f(a), f(b)) for f in (ops.real, ops.imag)]
        return ops.bitwise_or(*parts)
    if kind == "f":
        bits = np.dtype(f"u{a.dtype.itemsize}")
        a, b = (ops.bitcast_convert(t, dtype=bits) for t in (a, b))
    return ops.ne(a, b)


def masked_assign(x: Tensor, mask: Tensor, value: Tensor, *, full_shape: bool = False) -> Tensor:
    """``x[mask] = value`` for a boolean ``mask`` over ``x``'s leading axes, as one
    ``select``: no count of ``True`` values is needed, so no sync. ``value`` broadcasts
    to the selection ``x[mask]`` whatever its length: to the trailing axes, with at most
    a leading axis of length 1 (the caller checked). ``full_shape``: ``value`` has
    ``x``'s shape (a selection kept at full shape: ``a[mask] op= v``), and only the
    positions under ``mask`` are taken from it."""
    value = cast(value, x.dtype)
    if not full_shape:
        if value.ndim > x.ndim - mask.ndim:
            value = ops.reshape(value, new_sizes=value.shape[1:])
        value = broadcast_to(value, x.shape)
    m = ops.reshape(mask, new_sizes=mask.shape + (1,) * (x.ndim - mask.ndim))
    return ops.select(broadcast_to(m, x.shape), value, x)
