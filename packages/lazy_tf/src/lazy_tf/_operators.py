"""Python operators on LazyTensor, mapped the way ``tf.Tensor``'s operators are.

Each binary operator here is the general path; ``_fastpath`` puts a plan cache in
front of the ones whose table entry has a kernel.
"""

from __future__ import annotations

import tensorflow as tf

from ._dispatch import call, call_by_name
from ._fastpath import operator
from ._table import API
from ._tensor import LazyTensor

# dunder -> TF API behind tf.Tensor's operator (TF's tensor_math_operator_overrides)
_BINARY = {
    "add": "__operators__.add", "sub": "math.subtract", "mul": "math.multiply",
    "truediv": "math.truediv", "floordiv": "math.floordiv", "mod": "math.floormod",
    "pow": "math.pow", "matmul": "linalg.matmul", "lt": "math.less", "le": "math.less_equal",
    "gt": "math.greater", "ge": "math.greater_equal",
}
_BITWISE = {"and": ("math.logical_and", "bitwise.bitwise_and"),
            "or": ("math.logical_or", "bitwise.bitwise_or"),
            "xor": ("math.logical_xor", "bitwise.bitwise_xor")}
_REFLECT = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _is_bool(v) -> bool:
    return isinstance(v, LazyTensor) and v.dtype.is_bool


def _eager(dunder: str):
    """``tf.Tensor``'s own operator, called in the table's argument order: where the
    lazy path refuses (or falls back), TF then does exactly what eager ``x op y`` does
    (its operators convert a Python operand before calling the API)."""
    forward = getattr(tf.Tensor, f"__{dunder}__")
    reverse = getattr(tf.Tensor, f"__r{dunder}__", None)
    return forward, (None if reverse is None else lambda x, y: reverse(y, x))


def _make(name: str, api_of):
    """The operator and its reflection; ``api_of(self)`` names the table entry."""
    eager_fwd, eager_rev = _eager(name)

    def forward(self, other):
        return call(API[api_of(self)], eager_fwd, (self, other), {})

    def reverse(self, other):
        return call(API[api_of(self)], eager_rev, (other, self), {})
    return forward, reverse


def equality(api: str, x, y):
    """``==``/``!=``: elementwise (tf.Tensor's ``tf.__operators__.eq``/``ne``)."""
    if y is None:
        return api.endswith("ne")
    return call_by_name(api, x, y)


def _planned(fwd, rev, entry, apis):
    """The operators with ``_fastpath``'s shortcut when every entry they call has a kernel."""
    if any(API[a].kernel is None for a in apis):
        return fwd, rev
    return operator(fwd, entry), operator(rev, entry, reflected=True)


def _install() -> None:
    for dunder, api in _BINARY.items():
        fwd, rev = _planned(*_make(dunder, lambda self, api=api: api), api, (api,))
        setattr(LazyTensor, f"__{dunder}__", fwd)
        if dunder in _REFLECT:
            continue
        setattr(LazyTensor, f"__r{dunder}__", rev)
    for dunder, (logical, bitwise) in _BITWISE.items():
        def entry(self, logical=logical, bitwise=bitwise):
            return logical if _is_bool(self) else bitwise
        fwd, rev = _planned(*_make(dunder, entry), entry, (logical, bitwise))
        setattr(LazyTensor, f"__{dunder}__", fwd)
        setattr(LazyTensor, f"__r{dunder}__", rev)
    LazyTensor.__neg__ = lambda self: call_by_name("math.negative", self)
    LazyTensor.__abs__ = lambda self: call_by_name("math.abs", self)
    LazyTensor.__pos__ = lambda self: self
    LazyTensor.__invert__ = lambda self: call_by_name(
        "math.logical_not" if self.dtype.is_bool else "bitwise.invert", self)
