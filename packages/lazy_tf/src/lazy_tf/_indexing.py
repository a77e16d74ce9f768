"""``x[key]`` with tf.Tensor's rules: ints, slices, ``None``, ``...`` and scalar integer
tensors (read on the host). Anything else is refused, so TensorFlow raises its own
error for it (see ``_fallback.oracle``)."""

from __future__ import annotations

import lazycore as lc

from ._convert import is_tensor, static, to_core
from ._table import api


def _static_key_item(k):
    if k is None or k is Ellipsis or (isinstance(k, int) and not isinstance(k, bool)):
        return k
    if isinstance(k, slice):
        return slice(*(None if v is None else _index(v) for v in (k.start, k.stop, k.step)))
    if is_tensor(k) and k.shape.rank == 0 and k.dtype.is_integer:
        return int(static(k))
    raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                    f"scalar tf.int32/tf.int64 tensors are valid indices, got {k!r}")


def _index(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if is_tensor(v) and v.shape.rank == 0 and v.dtype.is_integer:
        return int(static(v))
    raise TypeError(f"slice indices must be integers or None, got {v!r}")


def key_to_static(key) -> tuple:
    items = key if isinstance(key, tuple) else (key,)
    return tuple(_static_key_item(k) for k in items)


@api("__operators__.getitem", "slice, rev, reshape (core getitem)", tensors=("tensor",))
def _getitem(tensor, slice_spec, var=None):
    t = to_core(tensor)
    key = key_to_static(slice_spec)
    for k in key:
        if isinstance(k, slice) and k.step == 0:
            raise lc.ShapeError("slice step cannot be zero")
    return lc.numeric.getitem(t, key)


def getitem(x, key):
    from ._dispatch import call_by_name

    return call_by_name("__operators__.getitem", x, key)
