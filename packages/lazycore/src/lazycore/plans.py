"""Per-operand-signature plans for elementwise calls: the fast path every frontend's
Python operators share.

A frontend's general path for ``x * 0.5`` (promotion by its framework's rules, scalar
conversion, broadcasting, its kernel) depends only on the operands' *signatures*: a
lazy operand's aval, a Python scalar's type. A frontend derives, once per signature,
one *step* per operand and a kernel; ``binary_runner``/``unary_runner`` turn them into
one callable that records exactly those nodes, with as few Python frames as possible
(this runs once per traced op). A step is ``None`` (the core tensor as it is), a
``Fill`` (a Python scalar: ``trace.filled`` in a dtype and shape) or any callable on
the operand. ``PlanCache`` keeps the plans, bounded, and remembers its last hit so a
loop that repeats one signature compares avals by identity instead of hashing them.
"""

from __future__ import annotations

from typing import NamedTuple

from .composites.broadcasting import broadcast_to, cast
from .trace import filled

MAX_PLANS = 1024  # per cache: a program with ever new shapes must not grow it forever


class Fill(NamedTuple):
    """A Python scalar operand: ``filled(value, dtype, shape)``."""

    dtype: object
    shape: tuple


def tensor_step(aval, dtype=None, shape=None, then=None):
    """A core operand's cast to ``dtype``, broadcast to ``shape``, cast to ``then``
    (each only where it changes something); None when nothing does."""
    steps = []
    if dtype is not None and aval.dtype != dtype:
        steps.append(lambda t: cast(t, dtype))
    if shape is not None and aval.shape != shape:
        steps.append(lambda t: broadcast_to(t, shape))
    if then is not None and then != (dtype if dtype is not None else aval.dtype):
        steps.append(lambda t: cast(t, then))
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]

    def prepare(t):
        for step in steps:
            t = step(t)
        return t
    return prepare


def _callable(step):
    if isinstance(step, Fill):
        dtype, shape = step
        return lambda v: filled(v, dtype, shape)
    return step


def binary_runner(kernel, step_x, step_y):
    """``(x, y) -> kernel(step_x(x), step_y(y))``, the common pairings spelled out."""
    if step_x is None and step_y is None:
        return kernel
    if step_x is None and isinstance(step_y, Fill):
        dtype, shape = step_y
        return lambda x, y: kernel(x, filled(y, dtype, shape))
    if step_y is None and isinstance(step_x, Fill):
        dtype, shape = step_x
        return lambda x, y: kernel(filled(x, dtype, shape), y)
    step_x, step_y = _callable(step_x), _callable(step_y)
    if step_x is None:
        return lambda x, y: kernel(x, step_y(y))
    if step_y is None:
        return lambda x, y: kernel(step_x(x), y)
    return lambda x, y: kernel(step_x(x), step_y(y))


def unary_runner(kernel, step):
    """``x -> kernel(step(x))``."""
    if step is None:
        return kernel
    step = _callable(step)
    return lambda x: kernel(step(x))


class PlanCache(dict):
    """Plans by signature key (``False``: the key has none, take the general path).
    ``last`` is ``(*key, plan)`` of the latest hit, one tuple replaced whole, so a
    thread tracing beside another never pairs a key with another key's plan."""

    __slots__ = ("last",)

    def __init__(self):
        super().__init__()
        self.last = (None, None, None)

    def find(self, key):
        plan = self.get(key)
        if plan:
            self.last = (*key, plan)
        return plan

    def keep(self, key, plan) -> None:
        if len(self) >= MAX_PLANS:
            self.clear()
        self[key] = plan if plan is not None else False
