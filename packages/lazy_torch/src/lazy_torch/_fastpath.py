"""Python fast paths: ``x + y``, ``x * 0.5``, ``p.mul_(0.9)``, ... traced without the dispatcher.

A ``__torch_dispatch__`` subclass pays PyTorch's C++ dispatcher and a Python round
trip on every op (about 10 µs here), which dominates tracing of pointwise chains.
When no autograd, mode, autocast or forward-AD state can observe the call, the
operator goes straight to the same lowering the dispatcher would have chosen and
wraps the result, so values, dtypes and errors are the dispatcher's own. Anything
else -- and any error, so that it is raised exactly as eager raises it -- takes the
normal path (``torch.Tensor``'s operator).

The same holds for the methods an optimizer step is made of (``mul_``, ``lerp_``,
``addcdiv_``, ``sqrt``, ...): under ``no_grad`` autograd only bumps the version
counter of an in-place op's ``self``, which the fast path does too.
"""

from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

import lazycore as lc

from ._dispatch import store, wrap_out
from ._plans import OperatorPlans
from ._tensor import FULL, LazyTensor, build, hold_element, read, wrap
from .lowerings import LOWERINGS

_C = torch._C
_grad_enabled = torch.is_grad_enabled
_function_mode = _C._is_torch_function_mode_enabled
_dispatch_modes = _C._len_torch_dispatch_stack
_autocast = _C._is_any_autocast_enabled
_inference = torch.is_inference_mode_enabled
_bump_version = _C._increment_version
_SCALARS = frozenset({int, float, bool})
_INT64 = (-(2**63), 2**63)
aten = torch.ops.aten

# (dunder, ATen overload whose lowering computes it, core op, operands reflected): the
# reflected dunders of commutative ops compute ``self <op> other`` as eager's do;
# ``other / self`` is eager's ``reciprocal(self) * other`` (other roundings), not planned.
_OPERATORS = (
    ("__add__", aten.add.Tensor, "add", False), ("__radd__", aten.add.Tensor, "add", False),
    ("__sub__", aten.sub.Tensor, "sub", False), ("__rsub__", aten.sub.Tensor, "sub", True),
    ("__mul__", aten.mul.Tensor, "mul", False), ("__rmul__", aten.mul.Tensor, "mul", False),
    ("__truediv__", aten.div.Tensor, "div", False),
)


def _quiet() -> bool:
    """True when nothing but the lowering could observe the op."""
    return not (_function_mode() or _dispatch_modes() or _autocast()
                or _forward_ad._current_level >= 0)


def _autocast_kernel(overload) -> bool:
    """Whether autocast can change ``overload`` on the lazy device: it has an autocast
    kernel there, or on CPU (whose policy ``_autocast.py`` applies to the lazy device)."""
    return any(_C._dispatch_has_kernel_for_dispatch_key(overload.name(), key)
               for key in ("AutocastCPU", "AutocastPrivateUse1"))


def _operator(plans: OperatorPlans, slow, reflected: bool, autocast: bool):
    """``self <op> other`` from the plan of the operands' signatures (``lazycore.plans``);
    a signature's first call learns it from the lowering. Autograd (a tensor requiring
    grad while grad mode is on), a mode, forward AD, autocast (where ``autocast``: the
    op has an autocast kernel), another operand type or any error takes ``slow``
    (``torch.Tensor``'s operator: the dispatcher, eager's errors)."""
    def operator(self, other):  # the per-op cost of every traced operator: kept flat
        kind = other.__class__
        if self.__class__ is not LazyTensor or _function_mode() or _dispatch_modes() \
                or _forward_ad._current_level >= 0 or (autocast and _autocast()):
            return slow(self, other)
        grad = _grad_enabled()
        if grad and self.requires_grad:
            return slow(self, other)
        mine = self._lc if self._kind == FULL and self._cell.writes is None else read(self)
        if kind is LazyTensor:
            if grad and other.requires_grad:
                return slow(self, other)
            value = (other._lc if other._kind == FULL and other._cell.writes is None
                     else read(other))
            so = value.node.aval
        elif kind in _SCALARS:
            value, so = other, kind
        else:
            return slow(self, other)
        a, b = (so, mine.node.aval) if reflected else (mine.node.aval, so)
        last = plans.last  # a chain of ops sees the same aval objects: no hashing
        known = last[2] if a is last[0] and b is last[1] else plans.find((a, b))
        try:
            if known:
                run, size, dtype = known
                return build(run(value, mine) if reflected else run(mine, value), size, dtype)
            out = plans.general((a, b), value, mine) if reflected \
                else plans.general((a, b), mine, value)
            return wrap(out, fresh=out is not mine and out is not value)
        except Exception:  # noqa: BLE001 - the slow path raises eager's error
            return slow(self, other)
    operator.__name__ = slow.__name__
    operator.__doc__ = slow.__doc__
    return operator


# (method, ATen overload the dispatcher would receive, positional argument kinds, keywords):
# "t" a lazy tensor, "s" a Python scalar, "x" either. Any other call takes the slow path.
_METHODS = (
    ("mul_", aten.mul_.Tensor, "x", ()),
    ("div_", aten.div_.Tensor, "x", ()),
    ("add_", aten.add_.Tensor, "x", ("alpha",)),
    ("sub_", aten.sub_.Tensor, "x", ("alpha",)),
    ("lerp_", aten.lerp_.Scalar, "ts", ()),
    ("addcmul_", aten.addcmul_.default, "tt", ("value",)),
    ("addcdiv_", aten.addcdiv_.default, "tt", ("value",)),
    ("sqrt", aten.sqrt.default, "", ()),
)


def _scalar(v) -> bool:
    kind = type(v)
    return kind in _SCALARS and (kind is not int or _INT64[0] <= v < _INT64[1])


def _values(args, pattern: str, grad: bool):
    """Core values of a method's positional arguments, or None for the slow path."""
    if len(args) != len(pattern):
        return None
    out = []
    for a, kind in zip(args, pattern, strict=True):
        if type(a) is LazyTensor and kind != "s":
            if grad and a.requires_grad:
                return None
            out.append(read(a))
        elif kind != "t" and _scalar(a):
            out.append(a)
        else:
            return None
    return out


def _make_method(func, lowering, pattern: str, keywords, slow):
    inplace = func._schema.name.endswith("_")

    def method(self, *args, **kwargs):
        grad = _grad_enabled()
        if (type(self) is LazyTensor and not (grad and self.requires_grad) and _quiet()
                and not _inference() and not self.is_inference()
                and (not kwargs or all(k in keywords and _scalar(v) for k, v in kwargs.items()))):
            values = _values(args, pattern, grad)
            if values is not None:
                try:
                    out = lowering(read(self), *values, **kwargs)
                    if out is not NotImplemented:
                        if not inplace:
                            return wrap_out(out)
                        store(self, out, func)  # checks before it writes
                        _bump_version((self,))
                        return self
                except Exception:  # noqa: BLE001 - the slow path raises eager's error
                    pass
        return slow(self, *args, **kwargs)
    method.__name__ = slow.__name__
    method.__doc__ = slow.__doc__
    return method


def _setitem(slow):
    """``t[i, j] = 3.0``: held in the storage (``_tensor.hold_element``), no graph node,
    where nothing but the storage could observe it (no autograd: ``t`` does not require
    grad in grad mode; no mode; not inference); eager's version bump. Anything else:
    ``slow`` (``torch.Tensor.__setitem__``)."""
    def __setitem__(self, key, value):
        if (type(self) is LazyTensor and (type(value) is complex or _scalar(value))
                and not (self.requires_grad and _grad_enabled()) and _quiet()
                and not _inference() and not self.is_inference() and not self.is_conj()
                and not self.is_neg() and hold_element(self, key, value)):
            _bump_version((self,))
            return
        slow(self, key, value)
    __setitem__.__doc__ = slow.__doc__
    return __setitem__


def _foreach_by_default() -> None:
    """Optimizers (``torch.optim``) and ``clip_grad_norm_`` choose their multi-tensor
    (foreach) path by default only for ``type(p) in [Tensor, Parameter]``; a lazy
    parameter got the single-tensor loop, one Python call chain per parameter and op.
    Listing ``LazyTensor`` in both type lists (as ``torch.distributed`` does for
    ``DTensor``) makes the default foreach on the lazy device (which PyTorch already
    counts as foreach-capable: it is the PrivateUse1 backend). ``foreach=False`` still
    selects the loop. The foreach ops themselves are lowered in ``lowerings/foreach.py``."""
    import torch.optim.optimizer as optimizer
    import torch.utils._foreach_utils as foreach_utils

    for supported in (optimizer._foreach_supported_types,
                      foreach_utils._foreach_supported_types):
        if LazyTensor not in supported:
            supported.append(LazyTensor)


def install() -> None:
    _foreach_by_default()
    LazyTensor.__setitem__ = _setitem(torch.Tensor.__setitem__)
    for name, overload, kernel, reflected in _OPERATORS:
        plans = OperatorPlans(LOWERINGS[overload], lc.ops.get(kernel))
        setattr(LazyTensor, name, _operator(plans, getattr(torch.Tensor, name), reflected,
                                            _autocast_kernel(overload)))
    for name, func, pattern, keywords in _METHODS:
        lowering = LOWERINGS.get(func)
        if lowering is not None:
            setattr(LazyTensor, name, _make_method(func, lowering, pattern, keywords,
                                                   getattr(torch.Tensor, name)))
