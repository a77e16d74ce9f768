"""Python operators on lazy tensors (``x * y``, ``x + 0.5``, ``2.0 - x``) past the
general call path.

An operator's general path (``_operators``) goes through the table entry, the
dispatcher's ``call`` (refusal -> TF as the error oracle), the kernel's plan
(``_plans``) and ``wrap``. When no tape records, and the entry's kernel already has a
plan for the operands' signatures, the operator runs that plan directly and wraps
the result: the same nodes, a fraction of the Python. Anything else -- a missing
plan (the general path learns it), a tape, other operand types, subclasses, an error
in the plan -- takes the general path, which raises what TensorFlow raises.
"""

from __future__ import annotations

from ._plans import LAZY, SCALARS, cache_for, taping
from ._table import API
from ._tensor import handle, new


def operator(general, entry, reflected: bool = False):
    """``general`` (an operator method of ``_operators``) with the plan shortcut.
    ``entry`` names the table entry the general path calls, or is ``f(self) -> name``
    where that depends on ``self``'s dtype (which the plan key holds)."""
    fixed_plans = cache_for(API[entry].kernel) if isinstance(entry, str) else None

    def method(self, other):
        kind = other.__class__
        if self.__class__ not in LAZY or taping():
            return general(self, other)
        hs = self.__dict__.get("_h") or handle(self)
        if kind in SCALARS:
            ho, so = other, kind
        elif kind in LAZY:
            ho = other.__dict__.get("_h") or handle(other)
            so = ho.node.aval
        else:
            return general(self, other)
        plans = fixed_plans if fixed_plans is not None else \
            cache_for(API[entry(self)].kernel)
        if reflected:
            run = plans.get((so, hs.node.aval))
            if run:
                try:
                    return new(run(ho, hs))
                except Exception:  # noqa: BLE001 - the general path raises TF's error
                    pass
        else:
            run = plans.get((hs.node.aval, so))
            if run:
                try:
                    return new(run(hs, ho))
                except Exception:  # noqa: BLE001
                    pass
        return general(self, other)
    method.__name__ = general.__name__
    method.__doc__ = general.__doc__
    return method
