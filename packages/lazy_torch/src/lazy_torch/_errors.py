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


#: Raised as they are: ``ImplicitSyncError`` (``.cause``, ``.site``) and ``VerifyError``
#: (``.mismatch``) subclass RuntimeError, so ``except RuntimeError`` still catches them.
_PASS_THROUGH = (lc.ImplicitSyncError, lc.VerifyError)


def translate(err: lc.LazyError, func=None) -> Exception:
    if isinstance(err, _PASS_THROUGH):  # already RuntimeErrors, with attributes users read
        return err
    shapes = ", ".join(str(list(s.shape)) if hasattr(s, "shape") else str(s) for s in err.shapes)
    msg = str(err) + (f" (shapes: {shapes})" if shapes and "shape" not in str(err) else "") \
        + (f" [{func.__name__}]" if func is not None else "")
    for core, host in _TYPES:
        if isinstance(err, core):
            return host(msg)
    return RuntimeError(msg)
