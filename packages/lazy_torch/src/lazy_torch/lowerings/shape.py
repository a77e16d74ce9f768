"""Shape ops. View ops here only compute the view's value; the dispatcher makes it
share storage with its base (see ``_tensor``). Non-view ops build new values."""

from __future__ import annotations

import math

import numpy as np

import lazycore as lc

from .._convert import np_dtype
from .common import D, compute_dtype, num, ops, wrap_dim, wrap_dims
from .registry import lower


def infer_size(shape, numel: int) -> tuple[int, ...]:
    shape = [int(s) for s in shape]
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        i = shape.index(-1)
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[i] = numel // known
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def reshape(x, shape):
    shape = infer_size(shape, x.size)
    return x if shape == x.shape else ops.reshape(x, new_sizes=shape)


@lower("view.default", "_unsafe_view.default", "_reshape_copy.default",
       "view_copy.default", "prims.reshape.default")
def view(x, size):
    return reshape(x, size)


@lower("_reshape_alias.default")
def reshape_alias(x, size, stride):
    return reshape(x, size)


@lower("alias.default", "detach.default", "prims.view_of.default", "lift_fresh.default",
       "alias_copy.default", "detach_copy.default")
def alias(x):
    return x


@lower("view.dtype")
def view_dtype(x, dtype):
    """The same bytes read as ``dtype`` (eager's checks ran on the meta layout first)."""
    return num.reinterpret(x, np_dtype(dtype))


@lower("view_as_real.default")
def view_as_real(x):
    return num.reinterpret(ops.reshape(x, new_sizes=x.shape + (1,)), D.real_dtype(x.dtype))


@lower("view_as_complex.default")
def view_as_complex(x):
    return ops.reshape(num.reinterpret(x, np.dtype(f"c{2 * x.dtype.itemsize}")),
                       new_sizes=x.shape[:-1])


def transpose(x, d0, d1):
    ndim = x.ndim
    d0, d1 = wrap_dim(d0, ndim), wrap_dim(d1, ndim)  # a 0-d tensor's dims wrap to 0
    if d0 == d1:
        return x
    perm = list(range(ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ops.transpose(x, permutation=tuple(perm))


@lower("t.default")
def t(x):
    ndim = x.ndim
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return ops.transpose(x, permutation=(1, 0)) if ndim == 2 else x


lower("transpose.int", "transpose_copy.int")(transpose)


@lower("permute.default", "permute_copy.default", "prims.transpose.default")
def permute(x, dims):
    if len(dims) != x.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {x.ndim} is not equal to len(dims) = {len(dims)}")
    perm = tuple(wrap_dim(d, x.ndim) for d in dims)
    if len(set(perm)) != len(perm):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return x if perm == tuple(range(x.ndim)) else ops.transpose(x, permutation=perm)


@lower("expand.default", "expand_copy.default")
def expand(x, size, *, implicit=False):
    size = list(size)
    if len(size) < x.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={size}): the "
                           "number of sizes provided ({len(size)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({x.ndim})")
    lead = len(size) - x.ndim
    for i, s in enumerate(size):
        if s == -1:
            if i < lead:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a "
                                   "leading, non-existing dimension 0")
            size[i] = x.shape[i - lead]
        elif i >= lead and x.shape[i - lead] not in (1, s):
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({x.shape[i - lead]}) at non-singleton dimension {i}.  "
                               f"Target sizes: {list(size)}.  Tensor sizes: {list(x.shape)}")
    return num.broadcast_to(x, tuple(size))


@lower("prims.broadcast_in_dim.default")
def broadcast_in_dim(x, shape, broadcast_dimensions):
    return ops.broadcast_in_dim(x, shape=tuple(shape),
                                broadcast_dimensions=tuple(broadcast_dimensions))


@lower("slice.Tensor", "slice_copy.Tensor")
def slice_(x, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else start
    end = size if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    starts = [0] * x.ndim
    limits = list(x.shape)
    strides = [1] * x.ndim
    starts[d], limits[d], strides[d] = start, end, step
    if start == 0 and end == size and step == 1:
        return x
    return ops.slice(x, start_indices=tuple(starts), limit_indices=tuple(limits),
                     strides=tuple(strides))


@lower("select.int", "select_copy.int")
def select(x, dim, index):
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {d}")
    index %= size
    return ops.reshape(slice_(x, d, index, index + 1), new_sizes=x.shape[:d] + x.shape[d + 1:])


@lower("select_backward.default")
def select_backward(grad, input_sizes, dim, index):
    """The gradient padded with zeros around ``index`` (one op; the decomposition's
    zeros + select_scatter cost ~2 ms of dispatch per call)."""
    sizes = tuple(input_sizes)
    d = wrap_dim(dim, len(sizes))
    if not -sizes[d] <= index < sizes[d]:  # eager's (the decomposition returned zeros)
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(sizes)} at dimension {d}")
    index %= sizes[d]
    config = [(0, 0, 0)] * len(sizes)
    config[d] = (index, sizes[d] - index - 1, 0)
    return ops.pad(ops.reshape(grad, new_sizes=sizes[:d] + (1,) + sizes[d + 1:]),
                   lc.scalar(0, grad.dtype), padding_config=tuple(config))


@lower("unsqueeze.default", "unsqueeze_copy.default")
def unsqueeze(x, dim):
    d = wrap_dim(dim, x.ndim + 1)
    return ops.reshape(x, new_sizes=x.shape[:d] + (1,) + x.shape[d:])


@lower("squeeze.default", "squeeze.dim", "squeeze.dims", "squeeze_copy.default",
       "squeeze_copy.dim", "squeeze_copy.dims", "prims.squeeze.default")
def squeeze(x, dim=None):
    dims = wrap_dims(dim, x.ndim) if dim is not None else tuple(range(x.ndim))
    if isinstance(dim, list | tuple) and len(dim) == 0:
        dims = ()
    shape = tuple(s for i, s in enumerate(x.shape) if not (i in dims and s == 1))
    return x if shape == x.shape else ops.reshape(x, new_sizes=shape)


@lower("split.Tensor", "split_copy.Tensor")
def split(x, split_size, dim=0):
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if split_size == 0 and size != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    n = max(1, -(-size // split_size)) if split_size else 1
    sizes = [min(split_size, size - i * split_size) for i in range(n)]
    return split_with_sizes(x, sizes, d)


@lower("split_with_sizes.default", "split_with_sizes_copy.default")
def split_with_sizes(x, split_sizes, dim=0):
    d = wrap_dim(dim, x.ndim)
    if sum(split_sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[d]} "
                           f"(input tensor's size at dimension {d}), but got split_sizes="
                           f"{list(split_sizes)}")
    out, start = [], 0
    for s in split_sizes:
        out.append(slice_(x, d, start, start + s) if x.shape[d] != s else x)
        start += s
    return out


@lower("unbind.int", "unbind_copy.int")
def unbind(x, dim=0):
    d = wrap_dim(dim, x.ndim)
    return [select(x, d, i) for i in range(x.shape[d])]


@lower("diagonal.default", "diagonal_copy.default")
def diagonal(x, offset=0, dim1=0, dim2=1):
    d1, d2 = wrap_dim(dim1, x.ndim), wrap_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return num.diagonal(x, offset, d1, d2)


# -- non-view shape ops ------------------------------------------------------------------

@lower("clone.default", "prims.clone.default", "lift_fresh_copy.default", "positive.default")
def clone(x, *, memory_format=None):
    return x


@lower("cat.default", "concat.default", "concatenate.default")
def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t_ in enumerate(tensors):
        if t_.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    # legacy: 1-D empty tensors are skipped
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    dtype = compute_dtype(tensors)
    if not kept:
        return num.cast(tensors[0], dtype)
    ref = next(t for t in kept)
    d = wrap_dim(dim, ref.ndim)
    for i, t_ in enumerate(kept):
        if t_.ndim != ref.ndim:
            raise RuntimeError("Tensors must have same number of dimensions: got "
                               f"{ref.ndim} and {t_.ndim}")
        for j in range(ref.ndim):
            if j != d and t_.shape[j] != ref.shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[j]} but got size {t_.shape[j]} "
                                   f"for tensor number {i} in the list.")
    return ops.concatenate(*[num.cast(t_, dtype) for t_ in kept], dimension=d)


@lower("prims.cat.default")
def prims_cat(tensors, dim):
    return ops.concatenate(*tensors, dimension=dim)


@lower("stack.default")
def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t_ in enumerate(tensors):
        if t_.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t_.shape)} at "
                               f"entry {i}")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(t_, d) for t_ in tensors], d)


@lower("flip.default", "prims.rev.default")
def flip(x, dims):
    dims = tuple(sorted({wrap_dim(d, x.ndim) for d in dims}))
    return x if not dims or x.ndim == 0 else ops.rev(x, dimensions=dims)


@lower("roll.default")
def roll(x, shifts, dims=()):
    if not dims:
        flat = ops.reshape(x, new_sizes=(x.size,))
        return ops.reshape(num.roll(flat, shifts[0], 0), new_sizes=x.shape)
    return num.roll(x, tuple(shifts), tuple(wrap_dim(d, x.ndim) for d in dims))


@lower("repeat.default")
def repeat(x, repeats):
    repeats = tuple(repeats)
    if len(repeats) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    lead = len(repeats) - x.ndim
    x = ops.reshape(x, new_sizes=(1,) * lead + x.shape)
    return num.tile(x, repeats)


@lower("constant_pad_nd.default")
def constant_pad_nd(x, pad, value=0):
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError("Length of pad must be even but instead it equals "
                           f"{len(pad)}" if len(pad) % 2 else "Length of pad should be no more "
                           "than twice the number of dimensions of the input.")
    config = [(0, 0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        config[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1], 0)
    return ops.pad(x, lc.scalar(value, x.dtype), padding_config=tuple(config))


def _tri(upper):
    def fn(x, diagonal=0):
        if x.ndim < 2:
            raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least "
                               "2 dimensions")
        return num.triangle(x, diagonal, upper)
    return fn


lower("tril.default", "tril_.default")(_tri(False))
lower("triu.default", "triu_.default")(_tri(True))


@lower("fill.Scalar", "fill_.Scalar", "fill.Tensor", "fill_.Tensor", "prims.fill.default")
def fill(x, value):
    if isinstance(value, lc.Tensor):
        if value.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return num.broadcast_to(num.cast(value, x.dtype), x.shape)
    return num.full(x.shape, value, x.dtype)


@lower("zero.default", "zero_.default")
def zero(x):
    return num.full(x.shape, 0, x.dtype)


@lower("masked_fill.Scalar", "masked_fill_.Scalar", "masked_fill.Tensor", "masked_fill_.Tensor")
def masked_fill(x, mask, value):
    if mask.dtype != D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype}")
    if isinstance(value, lc.Tensor) and value.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    shape = num.broadcast_shapes(x.shape, mask.shape)
    v = num.broadcast_to(num.cast(value, x.dtype), shape) if isinstance(value, lc.Tensor) \
        else num.full(shape, value, x.dtype)
    return ops.select(num.broadcast_to(mask, shape), v, num.broadcast_to(x, shape))


@lower("prims.iota.default")
def iota(length, *, start, step, dtype, device=None, requires_grad=False):
    from .common import to_np

    return num.arange(start, step=step, dtype=to_np(dtype), length=length)
