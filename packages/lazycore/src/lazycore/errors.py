"""Exceptions raised while tracing.

Shape and dtype rules run when a node is created, so mistakes surface at the call
that made them. The classes subclass the matching built-in (``ValueError`` /
``TypeError`` / ``IndexError``) so that a frontend that does nothing still raises
something sensible; frontends translate them into their framework's own types.
"""

from __future__ import annotations


class LazyError(Exception):
    """Base class: every error lazycore raises on purpose."""

    def __init__(self, message: str, *, op: str | None = None, shapes=None):
        self.op = op
        self.shapes = tuple(shapes) if shapes is not None else ()
        prefix = f"{op}: " if op else ""
        super().__init__(prefix + message)


class ShapeError(LazyError, ValueError):
    """Operand shapes are incompatible with the op (broadcast, contraction, ...)."""


class DTypeError(LazyError, TypeError):
    """Operand dtypes are not accepted by the op."""


class AxisError(LazyError, IndexError):
    """An axis / dimension argument is out of range."""


class IndexOutOfRange(LazyError, IndexError):
    """A static index is out of range."""


class UnsupportedError(LazyError, NotImplementedError):
    """No lowering or rule exists for a request."""


class ExecutionError(LazyError, RuntimeError):
    """XLA could not compile or run a program. Names the op (when known) and the user's
    line that caused the sync; values that did not depend on it were still computed."""


class ImplicitSyncError(LazyError, RuntimeError):
    """An implicit sync (``.item()``, print, host transfer...) inside ``allow_sync(False)``.

    ``.cause`` is the sync cause, ``.site`` the user's ``file:line``.
    """

    def __init__(self, message: str, *, cause: str, site: str):
        super().__init__(message)
        self.cause = cause
        self.site = site


class VerifyError(LazyError, RuntimeError):
    """``lc.verify()``: a compiled program's result differs from its op-by-op eager
    evaluation. ``.mismatch`` names the op, the user's line that recorded it and both
    values (``lazycore.verify.Mismatch``)."""

    def __init__(self, message: str, *, mismatch):
        super().__init__(message, op=mismatch.op)
        self.args = (message,)
        self.mismatch = mismatch
        self.site = mismatch.site


class CaptureError(LazyError, RuntimeError):
    """A placeholder's value was needed while capturing (a data-dependent op)."""
