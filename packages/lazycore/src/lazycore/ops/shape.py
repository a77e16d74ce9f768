"""Shape primitives: broadcast, reshape, transpose, reverse, slice, concat, pad, iota."""

from __future__ import annotations

import math
from types import SimpleNamespace

from jax import lax

from ..dtypes import canonical
from ..errors import AxisError, ShapeError
from ..ir import Aval
from .registry import OpDef, defop
from .rules import same_dtypes

FAMILY = "shape"


def _broadcast_rule(x: Aval, *, shape, broadcast_dimensions) -> Aval:
    if len(broadcast_dimensions) != x.ndim:
        raise ShapeError(f"broadcast_dimensions {broadcast_dimensions} must name one output "
                         f"dimension per operand dimension of {x}")
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape):
            raise AxisError(f"broadcast dimension {dst} out of range for shape {shape}")
        if x.shape[src] not in (1, shape[dst]):
            raise ShapeError(f"cannot broadcast {x} to shape {tuple(shape)}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ShapeError("broadcast_dimensions must be strictly increasing")
    return Aval(tuple(shape), x.dtype)


broadcast_in_dim = defop("broadcast_in_dim", FAMILY, _broadcast_rule,
                         lambda x, *, shape, broadcast_dimensions:
                         lax.broadcast_in_dim(x, shape, broadcast_dimensions))


def _reshape_rule(x: Aval, *, new_sizes) -> Aval:
    if any(d < 0 for d in new_sizes) or math.prod(new_sizes) != x.size:
        raise ShapeError(f"cannot reshape {x} ({x.size} elements) to {tuple(new_sizes)}")
    return Aval(tuple(new_sizes), x.dtype)


reshape = defop("reshape", FAMILY, _reshape_rule,
                lambda x, *, new_sizes: lax.reshape(x, new_sizes))


def _transpose_rule(x: Aval, *, permutation) -> Aval:
    if sorted(permutation) != list(range(x.ndim)):
        raise AxisError(f"permutation {permutation} is not a permutation of {x.ndim} axes")
    return Aval(tuple(x.shape[p] for p in permutation), x.dtype)


transpose = defop("transpose", FAMILY, _transpose_rule,
                  lambda x, *, permutation: lax.transpose(x, permutation))


def _rev_rule(x: Aval, *, dimensions) -> Aval:
    for d in dimensions:
        if not 0 <= d < x.ndim:
            raise AxisError(f"dimension {d} out of range for {x}")
    return x


rev = defop("rev", FAMILY, _rev_rule, lambda x, *, dimensions: lax.rev(x, dimensions))


def _slice_rule(x: Aval, *, start_indices, limit_indices, strides=None) -> Aval:
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"slice of {x} needs {x.ndim} starts, limits and strides")
    shape = []
    for size, lo, hi, st in zip(x.shape, start_indices, limit_indices, strides, strict=True):
        if not 0 <= lo <= hi <= size or st < 1:
            raise ShapeError(f"slice [{lo}:{hi}:{st}] out of range for dimension of size {size}")
        shape.append(max(0, -(-(hi - lo) // st)))
    return Aval(tuple(shape), x.dtype)


_call = OpDef.__call__  # ``trace.call``


class _Slice(OpDef):
    """A ``slice`` whose window lies inside one operand of a pending ``concatenate``
    (nested ones too) slices that operand: the same values, and ``generate()``'s
    ``input_ids[:, -1]`` after ``cat`` reads the new column, not the whole growing
    sequence (whose length would make every token's program a new one)."""

    def __call__(self, x, **attrs):
        node, lo, hi = x.node, [*attrs["start_indices"]], [*attrs["limit_indices"]]
        # a malformed window goes to the rule as given (its error names the operand's shape)
        while node.op == "concatenate" and node.value is None and len(lo) == len(
                hi) == len(node.aval.shape):
            d = node.attrs[0][1]  # its one attribute, ``dimension``
            for part in node.operands:
                if lo[d] < part.aval.shape[d]:
                    break
                lo[d], hi[d] = lo[d] - part.aval.shape[d], hi[d] - part.aval.shape[d]
            if not 0 <= lo[d] < hi[d] <= part.aval.shape[d]:  # across operands, or empty
                return _call(self, x, **attrs)
            node = part
        return _call(self, x, **attrs) if node is x.node else _call(
            self, SimpleNamespace(node=node), **{**attrs, "start_indices": tuple(lo),
                                                 "limit_indices": tuple(hi)})


slice = defop("slice", FAMILY, _slice_rule,  # noqa: A001 - op name
              lambda x, *, start_indices, limit_indices, strides=None:
              lax.slice(x, start_indices, limit_indices, strides), kind=_Slice)


def _concat_rule(*xs: Aval, dimension) -> Aval:
    if not xs:
        raise ShapeError("need at least one operand")
    dtype = same_dtypes("concatenate", xs)
    first = xs[0]
    if not 0 <= dimension < max(first.ndim, 1) or first.ndim == 0:
        raise AxisError(f"dimension {dimension} out of range for {first}")
    total = 0
    for x in xs:
        if x.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(
                zip(x.shape, first.shape, strict=True)) if i != dimension):
            raise ShapeError("all operands must match except in the concatenation dimension "
                             f"{dimension}: " + ", ".join(str(a) for a in xs))
        total += x.shape[dimension]
    shape = list(first.shape)
    shape[dimension] = total
    return Aval(tuple(shape), dtype)


concatenate = defop("concatenate", FAMILY, _concat_rule,
                    lambda *xs, dimension: lax.concatenate(xs, dimension))


def _pad_rule(x: Aval, value: Aval, *, padding_config) -> Aval:
    if value.shape != () or value.dtype != x.dtype:
        raise ShapeError(f"padding value must be a scalar of dtype {x.dtype}, got {value}")
    if len(padding_config) != x.ndim:
        raise ShapeError(f"padding_config needs one (low, high, interior) per dimension of {x}")
    shape = []
    for size, (lo, hi, interior) in zip(x.shape, padding_config, strict=True):
        n = size + lo + hi + max(size - 1, 0) * interior
        if n < 0 or interior < 0:
            raise ShapeError(f"padding {(lo, hi, interior)} gives a negative size for {size}")
        shape.append(n)
    return Aval(tuple(shape), x.dtype)


pad = defop("pad", FAMILY, _pad_rule,
            lambda x, v, *, padding_config: lax.pad(x, v, padding_config))


def _iota_rule(*, dtype, shape, dimension) -> Aval:
    if not 0 <= dimension < len(shape):
        raise AxisError(f"iota dimension {dimension} out of range for shape {shape}")
    return Aval(tuple(shape), canonical(dtype))


iota = defop("iota", FAMILY, _iota_rule,
             lambda *, dtype, shape, dimension:
             lax.broadcasted_iota(canonical(dtype), shape, dimension))


def _tuple_get_rule(x, *, index):  # multi-output projection; built by trace.call
    return x[index]


tuple_get = defop("tuple_get", FAMILY, _tuple_get_rule, lambda x, *, index: x[index])
