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

from operator import attrgetter

import numpy as np

import lazycore as lc

from . import _ufuncs
from ._array import LazyArray

_Mixin = np.lib.mixins.NDArrayOperatorsMixin
_SCALARS = frozenset({bool, int, float, complex})
_BOOL = np.dtype(np.bool_)
_MAX_PLANS = 1024  # per operator; a program with ever new shapes must not grow it forever
_filled = lc.trace.filled
_cast = lc.numeric.cast
_broadcast_to = lc.numeric.broadcast_to
_tensor = attrgetter("_t")  # an operand that needs no step
_filler = object()  # a scalar that needs only ``_filled``

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
    """(operands...) -> result Tensor for operands of these signatures, or None where
    the general path must run (no plan, or an in-place result that is not ``self``'s
    dtype and shape)."""
    shapes = tuple(None if isinstance(s, type) else s.shape for s in sigs)
    plan = _ufuncs.plan(ufunc, tuple(_promotion_key(s) for s in sigs), shapes)
    if plan is None:
        return None
    if inplace and (plan.out != sigs[0].dtype or plan.shape != sigs[0].shape):
        return None  # the general path casts into ``out`` (or raises)
    preps = [_operand(s, d, k, plan.shape)
             for s, d, k in zip(sigs, plan.loop, plan.kernel_in, strict=True)]
    if len(preps) == 1:
        return _bind_unary(_kernel(plan), preps[0])
    return _bind_binary(_kernel(plan), plan, preps)


def _kernel(plan):
    """The plan's kernel and output cast as one callable: a bare core op where its
    shape rule already gives the output dtype (most arithmetic), saving two calls."""
    op = getattr(plan.kernel, "core_op", None)
    if op is not None:
        dtypes = [k or d for k, d in zip(plan.kernel_in, plan.loop, strict=True)]
        try:
            if op.rule(*[lc.Aval(plan.shape, d) for d in dtypes]).dtype == plan.out:
                return op
        except (TypeError, ValueError, lc.LazyError):
            pass
    kernel, out = plan.kernel, plan.out
    return lambda *ts: _cast(kernel(*ts), out)


def _bind_unary(kernel, prep):
    """x -> result, with no step call for a plain LazyArray."""
    if prep is _tensor:
        return lambda x: kernel(x._t)
    return lambda x: kernel(prep(x))


def _bind_binary(kernel, plan, preps):
    """(a, b) -> result; the common pairings spelled out, a call less per operand."""
    prep_a, prep_b = preps
    dtype_a, dtype_b = plan.loop
    shape = plan.shape
    if prep_a is _tensor and prep_b is _tensor:
        return lambda a, b: kernel(a._t, b._t)
    if prep_a is _tensor and prep_b is _filler:
        return lambda a, b: kernel(a._t, _filled(b, dtype_b, shape))
    if prep_a is _filler and prep_b is _tensor:
        return lambda a, b: kernel(_filled(a, dtype_a, shape), b._t)
    prep_a, prep_b = (_fill(dtype_a, shape) if prep_a is _filler else prep_a,
                      _fill(dtype_b, shape) if prep_b is _filler else prep_b)
    return lambda a, b: kernel(prep_a(a), prep_b(b))


def _fill(dtype, shape):
    """A scalar operand that needs only ``_filled``, outside the spelled-out pairings."""
    return lambda v: _filled(v, dtype, shape)


def _operand(sig, dtype, kernel_dtype, shape):
    """x -> its kernel input, with only the steps ``call`` takes for this signature."""
    if isinstance(sig, type):  # a Python scalar: ``tensor`` + broadcast, in one go
        if kernel_dtype is None:
            return _filler  # ``_filled`` in the loop dtype, bound by ``_bind_binary``
        return lambda v: _cast(_filled(v, dtype, shape), kernel_dtype)
    steps = []
    if sig.dtype != dtype:
        steps.append(lambda t: _cast(t, dtype))
    if sig.shape != shape:
        steps.append(lambda t: _broadcast_to(t, shape))
    if kernel_dtype is not None:
        steps.append(lambda t: _cast(t, kernel_dtype))
    if not steps:
        return _tensor

    def prepare(x):
        t = x._t
        for step in steps:
            t = step(t)
        return t
    return prepare


class _Plans(dict):
    """One operator's runners by operand signatures (False: none, take the general
    path). ``last`` repeats the latest hit: a loop keeps one signature, and comparing
    its avals by identity skips hashing them."""

    __slots__ = ("ufunc", "inplace", "last")

    def __init__(self, ufunc, inplace: bool = False):
        super().__init__()
        self.ufunc, self.inplace, self.last = ufunc, inplace, (None, None, None)

    def find(self, key):
        run = self.get(key)
        if run:
            self.last = (*key, run)
        return run

    def learn(self, key, general, *args):
        """A signature's first call: the general path answers (and raises what NumPy
        raises); only once it succeeded is the plan kept."""
        result = general(*args)
        if len(self) >= _MAX_PLANS:
            self.clear()
        self[key] = _runner(self.ufunc, key, self.inplace) or False
        return result


# -- the operators ---------------------------------------------------------------------------

def _forward(ufunc, general):
    plans = _Plans(ufunc)

    def method(self, other):
        kind = type(other)
        sig = other._t.node.aval if kind is LazyArray else kind if kind in _SCALARS else None
        if sig is None or type(self) is not LazyArray:
            return general(self, other)
        aval, last = self._t.node.aval, plans.last
        run = last[-1] if aval is last[0] and sig is last[1] else plans.find((aval, sig))
        if run:
            try:
                return LazyArray(run(self, other))
            except OverflowError:  # a Python int out of the loop dtype's range
                pass
        elif run is None:
            return plans.learn((aval, sig), general, self, other)
        return general(self, other)
    return method


def _reflected(ufunc, general):
    plans = _Plans(ufunc)

    def method(self, other):
        kind = type(other)
        sig = other._t.node.aval if kind is LazyArray else kind if kind in _SCALARS else None
        if sig is None or type(self) is not LazyArray:
            return general(self, other)
        aval, last = self._t.node.aval, plans.last
        run = last[-1] if sig is last[0] and aval is last[1] else plans.find((sig, aval))
        if run:
            try:
                return LazyArray(run(other, self))
            except OverflowError:
                pass
        elif run is None:
            return plans.learn((sig, aval), general, self, other)
        return general(self, other)
    return method


def _inplace(ufunc, general):
    plans = _Plans(ufunc, inplace=True)

    def method(self, other):
        kind = type(other)
        sig = other._t.node.aval if kind is LazyArray else kind if kind in _SCALARS else None
        if sig is None or type(self) is not LazyArray:
            return general(self, other)
        aval, last = self._t.node.aval, plans.last
        run = last[-1] if aval is last[0] and sig is last[1] else plans.find((aval, sig))
        if run:
            try:
                self._t = run(self, other)
                return self
            except OverflowError:
                pass
        elif run is None:
            return plans.learn((aval, sig), general, self, other)
        return general(self, other)
    return method


def _unary(ufunc, general):
    plans = _Plans(ufunc)

    def method(self):
        if type(self) is not LazyArray:
            return general(self)
        aval, last = self._t.node.aval, plans.last
        run = last[-1] if aval is last[0] else plans.find((aval,))
        if run:
            return LazyArray(run(self))
        if run is None:
            return plans.learn((aval,), general, self)
        return general(self)
    return method


def install(cls=LazyArray) -> None:
    """Put the planned operators on ``cls``, each over the mixin's method of its name."""
    def put(name, factory, ufunc):
        setattr(cls, name, factory(ufunc, getattr(_Mixin, name)))

    for stem, ufunc in BINARY.items():
        put(f"__{stem}__", _forward, ufunc)
        put(f"__r{stem}__", _reflected, ufunc)
        put(f"__i{stem}__", _inplace, ufunc)
    for stem, ufunc in COMPARISONS.items():
        put(f"__{stem}__", _forward, ufunc)
    for stem, ufunc in UNARY.items():
        put(f"__{stem}__", _unary, ufunc)
