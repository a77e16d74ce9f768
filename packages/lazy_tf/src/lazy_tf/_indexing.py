"""``x[key]`` with tf.Tensor's rules: ints, slices, ``None``, ``...`` and scalar integer
tensors (read on the host). Anything else is refused, so TensorFlow raises its own
error for it (see ``_fallback.oracle``). In a captured graph, which has no value for
them, a slice from a lazy scalar ``start`` to ``start + k`` (Keras's RandomCrop:
``x[:, h:h + 6]``) is a dynamic slice of ``k``; outside, the start is read."""

from __future__ import annotations

import lazycore as lc

from ._convert import is_lazy_class, is_tensor, static, to_core
from ._table import api, in_range


def _static_key_item(k):
    if k is None or k is Ellipsis:
        return k
    if isinstance(k, slice):
        return slice(*(None if v is None else _index(v) for v in (k.start, k.stop, k.step)))
    return _index(k, "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                  "scalar tf.int32/tf.int64 tensors are valid indices, got {!r}")


def _index(v, message="slice indices must be integers or None, got {!r}"):
    if lc.composites.indexing.is_int(v):  # Python's or NumPy's, as TF takes them
        return int(v)
    if is_tensor(v) and v.shape.rank == 0 and v.dtype.is_integer:
        return int(static(v))
    raise TypeError(message.format(v))


def key_to_static(key) -> tuple:
    return tuple(_static_key_item(k) for k in (key if isinstance(key, tuple) else (key,)))


def _width(k) -> int | None:
    """``k.stop - k.start`` of a step-1 slice between lazy scalars traced as the same
    tensor plus Python ints (``h + 1:h + 7``), while a graph is captured."""
    if not (lc.checks.CAPTURING[0] and isinstance(k, slice) and k.step in (None, 1) and
            is_tensor(k.start) and is_tensor(k.stop) and
            k.start.shape.rank == 0 and k.start.dtype.is_integer):
        return None
    (start, a), (stop, b) = (_plus(to_core(v).node) for v in (k.start, k.stop))
    return b - a if start is stop else None


def _plus(node) -> tuple:
    """(x, c) for a node traced as ``x + c`` (``c``: host scalars added or subtracted)."""
    known = [o.op in ("param", "const") and not o.aval.shape for o in node.operands]
    if node.op in ("add", "sub") and len(known) == 2 and known[1] or node.op == "add" and \
            known == [True, False]:
        x, c = _plus(node.operands[not known[1]])
        return x, c + int(lc.ir.host_value(node.operands[known[1]])) * (
            -1 if node.op == "sub" else 1)
    return node, 0


def dynamic_slices(t: lc.Tensor, key) -> tuple:
    """(``t`` cut along each axis whose slice ``_width`` knows or indexed by a lazy
    integer scalar while a graph is captured, the static key of the rest). TF's slice
    has that width only for a start in ``[0, dim - width]``, an index is in
    ``[-dim, dim)``: any other raises InvalidArgumentError at the next barrier."""
    items, axis = list(key if isinstance(key, tuple) else (key,)), 0
    for i, k in enumerate(items):
        width, index = _width(k), bool(lc.checks.CAPTURING[0] and is_lazy_class(k.__class__)
                                       and k.shape.rank == 0 and k.dtype.is_integer)  # x[i]
        if axis < t.ndim and (index or width is not None and 0 <= width <= t.shape[axis]):
            dim = t.shape[axis]
            if index:  # a negative index counts from the end, as in TF
                width, at = 1, lc.numeric.elementwise("add", to_core(k), dim)
                start, check = lc.numeric.elementwise("rem", at, max(dim, 1)), 2 * dim
                what = f"index out of bounds: not in [-{dim}, {dim})"
            else:
                at = start = to_core(k.start)
                check, what = dim - width + 1, (f"a slice of {width} from a traced start in "
                                                f"[0, {dim - width}] (TF's slice from another start is shorter, or other rows)")
            t, items[i] = in_range(at, check, lc.ops.dynamic_slice(
                t, *[start if d == axis else lc.scalar(0, start.dtype) for d in range(t.ndim)],
                slice_sizes=t.shape[:axis] + (width,) + t.shape[axis + 1:]), "getitem",
                what), 0 if index else slice(None)
        axis += t.ndim - sum(x is not None and x is not Ellipsis for x in items) if \
            k is Ellipsis else k is not None
    return t, key_to_static(tuple(items))


@api("__operators__.getitem", "slice, rev, reshape (core getitem)", tensors=("tensor",))
def _getitem(tensor, slice_spec, var=None):
    t, key = dynamic_slices(to_core(tensor), slice_spec)
    if any(isinstance(k, slice) and k.step == 0 for k in key):
        raise lc.ShapeError("slice step cannot be zero")
    return lc.numeric.getitem(t, key)


def getitem(x, key):
    from ._dispatch import call_by_name

    return call_by_name("__operators__.getitem", x, key)
