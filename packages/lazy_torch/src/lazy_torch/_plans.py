"""c10's operand conversion for the Python operators, decided once per operand signature.

``x + y``, ``x * 0.5``, ``2 - x``: the ATen lowering (``lowerings/pointwise.py``)
promotes by c10's rules (dim / zero-dim tensors, wrapped Python numbers), casts,
broadcasts and records one core op. All of that depends only on the operands'
*signatures* -- a lazy operand's core aval, a Python scalar's type -- so each operator
keeps a ``lazycore.plans`` plan per signature pair: the result's dtype and shape, each
operand's step to it (cast and broadcast of a tensor, a fill for a scalar, Python ints
wrapped into an integer dtype as eager does) and the core op.

A signature's first call runs the lowering itself (an error there sends the call to
the dispatcher, which raises eager's error); a plan is kept only if it reproduces that
call's result aval. A result whose dtype comes from ``torch.get_default_dtype()`` (no
floating tensor operand, a floating result: ``int_tensor * 0.5``, ``int / int``) gets
no plan, since the default can change between calls.
"""

from __future__ import annotations

import torch

import lazycore as lc

from ._convert import TO_TORCH
from .lowerings.common import wrap_int

_plans = lc.plans
_filled = lc.trace.filled
_inexact = lc.dtypes.is_inexact
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _scalar_step(kind: type, dtype, shape: tuple):
    """A Python scalar of type ``kind`` in a result of ``dtype``: its fill. An int
    outside int64 raises OverflowError (the dispatcher then raises eager's error: it
    refuses ints past int64 except, for some dtypes, up to 2**64); in an integer dtype
    it wraps around as eager's does (``int8 + 200 == int8 - 56``)."""
    if kind is not int:
        return _plans.Fill(dtype, shape)
    integer = dtype.kind in "iu"

    def checked(v):
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise OverflowError(f"{v} is outside int64")
        return _filled(wrap_int(v, dtype) if integer else v, dtype, shape)
    return checked


def derive(kernel, signatures, aval):
    """``run(a, b)`` recording ``kernel`` on operands of these signatures (a core aval,
    or a Python scalar type) converted to the result ``aval``; None where no plan
    applies."""
    tensors = [s for s in signatures if not isinstance(s, type)]
    if not any(_inexact(a.dtype) for a in tensors) and _inexact(aval.dtype):
        return None  # the default dtype decided it
    return _plans.binary_runner(kernel, *[
        _scalar_step(s, aval.dtype, aval.shape) if isinstance(s, type)
        else _plans.tensor_step(s, aval.dtype, aval.shape) for s in signatures])


class OperatorPlans(_plans.PlanCache):
    """One operator's plans: ``(run, torch size, torch dtype)`` by signature pair, in
    the kernel's argument order."""

    __slots__ = ("lowering", "kernel")

    def __init__(self, lowering, kernel):
        super().__init__()
        self.lowering, self.kernel = lowering, kernel

    def general(self, key, a, b) -> lc.Tensor:
        """The lowering's result on core operands ``a``, ``b`` (it raises where the
        lowering does). A signature's first call derives its plan, kept when it
        reproduces this result."""
        for v in (a, b):
            if type(v) is int and not _INT64_MIN <= v <= _INT64_MAX:
                raise OverflowError(f"{v} is outside int64")  # see _scalar_step
        out = self.lowering(a, b)
        if key in self:
            return out
        aval = out.node.aval
        run = derive(self.kernel, key, aval)
        if run is not None:
            try:
                if run(a, b).node.aval != aval:
                    run = None
            except Exception:  # noqa: BLE001 - a plan that fails is no plan
                run = None
        self.keep(key, None if run is None
                  else (run, torch.Size(aval.shape), TO_TORCH[aval.dtype]))
        return out
