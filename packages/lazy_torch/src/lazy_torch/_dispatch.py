"""``__torch_dispatch__``: route each ATen overload to a handler, resolved once.

Order: special ops (copies, scalars), in-place view ops, view ops, a direct
lowering (``lowerings.LOWERINGS``), the functional counterpart of an in-place or
``out=`` overload, a ``torch._decomp`` decomposition, an implicit-autograd
decomposition, and finally the counted CPU fallback. Core errors become PyTorch's
own exception types here, at the call that made them.
"""

from __future__ import annotations

import warnings

import torch
from torch._decomp import decomposition_table

import lazycore as lc

from . import _tensor
from ._convert import cpu_to_core, np_dtype
from ._errors import translate
from ._fallback import fallback as _fallback
from ._fallback import store
from ._fallback import writeback as _writeback
from ._tensor import (
    FULL,
    RESHAPE,
    LazyTensor,
    alias,
    layout_kind,
    make_view,
    math_view,
    read,
    relayout,
    wrap,
)
from ._views import freeze, view_meta
from .lowerings import LOWERINGS
from .lowerings.foreach import foreach, is_foreach
from .lowerings.special import SPECIAL

aten = torch.ops.aten
_inference_enabled = torch.is_inference_mode_enabled
_HANDLERS: dict = {}
_INPLACE_TAG = torch.Tag.inplace
_INPLACE_VIEW_TAG = torch.Tag.inplace_view
_CIA = torch._C.DispatchKey.CompositeImplicitAutograd


_PENDING_CHECKS = lc.checks.PENDING  # the core's data checks waiting for the next sync


def dispatch(func, args, kwargs):
    handler = _HANDLERS.get(id(func))  # an OpOverload hashes in a Python frame
    if handler is None:  # keyed by the op too, which keeps its id its own
        handler = _HANDLERS[id(func)] = _HANDLERS[func] = resolve(func)
    pending = len(_PENDING_CHECKS)
    try:
        return handler(func, args, kwargs)
    except BaseException as e:
        del _PENDING_CHECKS[pending:]  # a call that raised leaves no data check behind
        if isinstance(e, lc.LazyError):
            raise translate(e, func) from None
        if not isinstance(e, OverflowError):
            raise
        # a Python scalar outside the dtype (fill, full, clamp)
        if any(type(a) is int and not -(1 << 63) <= a < (1 << 64)
               for a in (*args, *kwargs.values())):
            raise OverflowError("int too big to convert") from None  # eager's, at unpacking
        wrapped = _wrap_negative_unsigned(args, kwargs)
        if wrapped is not None:
            return dispatch(func, *wrapped)
        raise RuntimeError(f"value cannot be converted to the tensor's type without overflow"
                           f" ({e}) [{func.__name__}]") from None


_UNSIGNED = {torch.uint8: 8, torch.uint16: 16, torch.uint32: 32, torch.uint64: 64}


def _wrap_negative_unsigned(args, kwargs):
    """Eager converts a negative Python int ``v >= -max`` for an unsigned dtype by
    wrapping (c10's checked conversion: ``uint8.fill_(-1)`` is 255, ``clamp(-1, 1)``
    clamps to 255 then 1); the core raises OverflowError there. (args, kwargs) with those
    ints wrapped into the op's unsigned dtype, or None where nothing applies."""
    dtype = kwargs.get("dtype") or next((a.dtype for a in args if isinstance(a, torch.Tensor)),
                                        None)
    bits = _UNSIGNED.get(dtype)
    if bits is None:
        return None

    def fix(a):
        return a + (1 << bits) if type(a) is int and -((1 << bits) - 1) <= a < 0 else a
    new_args, new_kwargs = tuple(fix(a) for a in args), {k: fix(v) for k, v in kwargs.items()}
    if new_args == tuple(args) and new_kwargs == kwargs:
        return None
    return new_args, new_kwargs


_tensor._dispatch = dispatch


# -- argument conversion ----------------------------------------------------------------

def unwrap(a):
    if isinstance(a, LazyTensor):
        return read(a)
    if isinstance(a, torch.Tensor):
        return cpu_to_core(a)
    if isinstance(a, list | tuple) and a and any(isinstance(x, torch.Tensor) for x in a):
        return [unwrap(x) for x in a]
    return a


def wrap_out(r):
    if isinstance(r, lc.Tensor):
        return wrap(r)
    if isinstance(r, list | tuple):
        return type(r)(wrap_out(x) for x in r)
    return r


_UNWRAPPED = (torch.Tensor, list, tuple)  # what unwrap converts


def _call_lowering(low, args, kwargs):
    values = []
    for a in args:  # a base tensor's value: no frame (nor a comprehension's)
        values.append(a._lc if type(a) is LazyTensor and a._kind == FULL
                      and a._cell.writes is None
                      else unwrap(a) if isinstance(a, _UNWRAPPED) else a)
    if kwargs:
        return low(*values, **{k: unwrap(v) for k, v in kwargs.items()})
    return low(*values)


# -- resolution -----------------------------------------------------------------------------

def resolve(func):
    special = SPECIAL.get(func)
    if special is not None:
        return special
    if is_foreach(func):
        return foreach
    tags = func.tags
    if _INPLACE_VIEW_TAG in tags:
        return _inplace_view
    if func.is_view:
        if func.has_kernel_for_dispatch_key(_CIA) and func not in LOWERINGS:
            return lambda f, a, k: f.decompose(*a, **k)
        return _view_handler(func)
    low = LOWERINGS.get(func)
    if low is not None:
        if _is_inplace(func):
            return _make_inplace_lowered(low)
        return _make_lowered(low)
    if _is_inplace(func):
        functional = _functional_of(func)
        if functional is not None:
            return _make_inplace_functional(functional)
    if _out_args(func):
        packet = getattr(aten, func._schema.name.split("::")[1], None)
        if packet is not None:
            return _make_out(packet, _out_args(func))
    if func in decomposition_table or func.has_kernel_for_dispatch_key(_CIA):
        return _next_strategy
    return _fallback


def _is_inplace(func) -> bool:
    if _INPLACE_TAG in func.tags:
        return True
    schema = func._schema
    return (schema.name.endswith("_") and bool(schema.arguments)
            and schema.arguments[0].alias_info is not None
            and schema.arguments[0].alias_info.is_write and not _out_args(func))


def _out_args(func) -> list[str]:
    return [a.name for a in func._schema.arguments
            if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write]


def _functional_of(func):
    name = func._schema.name.split("::")[1]
    packet = getattr(aten, name[:-1] if name.endswith("_") else name, None)
    if packet is None:
        return None
    op = getattr(packet, func._overloadname, None)
    return op if op is not None else packet


# -- handlers ---------------------------------------------------------------------------------

def _make_lowered(low):
    def handler(func, args, kwargs):
        out = _call_lowering(low, args, kwargs)
        if type(out) is not lc.Tensor:
            return _next_strategy(func, args, kwargs) if out is NotImplemented else wrap_out(out)
        for a in (*args, *kwargs.values()):  # a lowering returns a new handle or an operand's
            if isinstance(a, LazyTensor) and a._lc is out or type(a) in (list, tuple):
                return wrap(out)
        return wrap(out, fresh=True)
    return handler


def _next_strategy(func, args, kwargs):
    """A ``torch._decomp`` decomposition (some decline inputs they do not cover), the
    implicit-autograd one, then the counted CPU fallback."""
    decomp = decomposition_table.get(func)
    if decomp is not None:
        out = decomp(*args, **kwargs)
        if out is not NotImplemented:
            return out
    if func.has_kernel_for_dispatch_key(_CIA):
        return func.decompose(*args, **kwargs)
    return _fallback(func, args, kwargs)


def _make_inplace_lowered(low):
    def handler(func, args, kwargs):
        out = _call_lowering(low, args, kwargs)
        if out is NotImplemented:
            return _next_strategy(func, args, kwargs)
        self = args[0]
        if isinstance(self, list | tuple):  # foreach in-place: one value per tensor
            for t, v in zip(self, out, strict=True):
                store(t, v, func)
            return None
        store(self, out, func)
        return self
    return handler


def _make_inplace_functional(functional):
    def handler(func, args, kwargs):
        result = functional(*args, **kwargs)
        written = [i for i, a in enumerate(func._schema.arguments)
                   if a.alias_info is not None and a.alias_info.is_write]
        if len(written) > 1:  # several mutated arguments (GradScaler's kernels): one result each
            for i, value in zip(written, result, strict=True):
                _writeback(args[i], _as_core(value) if isinstance(value, torch.Tensor)
                           else [_as_core(v) for v in value])
            return args[0] if func._schema.returns else None
        self = args[0]
        if isinstance(self, list | tuple):
            for t, v in zip(self, result, strict=True):
                store(t, _as_core(v), func)
            return None
        store(self, _as_core(result), func)
        return self
    return handler


def _as_core(v):
    return read(v) if isinstance(v, LazyTensor) else cpu_to_core(v)


def _resize_out(out, shape) -> None:
    """Eager resizes an ``out=`` tensor of another shape to the result's: silently when it
    is empty, with its deprecation warning when it holds elements."""
    if out.numel():
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                      "release outputs will not be resized unless they have zero elements. You "
                      "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                      "elements with t.resize_(0).", UserWarning, stacklevel=4)
    _tensor.resize(out, shape)


def _make_out(packet, out_names):
    def handler(func, args, kwargs):
        outs = [kwargs[n] for n in out_names]
        result = packet(*args, **{k: v for k, v in kwargs.items() if k not in out_names})
        for o, r in zip(outs, result if isinstance(result, tuple | list) else (result,),
                        strict=True):
            if isinstance(o, LazyTensor):
                if tuple(o.shape) != tuple(r.shape):
                    _resize_out(o, tuple(r.shape))
                store(o, _as_core(r), func)
            else:
                o.copy_(r.cpu() if isinstance(r, LazyTensor) else r)
        return outs[0] if len(outs) == 1 else tuple(outs)
    return handler


_SAME_LAYOUT = frozenset({aten.detach.default, aten.alias.default})
_MATH_VIEWS = {aten._conj.default: (True, False), aten._neg_view.default: (False, True)}


def _view_handler(func):
    """The handler of one view op, with its table lookups done once (a per-op cost)."""
    if func in _SAME_LAYOUT:
        return lambda f, args, kwargs: alias(args[0], f is aten.detach.default)
    math = _MATH_VIEWS.get(func)
    if math is not None:
        return lambda f, args, kwargs: math_view(args[0], *math)
    low = LOWERINGS.get(func)
    own_kind = func is aten.view.dtype  # eager's is the current mode's kind, not src's
    known: dict = {}  # a whole storage's aval and the arguments -> (metas, kind)

    def view(f, args, kwargs):
        src = args[0]
        inference = _inference_enabled() if own_kind else None
        try:  # a FULL tensor's layout is its aval's: no layout queries, one lookup
            key = (src._lc.node.aval, *map(freeze, args[1:])) \
                if src._kind == FULL and not kwargs else None
            hit = known.get(key)
        except TypeError:  # a tensor argument
            key = hit = None
        if hit is None:
            metas = view_meta(func, src, args[1:], kwargs)
            hit = metas, layout_kind(src._cell, *metas) \
                if type(metas) is tuple and src._math is None else None
            if key is not None and len(known) < 4096:
                known[key] = hit
        metas, kind = hit
        if kind == FULL or kind == RESHAPE and src._kind != RESHAPE:
            # the whole storage, or all of it reshaped (from a reshape: its lowering)
            value = lc.ops.reshape(src._cell.value, new_sizes=metas[0]) if kind else None
            return make_view(src, value, *metas, kind, inference)
        values = _call_lowering(low, args, kwargs) if low is not None else NotImplemented
        if isinstance(metas, list):
            if values is NotImplemented:
                values = [_gather_view(src, *m) for m in metas]
            return [_aliasing(src, v, m) for v, m in zip(values, metas, strict=True)]
        if values is NotImplemented:
            values = _gather_view(src, *metas)
        return _aliasing(src, values, metas, kind, inference)
    return view


def _aliasing(src, value, meta, kind=None, inference=None):
    # a conj/neg view in another dtype: resolved, as eager's must be
    return wrap(value) if meta is None or (src._math is not None and meta[3] != src.dtype) \
        else make_view(src, value, *meta, kind, inference)


def _gather_view(src, size, stride, offset, dtype):
    flat = _tensor.as_flat(src._cell.value, np_dtype(dtype))
    out = lc.numeric.take(flat, _tensor.positions(flat.size, tuple(size), tuple(stride), offset), 0)
    return out if src._math is None else _tensor.apply_math(out, src._math)


_INPLACE_VIEW_FUNCTIONAL = {aten.transpose_.default: aten.transpose.int,
                            aten.as_strided_.default: aten.as_strided.default}


def _inplace_view(func, args, kwargs):
    t = args[0]
    functional = _INPLACE_VIEW_FUNCTIONAL.get(func)
    if functional is None:
        functional = _INPLACE_VIEW_FUNCTIONAL[func] = _functional_of(func)
    if isinstance(functional, torch._ops.OpOverloadPacket):
        raise NotImplementedError(f"lazy_torch: in-place view op {func} is not supported")
    size, stride, offset, dtype = view_meta(functional, t, args[1:], kwargs)
    value = _call_lowering(LOWERINGS[functional], args, kwargs) if functional in LOWERINGS \
        else NotImplemented
    if value is NotImplemented:
        value = _gather_view(t, size, stride, offset, dtype)
    with torch._C._DisableTorchDispatch(), torch._C._AutoDispatchBelowAutograd():
        aten.as_strided_.default(t, size, stride, offset)
    relayout(t, value)
    return t
