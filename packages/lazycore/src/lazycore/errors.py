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
