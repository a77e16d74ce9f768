"""Python operators on lazy tensors (``x * y``, ``x + 0.5``, ``2.0 - x``) past the
general call path.

An operator's general path (``_operators``) goes through the table entry, the
dispatcher's ``call`` (refusal -> TF as the error oracle), the kernel's plan
(``_plans``) and ``wrap``. When the entry's kernel already has a plan for the
operands' signatures, the operator runs that plan directly and wraps
the result: the same nodes, a fraction of the Python. While a tape records, operands
and result go through ``to_core``/``wrap`` as on the general path. Anything else -- a
missing plan (the general path learns it), other operand types, subclasses, an error
in the plan -- takes the general path, which raises what TensorFlow raises.
"""

from __future__ import annotations

from ._convert import to_core
from ._dispatch import wrap
from ._graph import building
from ._plans import LAZY, SCALARS, STOPPED, TAPES, cache_for
from ._table import API
from ._tensor import build, handle


def operator(general, entry, reflected: bool = False):
    """``general`` (an operator method of ``_operators``) with the plan shortcut.
    ``entry`` names the table entry the general path calls, or is ``f(self) -> name``
    where that depends on ``self``'s dtype (which the plan key holds)."""
    fixed = cache_for(API[entry].kernel) if isinstance(entry, str) else None

    def taped(self, other):
        """While a tape records: the operands read and the result wrapped as the general
        path does (``to_core``/``wrap`` do the tape's bookkeeping)."""
        ho = other if other.__class__ in SCALARS else to_core(other)
        hs = to_core(self)
        so = other.__class__ if ho is other else ho.node.aval
        plans = fixed if fixed is not None else cache_for(API[entry(self)].kernel)
        known = plans.get((so, hs.node.aval) if reflected else (hs.node.aval, so))
        if not known:
            return general(self, other)
        try:
            out = known[0](ho, hs) if reflected else known[0](hs, ho)
        except Exception:  # noqa: BLE001 - the general path raises TF's error
            return general(self, other)
        return wrap(out)

    def method(self, other):  # the per-op cost of every traced operator: kept flat
        kind = other.__class__
        if self.__class__ not in LAZY or (kind not in SCALARS and kind not in LAZY) \
                or building():  # a tf.function trace: the general path runs TF's op
            return general(self, other)
        if TAPES or STOPPED[0]:
            return taped(self, other)
        hs = self.__dict__.get("_h") or handle(self)
        if kind in SCALARS:
            ho, so = other, kind
        else:
            ho = other.__dict__.get("_h") or handle(other)
            so = ho.node.aval
        a, b = (so, hs.node.aval) if reflected else (hs.node.aval, so)
        plans = fixed if fixed is not None else cache_for(API[entry(self)].kernel)
        memo = plans.last  # a chain of ops sees the same aval objects: no hashing
        known = memo[2] if a is memo[0] and b is memo[1] else plans.find((a, b))
        if not known:
            return general(self, other)
        run, shape, dtype = known
        try:
            out = run(ho, hs) if reflected else run(hs, ho)
        except Exception:  # noqa: BLE001 - the general path raises TF's error
            return general(self, other)
        return build(out, shape, dtype)
    method.__name__ = general.__name__
    method.__doc__ = general.__doc__
    return method
