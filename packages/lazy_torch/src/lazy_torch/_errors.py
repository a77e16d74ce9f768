"""Core errors -> PyTorch's exception types (raised at the call that made them)."""

from __future__ import annotations

import lazycore as lc

_TYPES = (
    (lc.errors.IndexOutOfRange, IndexError),
    (lc.AxisError, IndexError),
    (lc.ShapeError, RuntimeError),
    (lc.DTypeError, RuntimeError),
    (lc.errors.UnsupportedError, NotImplementedError),
    (lc.LazyError, RuntimeError),
)


def translate(err: lc.LazyError, func=None) -> Exception:
    shapes = ", ".join(str(list(s.shape)) if hasattr(s, "shape") else str(s) for s in err.shapes)
    where = f" [{func.__name__}]" if func is not None else ""
    msg = str(err) + (f" (shapes: {shapes})" if shapes and "shape" not in str(err) else "") + where
    for core, host in _TYPES:
        if isinstance(err, core):
            return host(msg)
    return RuntimeError(msg)
