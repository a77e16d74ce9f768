"""Ops that cross the host boundary or touch storage: copies, device moves, scalars.

These handlers receive the torch-level arguments (wrappers, CPU tensors) because
they decide what lives where.
"""

from __future__ import annotations

import torch

import lazycore as lc

from .._convert import cpu_to_core, np_dtype
from .._fallback import store
from .._tensor import LazyTensor, read, resize, to_cpu, wrap

aten = torch.ops.aten
SPECIAL: dict = {}


def special(*ops_):
    def register(fn):
        for op in ops_:
            SPECIAL[op] = fn
        return fn
    return register


def _core(v) -> lc.Tensor:
    return read(v) if isinstance(v, LazyTensor) else cpu_to_core(v)


@special(aten.copy_.default)
def copy_(func, args, kwargs):
    dst, src = args[0], args[1]
    if not isinstance(dst, LazyTensor):  # lazy -> host
        with torch._C._DisableTorchDispatch():
            dst.copy_(to_cpu(src) if isinstance(src, LazyTensor) else src)
        return dst
    value = lc.numeric.cast(_core(src), np_dtype(dst.dtype))
    shape = tuple(dst.shape)
    if value.shape != shape:
        try:
            value = lc.numeric.broadcast_to(value, shape)
        except lc.ShapeError:
            raise RuntimeError(f"The size of tensor a ({shape[-1] if shape else 1}) must match "
                               f"the size of tensor b ({value.shape[-1] if value.shape else 1}) "
                               f"at non-singleton dimension {len(shape) - 1}") from None
    store(dst, value)
    return dst


@special(aten.copy.default)
def copy(func, args, kwargs):
    dst, src = args[0], args[1]
    return wrap(lc.numeric.broadcast_to(lc.numeric.cast(_core(src), np_dtype(dst.dtype)),
                                        tuple(dst.shape)))


@special(aten._to_copy.default)
def to_copy(func, args, kwargs):
    x = args[0]
    dtype = kwargs.get("dtype") or x.dtype
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "lazy":
        out = to_cpu(x)
        return out.to(dtype=dtype, device=device) if isinstance(x, LazyTensor) else out
    return wrap(lc.numeric.cast(_core(x), np_dtype(dtype)))


@special(aten._local_scalar_dense.default)
def local_scalar_dense(func, args, kwargs):
    return to_cpu(args[0], cause="item").item()


@special(aten.equal.default)
def equal(func, args, kwargs):
    a, b = args
    return tuple(a.shape) == tuple(b.shape) and bool(
        torch.equal(to_cpu(a), to_cpu(b) if isinstance(b, LazyTensor) else b))


@special(aten._pack_padded_sequence.default)
def pack_padded_sequence(func, args, kwargs):
    """Eager's kernel packs the positions of the (T, B) grid (its checks, and ``batch_sizes``
    kept on the host as eager's); the packed data is those rows of the lazy input."""
    x, lengths, batch_first = args
    if isinstance(lengths, LazyTensor):  # eager's error (its kernel would dispatch here again)
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {lengths.device} {lengths.type()[11:-6]} tensor")
    rows, batch_sizes = func(torch.arange(x.shape[0] * x.shape[1]).view(x.shape[:2]), lengths,
                             batch_first)
    flat = lc.ops.reshape(_core(x), new_sizes=(x.shape[0] * x.shape[1], *x.shape[2:]))
    return wrap(lc.numeric.take(flat, cpu_to_core(rows), 0)), batch_sizes


@special(aten.is_same_size.default)
def is_same_size(func, args, kwargs):
    return tuple(args[0].shape) == tuple(args[1].shape)


@special(aten._has_compatible_shallow_copy_type.default)
def compatible(func, args, kwargs):
    return type(args[0]) is type(args[1])


@special(aten.empty_like.default, aten.new_empty.default, aten.new_empty_strided.default,
         aten.empty.memory_format, aten.empty_strided.default)
def empty_like(func, args, kwargs):
    if func is aten.empty_like.default:
        x, shape = args[0], tuple(args[0].shape)
    else:
        x, shape = args[0], tuple(args[1])
    dtype = kwargs.get("dtype") or (x.dtype if isinstance(x, torch.Tensor) else torch.float32)
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "lazy":
        return torch.empty(shape, dtype=dtype, device=device)
    return wrap(lc.numeric.zeros(shape, np_dtype(dtype)))


@special(aten.resize_.default, aten.resize_as_.default)
def resize_(func, args, kwargs):
    x, size = args[0], tuple(args[1].shape if func is aten.resize_as_.default else args[1])
    if tuple(x.shape) != size:
        resize(x, size)
    return x


@special(aten.set_.source_Tensor)
def set_(func, args, kwargs):
    dst, src = args
    if not isinstance(src, LazyTensor) or tuple(dst.shape) != tuple(src.shape) or \
            dst.dtype != src.dtype:
        raise NotImplementedError("lazy_torch: set_ is only supported between lazy tensors of "
                                  "the same shape and dtype")
    dst._cell, dst._lc, dst._kind, dst._ver = src._cell, src._lc, src._kind, src._ver
    dst._math = src._math
    return dst


# -- backward ops without a decomposition: the core's lazy VJP of the forward op ---------

def _vjp(forward, grad_output, input_):
    """d(forward(input) . grad_output)/d(input), differentiating the traced forward graph."""
    x = read(input_)
    with torch.no_grad():
        out = forward(input_)
    (gx,) = lc.grad([read(out)], [x], [read(grad_output)])
    return wrap(gx if gx is not None else lc.numeric.zeros(x.shape, x.dtype))


@special(aten._adaptive_avg_pool2d_backward.default)
def adaptive_avg_pool2d_backward(func, args, kwargs):
    grad, x = args
    return _vjp(lambda t: aten._adaptive_avg_pool2d.default(t, list(grad.shape[-2:])), grad, x)


_PADS = {getattr(aten, f"replication_pad{d}d_backward").default:
         getattr(aten, f"replication_pad{d}d").default for d in (1, 2, 3)}


@special(*_PADS)  # ReplicationPad layers (GAN and super-resolution generators)
def replication_pad_backward(func, args, kwargs):
    grad, x, padding = args
    return _vjp(lambda t: _PADS[func](t, padding), grad, x)


def _zeros_input(like, size):
    return wrap(lc.numeric.zeros(tuple(size), np_dtype(like.dtype)))


_INTERPOLATIONS = {aten.upsample_bilinear2d_backward.default: aten.upsample_bilinear2d.default,
                   aten.upsample_bicubic2d_backward.default: aten.upsample_bicubic2d.default}


@special(*_INTERPOLATIONS)  # DINOv2's bicubic resize of its position embeddings
def upsample_interpolation_backward(func, args, kwargs):
    grad, output_size, input_size, align_corners, *scales = list(args) + [
        kwargs.get("scales_h"), kwargs.get("scales_w")][len(args) - 4:]
    return _vjp(lambda t: _INTERPOLATIONS[func](t, output_size, align_corners, *scales),
                grad, _zeros_input(grad, input_size))  # linear in the input: any point will do


@special(aten.upsample_nearest2d_backward.default)
def upsample_nearest2d_backward(func, args, kwargs):
    grad, output_size, input_size, *scales = list(args) + [
        kwargs.get("scales_h"), kwargs.get("scales_w")][len(args) - 3:]
    return _vjp(lambda t: aten.upsample_nearest2d.default(t, output_size, *scales), grad,
                _zeros_input(grad, input_size))
