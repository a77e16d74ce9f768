"""Python-operator fast path: ``x + y``, ``x * 0.5``, ... traced without the dispatcher.

A ``__torch_dispatch__`` subclass pays PyTorch's C++ dispatcher and a Python round
trip on every op (about 10 µs here), which dominates tracing of pointwise chains.
When no autograd, mode, autocast or forward-AD state can observe the call, the
operator goes straight to the same lowering the dispatcher would have chosen and
wraps the result, so values, dtypes and errors are the dispatcher's own. Anything
else -- and any error, so that it is raised exactly as eager raises it -- takes the
normal path (``torch.Tensor``'s operator).
"""

from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

import lazycore as lc

from ._tensor import LazyTensor, read, wrap
from .lowerings import LOWERINGS

_C = torch._C
_grad_enabled = torch.is_grad_enabled
_function_mode = _C._is_torch_function_mode_enabled
_dispatch_modes = _C._len_torch_dispatch_stack
_autocast = _C._is_any_autocast_enabled
_SCALARS = frozenset({int, float, bool})

# (dunder, reflected dunder or None, ATen overload whose lowering computes it)
_OPERATORS = (
    ("__add__", "__radd__", torch.ops.aten.add.Tensor),
    ("__sub__", None, torch.ops.aten.sub.Tensor),
    ("__mul__", "__rmul__", torch.ops.aten.mul.Tensor),
    ("__truediv__", None, torch.ops.aten.div.Tensor),
)


def _operand(other, grad: bool):
    """The core value (or Python scalar) of ``other``; None when it needs the slow path."""
    kind = type(other)
    if kind is LazyTensor:
        if grad and other.requires_grad:
            return None
        return read(other)
    if kind in _SCALARS:
        return other
    return None


def _quiet() -> bool:
    """True when nothing but the lowering could observe the op."""
    return not (_function_mode() or _dispatch_modes() or _autocast()
                or _forward_ad._current_level >= 0)


def _make(lowering, slow):
    def operator(self, other):
        grad = _grad_enabled()
        if type(self) is LazyTensor and not (grad and self.requires_grad) and _quiet():
            value = _operand(other, grad)
            if value is not None:
                mine = read(self)
                try:
                    out = lowering(mine, value)
                except Exception:  # noqa: BLE001 - the slow path raises eager's error
                    out = None
                if type(out) is lc.Tensor:
                    return wrap(out, fresh=out is not mine and out is not value)
        return slow(self, other)
    operator.__name__ = slow.__name__
    operator.__doc__ = slow.__doc__
    return operator


def install() -> None:
    for name, reflected, overload in _OPERATORS:
        lowering = LOWERINGS[overload]
        setattr(LazyTensor, name, _make(lowering, getattr(torch.Tensor, name)))
        if reflected is not None:  # commutative: other + self == self + other
            setattr(LazyTensor, reflected, _make(lowering, getattr(torch.Tensor, reflected)))
