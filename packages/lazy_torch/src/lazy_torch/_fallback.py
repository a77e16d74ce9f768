"""Eager's side of the boundary: run an overload on CPU copies (the counted fallback), and
write a lazy result into a tensor with eager's checks (``store``; the fallback's written
arguments, the in-place and ``out=`` paths, the fused optimizer steps).

Below the dispatcher (``_dispatch``) and the lowerings, which both use it.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

import lazycore as lc

from ._convert import cpu_to_numpy, np_dtype, numpy_to_cpu, sparse_error, torch_dtype
from ._tensor import LazyTensor, read, to_cpu, wrap, write


def store(dst, value: lc.Tensor, func=None) -> None:
    """Write ``value`` into ``dst`` with eager's checks (shape, castability)."""
    dtype = dst.dtype
    vd = torch_dtype(value.dtype)
    if vd != dtype:
        if not torch.can_cast(vd, dtype):
            raise RuntimeError(f"result type {_pretty(vd)} can't be cast to the desired output "
                               f"type {_pretty(dtype)}")
        value = lc.numeric.cast(value, np_dtype(dtype))
    shape = tuple(dst.shape)
    if value.shape != shape:
        try:
            if lc.numeric.broadcast_shapes(value.shape, shape) != shape:
                raise lc.ShapeError("")
            value = lc.numeric.broadcast_to(value, shape)
        except lc.ShapeError:
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                               f"shape {list(value.shape)}") from None
    write(dst, value)


def _pretty(dtype) -> str:
    return {torch.float32: "Float", torch.float64: "Double", torch.int64: "Long",
            torch.int32: "Int", torch.bool: "Bool", torch.float16: "Half",
            torch.bfloat16: "BFloat16", torch.int16: "Short", torch.int8: "Char",
            torch.uint8: "Byte", torch.complex64: "ComplexFloat",
            torch.complex128: "ComplexDouble"}.get(dtype, str(dtype))


def fallback(func, args, kwargs):
    """Run ``func`` eagerly on CPU copies (counted as ``fallback::aten::<op>``)."""
    flat, spec = tree_flatten((args, kwargs))
    if kwargs.get("device") is not None and torch.device(kwargs["device"]).type != "lazy":
        # a factory for another device (``zeros_like(x, device="cpu")``): eager's tensor there
        cpu_args, cpu_kwargs = tree_unflatten([to_cpu(v) if isinstance(v, LazyTensor) else v
                                               for v in flat], spec)
        return func(*cpu_args, **cpu_kwargs)
    if kwargs.get("layout", torch.strided) != torch.strided:  # a sparse tensor on the device
        raise sparse_error(f"aten::{func.__name__}")
    lazy_pos = [i for i, v in enumerate(flat) if isinstance(v, LazyTensor)]
    schema_args = func._schema.arguments
    written = [i for i, a in enumerate(schema_args) if a.alias_info is not None
               and a.alias_info.is_write]

    def argument(i, args, kwargs):  # the i-th schema argument, positional or keyword
        return args[i] if i < len(args) else kwargs.get(schema_args[i].name)

    def run(*hosts):
        cpu_flat = list(flat)
        for i, h in zip(lazy_pos, hosts, strict=True):
            cpu_flat[i] = numpy_to_cpu(h)
        cpu_args, cpu_kwargs = tree_unflatten(cpu_flat, spec)
        out = func(*cpu_args, **cpu_kwargs)
        return _host(out), [_host(argument(i, cpu_args, cpu_kwargs)) for i in written]

    out, mutated = lc.fallback(f"aten::{func.__name__}", run,
                               [read(flat[i]) for i in lazy_pos])
    for i, m in zip(written, mutated, strict=True):
        writeback(argument(i, args, kwargs), m)
    if func._schema.returns and func._schema.returns[0].alias_info is not None and written:
        return argument(written[0], args, kwargs)
    return _from_host(out)


def _host(v):
    if isinstance(v, torch.Tensor) and v.is_nested:
        return v  # nn.TransformerEncoder's eval fast path: stays an eager CPU nested tensor
    if isinstance(v, torch.Tensor):
        if v.layout != torch.strided:  # to_sparse()
            raise sparse_error(f"a {v.layout} result")
        return cpu_to_numpy(v)
    if isinstance(v, list | tuple):
        return type(v)(_host(x) for x in v)
    return v


def writeback(target, value):
    if isinstance(target, LazyTensor):
        store(target, value if isinstance(value, lc.Tensor) else lc.asarray(value))
    elif isinstance(target, list | tuple):
        for t, v in zip(target, value, strict=True):
            writeback(t, v)


def _from_host(v):
    if isinstance(v, lc.Tensor):
        return wrap(v)
    if isinstance(v, list | tuple):
        return type(v)(_from_host(x) for x in v)
    return v
