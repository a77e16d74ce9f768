"""Python operators on LazyTensor, mapped the way ``tf.Tensor``'s operators are."""

from __future__ import annotations

from ._dispatch import call_by_name
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


def _make(name: str, api: str):
    def forward(self, other):
        return call_by_name(api, self, other)

    def reverse(self, other):
        return call_by_name(api, other, self)
    return forward, reverse


def _make_bitwise(logical: str, bitwise: str):
    def forward(self, other):
        return call_by_name(logical if _is_bool(self) else bitwise, self, other)

    def reverse(self, other):
        return call_by_name(logical if _is_bool(self) else bitwise, other, self)
    return forward, reverse


def equality(api: str, x, y):
    """``==``/``!=``: elementwise (tf.Tensor's ``tf.__operators__.eq``/``ne``)."""
    if y is None:
        return api.endswith("ne")
    return call_by_name(api, x, y)


def _install() -> None:
    for dunder, api in _BINARY.items():
        fwd, rev = _make(dunder, api)
        setattr(LazyTensor, f"__{dunder}__", fwd)
        if dunder in _REFLECT:
            continue
        setattr(LazyTensor, f"__r{dunder}__", rev)
    for dunder, (logical, bitwise) in _BITWISE.items():
        fwd, rev = _make_bitwise(logical, bitwise)
        setattr(LazyTensor, f"__{dunder}__", fwd)
        setattr(LazyTensor, f"__r{dunder}__", rev)
    LazyTensor.__neg__ = lambda self: call_by_name("math.negative", self)
    LazyTensor.__abs__ = lambda self: call_by_name("math.abs", self)
    LazyTensor.__pos__ = lambda self: self
    LazyTensor.__invert__ = lambda self: call_by_name(
        "math.logical_not" if self.dtype.is_bool else "bitwise.invert", self)
