"""Advanced indexing, gather/scatter, index_select/index_add, nonzero, masked ops."""

from __future__ import annotations

import lazycore as lc

from .common import D, full_like, num, ops, wrap_dim
from .registry import lower

SELF_RANGE = "index out of range in self"


def checked(index, size: int, error_type, message: str, op: str, result, *,
            negative: bool = True):
    """``result`` of ``op``, with ``index`` (a lazy integer tensor) checked to lie in
    ``[-size, size)`` (``negative``) or ``[0, size)`` inside the next compiled program:
    eager PyTorch's error is raised at that barrier, never a clamped value."""
    if isinstance(index, lc.Tensor) and D.is_integer(index.dtype):
        lc.checks.index_in_range(index, size, error_type, message, op=op,
                                 negative=negative, guards=(result,))
    return result


def _bounds(dim: int, size: int) -> str:
    return f"index is out of bounds for dimension {dim} with size {size}"


def _check_index(t):
    if not (D.is_integer(t.dtype) or D.is_bool(t.dtype)):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _key(indices):
    key = []
    for t in indices:
        if t is None:
            key.append(slice(None))
        else:
            _check_index(t)
            key.append(num.cast(t, D.bool_) if t.dtype == D.uint8 else t)
    return tuple(key)


@lower("index.Tensor", "_unsafe_index.Tensor")
def index(x, indices):
    if len(indices) > x.ndim and not any(t is not None and t.dtype == D.bool_ for t in indices):
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got "
                         f"{len(indices)})")
    result = num.getitem(x, _key(indices))
    _check_key(x, indices, result, "aten.index")
    return result


def _check_key(x, indices, result, op):
    dim = 0
    for t in indices:
        if t is not None and t.dtype in (D.bool_, D.uint8):
            dim += t.ndim
            continue
        if t is not None and dim < x.ndim:
            checked(t, x.shape[dim], IndexError, _bounds(dim, x.shape[dim]), op, result)
        dim += 1


@lower("index_put.default", "index_put_.default", "_unsafe_index_put.default")
def index_put(x, indices, values, accumulate=False):
    if values.dtype != x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_n(x.dtype)} for the destination and {_n(values.dtype)} for the "
                           "source.")
    result = num.setitem(x, _key(indices), values, mode="add" if accumulate else "set")
    _check_key(x, indices, result, "aten.index_put")
    return result


def _n(dt):
    return {D.float32: "Float", D.float64: "Double", D.int64: "Long", D.bool_: "Bool"}.get(
        dt, str(dt))


@lower("index_select.default")
def index_select(x, dim, index):
    _check_index(index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, x.ndim)
    out = num.take(x, num.reshape(index, (index.size,)), d)
    if x.ndim == 0:
        out = num.reshape(out, ())
    return checked(index, x.shape[d] if x.ndim else 1, IndexError, SELF_RANGE,
                   "aten.index_select", out, negative=False)


def _grids(index, dim):
    return [index if d == dim else ops.iota(dtype=D.int64, shape=index.shape, dimension=d)
            for d in range(index.ndim)]


@lower("gather.default")
def gather(x, dim, index, *, sparse_grad=False):
    if not D.is_integer(index.dtype):
        raise RuntimeError("gather(): Expected dtype int64 for index")
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        out = ops.reshape(num.take(ops.reshape(x, new_sizes=(1,)), index, 0),
                          new_sizes=index.shape)
        return checked(index, 1, RuntimeError, _bounds(d, 1), "aten.gather", out,
                       negative=False)
    if index.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.size == 0:
        return num.full(index.shape, 0, x.dtype)
    out = num.gather_points(x, list(range(x.ndim)), _grids(index, d))
    return checked(index, x.shape[d], RuntimeError, _bounds(d, x.shape[d]), "aten.gather", out,
                   negative=False)


_SCATTER_REDUCE = {None: None, "add": "add", "sum": "add", "multiply": "mul", "prod": "mul",
                   "amax": "max", "amin": "min"}


@lower("scatter.src", "scatter_.src", "scatter.value", "scatter_.value", "scatter.reduce",
       "scatter_.reduce", "scatter.value_reduce", "scatter_.value_reduce")
def _scatter(x, dim, index, src, reduce=None):
    d = wrap_dim(dim, x.ndim)
    if index.dtype != D.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    if index.size == 0:
        return x
    out = num.scatter_along_axis(x, d, index, src, _SCATTER_REDUCE[reduce])
    size = x.shape[d] if x.ndim else 1
    return checked(index, size, RuntimeError, _bounds(d, size), "aten.scatter", out,
                   negative=False)


@lower("scatter_reduce.two", "scatter_reduce_.two")
def scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    """``include_self=False`` first writes the reduction's identity where ``index`` points,
    so those positions reduce over ``src`` alone; ``mean`` divides the sum by the count of
    values (the original counted when included; at least 1, as ATen). GNN aggregation."""
    if D.is_bool(x.dtype) or reduce == "mean" and not D.is_floating(x.dtype):
        return NotImplemented
    bounds = ((-float("inf"), float("inf")) if D.is_floating(x.dtype) else
              (int(D.iinfo(x.dtype).min), int(D.iinfo(x.dtype).max)))
    if not include_self:  # the identities: amax's is the lowest value, amin's the highest
        x = _scatter(x, dim, index, {"prod": 1, "amax": bounds[0], "amin": bounds[1]}.get(reduce, 0))
    total = _scatter(x, dim, index, src, "sum" if reduce == "mean" else reduce)
    if reduce != "mean":
        return total
    count = _scatter(num.full(x.shape, int(include_self), x.dtype), dim, index, 1, "sum")
    return ops.div(total, ops.max(count, full_like(count, 1)))


@lower("scatter_add.default", "scatter_add_.default")
def scatter_add(x, dim, index, src):
    return _scatter(x, dim, index, src, "add")


@lower("index_add.default", "index_add_.default")
def index_add(x, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, x.ndim)
    if source.dtype != x.dtype:
        raise RuntimeError(f"index_add_(): self ({_n(x.dtype)}) and source ({_n(source.dtype)}) "
                           "must have the same scalar type")
    scalar_rows = not source.ndim and index.size != 1  # eager: a 0-d source is one row of a 0-d self
    if scalar_rows or (x.ndim == 0) != (source.ndim == 0):
        raise (IndexError if scalar_rows and d == 0 else RuntimeError)(
            f"index_add_(): source shape {list(source.shape)} does not match self shape {list(x.shape)}")
    src = source if alpha == 1 else ops.mul(source, num.full(source.shape, alpha, x.dtype))
    # eager's CPU kernel: IndexError for scalars and vectors, RuntimeError otherwise
    error, message = (IndexError, SELF_RANGE) if x.ndim <= 1 else (RuntimeError, _bounds(d, x.shape[d]))
    return checked(index, x.shape[d] if x.ndim else 1, error, message, "aten.index_add",
                   num.index_add(x, d, index, src), negative=False)


@lower("index_copy.default", "index_copy_.default")
def index_copy(x, dim, index, source):
    d = wrap_dim(dim, x.ndim)
    for bad, error, message in (  # eager's checks, in its order
            (index.ndim > 1, IndexError, f"Index should have dimension 1 or 0 (got {index.ndim})"),
            (index.dtype != D.int64, RuntimeError, f"Expected a long tensor for index, but got {_n(index.dtype)}"),
            (source.dtype != x.dtype, RuntimeError, f"self and source expected to have the same "
             f"dtype, but got (self) {_n(x.dtype)} and (source) {_n(source.dtype)}"),
            (x.ndim and source.ndim and x.ndim != source.ndim, IndexError, "When source and "
             f"destination are not scalars, their dimensionality must match ({source.ndim}, {x.ndim})"),
            (not source.ndim and index.size != 1, IndexError, "When source is scalar, index should "
             f"have one element (got {index.size})"),
            (x.shape[:d] + x.shape[d + 1:] != source.shape[:d] + source.shape[d + 1:], RuntimeError,
             f"Source/destination tensor must have same slice shapes ({source.shape}, {x.shape})"),
            (index.size != (source.shape[d] if source.ndim else 1), IndexError,
             f"Number of indices ({index.size}) should be equal to source.size(dim)")):
        if bad:
            raise error(f"index_copy_(): {message}")
    return checked(index, x.shape[d] if x.ndim else 1, IndexError, _bounds(d, x.shape[d] if x.ndim else 1),
                   "aten.index_copy", num.index_copy(x, d, index, source), negative=False)


@lower("nonzero.default")
def nonzero(x):
    return num.argwhere(x)


@lower("masked_select.default")
def masked_select(x, mask):
    if mask.dtype != D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = num.broadcast_shapes(x.shape, mask.shape)
    return num.getitem(num.broadcast_to(x, shape), num.broadcast_to(mask, shape))


@lower("masked_scatter.default")
def masked_scatter(x, mask, source):
    """The k-th ``True`` of the broadcast mask (row-major, eager's order) takes ``source``'s
    k-th element: its position is the count of ``True`` before it, checked against
    ``source``'s size in the next program (eager's kernel raises then). ``masked_select``'s
    gradient."""
    if mask.dtype != D.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_n(mask.dtype)}")
    if source.dtype != x.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_n(x.dtype)} and {_n(source.dtype)}")
    if not source.size:
        return NotImplemented
    full = num.broadcast_to(mask, num.broadcast_shapes(x.shape, mask.shape))
    flat = num.reshape(full, (full.size,))
    ones = num.cast(flat, D.int64)
    before = ops.sub(ops.cumsum(ones, axis=0), ones)
    pos = num.where(flat, before, full_like(before, 0))
    out = num.masked_assign(
        num.broadcast_to(x, full.shape), full, full_shape=True,
        value=num.reshape(num.take(num.reshape(source, (source.size,)), pos, 0), full.shape))
    return checked(pos, source.size, RuntimeError, "Number of elements of source < number "
                   "of ones in mask", "aten.masked_scatter", out, negative=False)


@lower("take.default")
def take(x, index):
    return checked(index, x.size, IndexError, f"out of range: tried to access an index out of "
                   f"[-{x.size}, {x.size}) on a tensor of {x.size} elements.", "aten.take",
                   num.take(ops.reshape(x, new_sizes=(x.size,)), index, 0))


@lower("index_fill.int_Scalar", "index_fill_.int_Scalar", "index_fill.int_Tensor",
       "index_fill_.int_Tensor")
def index_fill(x, dim, index, value):
    d = wrap_dim(dim, x.ndim)
    out = num.index_fill(x, d, index, value)
    size = x.shape[d] if x.ndim else 1
    return checked(index, size, IndexError, _bounds(d, size), "aten.index_fill", out)
