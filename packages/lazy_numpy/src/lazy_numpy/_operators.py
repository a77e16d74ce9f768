"""Python operators of ``LazyArray`` (``x * y``, ``0.5 + x``, ``x -= 1``, ``-x``) that
record their core nodes directly.

Through ``NDArrayOperatorsMixin`` every operator is a ufunc call: NumPy's override
dispatch, kwargs parsing, dtype resolution and conversions cost several times the
core op itself. Each operator here keeps a plan per operand signature (a LazyArray's
aval; a Python scalar's type, weak under NEP 50) that ``_ufuncs.plan`` derives once
from the general path's own rules (NumPy's ``resolve_dtypes``); a call then records
exactly the nodes ``_ufuncs.call`` would. The first call of a signature, other operand
types (ndarrays, NumPy scalars, lists, other frameworks), subclasses, Python ints out
of the loop dtype's range and ufuncs without a plan take the mixin's method unchanged.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import lazycore as lc

from . import _ufuncs
from ._array import LazyArray

_Mixin = np.lib.mixins.NDArrayOperatorsMixin
_SCALARS = frozenset({bool, int, float, complex})
_BOOL, _INT8 = np.dtype(np.bool_), np.dtype(np.int8)
_plans = lc.plans
_filled = lc.trace.filled
_cast = lc.numeric.cast

# dunder stem -> ufunc; the mixin's methods (same names) stay the general path
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
          "floordiv": np.floor_divide, "mod": np.remainder, "lshift": np.left_shift,
          "rshift": np.right_shift, "and": np.bitwise_and, "xor": np.bitwise_xor,
          "or": np.bitwise_or}
COMPARISONS = {"lt": np.less, "le": np.less_equal, "eq": np.equal, "ne": np.not_equal,
               "gt": np.greater, "ge": np.greater_equal}
UNARY = {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}


# -- plans -> runners ----------------------------------------------------------------------

def _promotion_key(sig):
    """``_convert.promotion_key`` of a value with this signature."""
    if isinstance(sig, type):
        return _BOOL if sig is bool else sig
    return sig.dtype


def _runner(ufunc, sigs, inplace: bool):
    """(core operands...) -> result Tensor for operands of these signatures, or None
    where the general path must run (no plan, or an in-place result that is not
    ``self``'s dtype and shape)."""
    shapes = tuple(None if isinstance(s, type) else s.shape for s in sigs)
    plan = _ufuncs.plan(ufunc, tuple(_promotion_key(s) for s in sigs), shapes)
    if plan is None:
        return None
    if inplace and (plan.out != sigs[0].dtype or plan.shape != sigs[0].shape):
        return None  # the general path casts into ``out`` (or raises)
    steps = [_step(s, d, k, plan.shape)
             for s, d, k in zip(sigs, plan.loop, plan.kernel_in, strict=True)]
    if len(steps) == 1:
        return _plans.unary_runner(_kernel(plan), steps[0])
    return _plans.binary_runner(_kernel(plan), *steps)


def _kernel(plan):
    """The plan's kernel and output cast as one callable: a bare core op where its
    shape rule already gives the output dtype (most arithmetic), saving two calls."""
    op = getattr(plan.kernel, "core_op", None)
    if op is not None and plan.shape is not None:
        dtypes = [k or d for k, d in zip(plan.kernel_in, plan.loop, strict=True)]
        try:
            if op.rule(*[lc.Aval(plan.shape, d) for d in dtypes]).dtype == plan.out:
                return op
        except (TypeError, ValueError, lc.LazyError):
            pass
    kernel, out = plan.kernel, plan.out
    return lambda *ts: _cast(kernel(*ts), out)


def _step(sig, dtype, kernel_dtype, shape):
    """An operand's steps to its kernel input: those ``call`` takes for this signature."""
    if isinstance(sig, type):  # a Python scalar: ``tensor`` + broadcast, in one go
        if kernel_dtype is None:
            return _plans.Fill(dtype, shape)
        return lambda v: _cast(_filled(v, dtype, shape), kernel_dtype)
    return _plans.tensor_step(sig, dtype, shape, kernel_dtype)


class _Plans(_plans.PlanCache):
    """One operator's runners, learned from the general path."""

    __slots__ = ("ufunc", "inplace")

    def __init__(self, ufunc, inplace: bool = False):
        super().__init__()
        self.ufunc, self.inplace = ufunc, inplace

    def learn(self, key, general, *args):
        """A signature's first call: the general path answers (and raises what NumPy
        raises); only once it succeeded is the plan kept."""
        result = general(*args)
        self.keep(key, _runner(self.ufunc, key, self.inplace))
        return result


# -- the operators ---------------------------------------------------------------------------

def _binary(ufunc, general, reflected: bool = False, inplace: bool = False):
    """``self <op> other`` (``other <op> self`` when ``reflected``; stored into ``self``
    when ``inplace``) from the plan of the operands' signatures."""
    plans = _Plans(ufunc, inplace)

    def method(self, other):
        kind = type(other)
        if kind is LazyArray:
            core = other._v if other._s is None else other._t  # no view: skip the property
            sig = core.node.aval
        else:
            core, sig = other, kind if kind in _SCALARS else None
        if sig is None or type(self) is not LazyArray:
            return general(self, other)
        mine = self._v if self._s is None else self._t
        key = (sig, mine.node.aval) if reflected else (mine.node.aval, sig)
        last = plans.last
        run = last[-1] if key[0] is last[0] and key[1] is last[1] else plans.find(key)
        if run:
            try:
                out = run(core, mine) if reflected else run(mine, core)
            except OverflowError:  # a Python int out of the loop dtype's range
                return general(self, other)
            if inplace:
                if self._s is None:
                    self._v = out
                else:
                    self._t = out  # through the view's storage
                return self
            return LazyArray(out)
        if run is None:
            return plans.learn(key, general, self, other)
        return general(self, other)
    return method


def _unary(ufunc, general):
    plans = _Plans(ufunc)

    def method(self):
        if type(self) is not LazyArray:
            return general(self)
        mine = self._v if self._s is None else self._t
        aval, last = mine.node.aval, plans.last
        run = last[-1] if aval is last[0] else plans.find((aval,))
        if run:
            return LazyArray(run(mine))
        if run is None:
            return plans.learn((aval,), general, self)
        return general(self)
    return method


def _power(general):
    """``x ** n``: a Python int ``n`` (|n| <= 64) records ``integer_pow`` exactly as
    ``_ufuncs._static_power`` does, planned per (aval, n); other exponents replay
    ``np.power``'s plan like any binary operator."""
    planned, ints = _binary(np.power, general), _plans.PlanCache()

    def method(self, n):
        if type(n) is not int or type(self) is not LazyArray:
            return planned(self, n)
        mine = self._v if self._s is None else self._t
        key = (mine.node.aval, n)
        run = ints.get(key)
        if run is None:
            ints.keep(key, _int_power(key[0].dtype, n))
            run = ints[key]
        return LazyArray(run(mine)) if run else general(self, n)
    return method


def _int_power(dtype, n):
    """None-free runner of ``x ** n`` (False: the general path raises or computes it)."""
    if abs(n) > 64:
        return False
    loop = _ufuncs.resolve(np.power, (dtype, int))
    if dtype == _BOOL and n == 2:
        loop = (_INT8, _INT8, _INT8)  # ndarray's ``** 2`` is ``np.square``: int8
    elif loop[2].kind in "iu" and n < 0:
        return False  # NumPy raises
    return lambda t: _ufuncs.int_power(_cast(t, loop[0]), n, loop[2])


_calls: dict = {}  # ufunc -> its _Plans for ``ufunc(x)`` / ``ufunc(x, y)`` with no kwargs


def ufunc_call(ufunc, method, inputs, kwargs):
    """``__array_ufunc__``: ``np.sqrt(x)``, ``np.maximum(0, x)`` with LazyArray and
    Python scalar operands and no keywords replay a plan (as the operators do); all
    else, and a signature's first call, go to ``_ufuncs.array_ufunc``."""
    general = _ufuncs.array_ufunc
    if method != "__call__" or kwargs or not 0 < len(inputs) < 3:
        return general(ufunc, method, inputs, kwargs)
    sigs, cores = [], []
    for x in inputs:
        kind = type(x)
        if kind is LazyArray:
            core = x._v if x._s is None else x._t
            cores.append(core)
            sigs.append(core.node.aval)
        elif kind in _SCALARS:
            cores.append(x)
            sigs.append(kind)
        else:
            return general(ufunc, method, inputs, kwargs)
    key = tuple(sigs)
    plans = _calls.get(ufunc)
    if plans is None:
        plans = _calls.setdefault(ufunc, _Plans(ufunc))
    run = plans.find(key)
    if run:
        try:
            return LazyArray(run(*cores))
        except OverflowError:  # a Python int out of the loop dtype's range
            return general(ufunc, method, inputs, kwargs)
    if run is None:
        return plans.learn(key, lambda *a: general(ufunc, method, a, {}), *inputs)
    return general(ufunc, method, inputs, kwargs)


def install(cls=LazyArray) -> None:
    """Put the planned operators on ``cls``, each over the mixin's method of its name."""
    def put(name, factory, ufunc):
        setattr(cls, name, factory(ufunc, getattr(_Mixin, name)))

    for stem, ufunc in BINARY.items():
        put(f"__{stem}__", _binary, ufunc)
        put(f"__r{stem}__", partial(_binary, reflected=True), ufunc)
        put(f"__i{stem}__", partial(_binary, inplace=True), ufunc)
    for stem, ufunc in COMPARISONS.items():
        put(f"__{stem}__", _binary, ufunc)
    for stem, ufunc in UNARY.items():
        put(f"__{stem}__", _unary, ufunc)
    cls.__pow__ = _power(_Mixin.__pow__)
    put("__rpow__", partial(_binary, reflected=True), np.power)
    put("__ipow__", partial(_binary, inplace=True), np.power)
