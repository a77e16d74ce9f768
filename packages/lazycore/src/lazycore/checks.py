"""Checks that need data (out-of-range indices), run inside the next compiled program.

A frontend that cannot validate a lazy operand at the call (an index tensor whose
values are not known yet) registers a *pending check*: a lazy boolean scalar that is
true when the check fails, the exception type and message to raise, the op and the
user's line. The next sync adds one extra output to its program, the pending flags
concatenated into one boolean vector (each flag one fused reduction), reads it after
execution and raises the first failure as the frontend's own exception type. Values
that do not depend on the failing op keep their computed values; values that do
become failed leaves that raise the same error when observed. No sync per op.

Host-known operands (constants, Python scalars) are checked at once: no program needed.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import ops
from .callsite import _call_site
from .ir import LEAF_OPS, Node, host_value, independent_of
from .tensor import live_tensors
from .trace import filled


class Check:
    """One pending check: ``flag`` (lazy bool scalar, true = failed) and what to raise."""

    __slots__ = ("flag", "error_type", "message", "op", "site", "guards")

    def __init__(self, flag, error_type, message: str, op: str, site: str, guards):
        self.flag = flag
        self.error_type = error_type
        self.message = message
        self.op = op
        self.site = site
        self.guards = guards  # nodes eager would never have produced if the check failed

    def error(self) -> BaseException:
        return self.error_type(f"{self.message} (checked in the compiled program: op {self.op},"
                               f" recorded at {self.site})")


PENDING: list[Check] = []  # registration order; a frontend may drop checks its failed call added
CAPTURING = [0]  # > 0 while a graph is captured: its checks are the capture's, no sync's


def pending() -> bool:
    return bool(PENDING) and not CAPTURING[0]


def require(bad, error_type, message: str, *, op: str, guards=()) -> None:
    """Raise ``error_type(message)`` at the next barrier if the lazy bool scalar ``bad``
    is true. ``guards``: results of the checked op (tensors); values computed from them
    are failed too. A host-known ``bad`` raises now."""
    node = bad.node
    if node.op in ("const", "param"):
        if bool(np.asarray(host_value(node)).any()):
            raise error_type(f"{message} (op {op})")
        return
    guard_nodes = tuple(g.node for g in guards)
    PENDING.append(Check(bad, error_type, message, op, _call_site(), guard_nodes))


_RANGES: dict = {}  # id(device array) -> (weak ref to it, min, max) of host-uploaded ints


def remember_range(tensor, host) -> None:
    """``tensor`` (device data) was uploaded from the integer host array ``host``: keep
    its min and max, so checks on it are decided on the host at the call (a batch of
    indices or labels from a DataLoader needs no in-program check)."""
    node = tensor.node
    if node.op != "data" or host.size == 0 or host.dtype.kind not in "iu":
        return
    array = node.value
    key = id(array)
    try:
        ref = weakref.ref(array, lambda _, k=key: _RANGES.pop(k, None))
    except TypeError:
        return
    _RANGES[key] = (ref, int(host.min()), int(host.max()))


def known_range(index):
    """(min, max) of an integer tensor whose values the host knows, else None."""
    node = index.node
    if node.op in ("const", "param"):
        values = np.asarray(host_value(node))
        return int(values.min()), int(values.max())
    if node.op == "data":
        entry = _RANGES.get(id(node.value))
        if entry is not None and entry[0]() is node.value:
            return entry[1], entry[2]
    return None


def index_in_range(index, size: int, error_type, message: str, *, op: str,
                   negative: bool = True, guards=()) -> None:
    """Every value of the integer tensor ``index`` lies in ``[-size, size)`` (``negative``)
    or ``[0, size)``; checked by one fused ``any`` reduction in the next program."""
    if index.size == 0:
        return
    known = known_range(index)
    if known is not None:  # values known on the host: checked at the call
        if known[0] < (-size if negative else 0) or known[1] >= size:
            raise error_type(f"{message} (op {op})")
        return
    # one unsigned compare: shifted into [0, span) when valid, negatives wrap to huge
    # (primitives only: the composites sit above this module and call require)
    wide = index if index.dtype == np.int64 else ops.convert(index, dtype=np.dtype(np.int64))
    if negative:
        wide = ops.add(wide, filled(size, np.int64, index.shape))
    unsigned = ops.convert(wide, dtype=np.dtype(np.uint64))
    span = filled(2 * size if negative else size, np.uint64, index.shape)
    bad = ops.reduce_or(ops.ge(unsigned, span), axes=tuple(range(index.ndim)))
    require(bad, error_type, message, op=op, guards=guards)


# -- the runtime's side ---------------------------------------------------------------

def take(roots: list[Node]) -> list[Check] | None:
    """Move every pending check into this sync (returned): appends one root to ``roots``,
    their flags as one boolean vector, the program's last output."""
    if not PENDING or CAPTURING[0]:
        return None
    checks = list(PENDING)
    PENDING.clear()
    flags = [ops.reshape(c.flag, new_sizes=(1,)) for c in checks]
    combined = flags[0] if len(flags) == 1 else ops.concatenate(*flags, dimension=0)
    roots.append(combined.node)
    return checks


def verify(batch: list[Check] | None, outputs, roots: list[Node], targets) -> None:
    """After execution: raise the first failed check, and fail the values that depend on
    a failed check's result (``outputs[i]`` is ``roots[i]``'s value; ``targets`` hold them)."""
    if batch is None:
        return
    failed = np.asarray(outputs[-1])
    if not failed.any():
        return
    bad = [c for c, f in zip(batch, failed, strict=True) if f]
    error = bad[0].error()  # the first failure in program order is what eager raised first
    _fail_dependents([g for c in bad for g in c.guards], error, outputs, roots, targets)
    raise error


def _fail_dependents(guards, error, outputs, roots, targets) -> None:
    if not guards:
        return
    pending = [t for t in live_tensors() if t.node.op not in LEAF_OPS]  # not computed here
    clean = independent_of(list(roots) + [t.node for t in pending], guards)
    tainted = {id(o) for o, r in zip(outputs, roots, strict=True) if id(r) not in clean}
    for t in targets:
        if t.node.op == "data" and id(t.node.value) in tainted:
            t.node = Node("failed", (), (), t.node.aval, error)
    for t in pending:
        if id(t.node) not in clean:
            t.node = Node("failed", (), (), t.node.aval, error)
