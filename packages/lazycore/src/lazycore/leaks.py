"""Graph-leak warnings: preprocessing or logging that ends up in the step's program.

The user marks code as data loading or logging (``lc.data_loading()``,
``lc.logging_region()`` or ``lc.mark_region(name)``; each a context manager and a
decorator). Ops recorded inside a region carry its mark. When a sync made outside every
region runs a program that contains marked ops, those ops were compiled into the step's
graph (and recompile it whenever the preprocessing changes): ``GraphLeakWarning`` says
so once per (sync site, region) and ``metrics`` counts ``graph_leaks`` per such sync.

Zero cost without a region: ``OpDef.__call__`` is only swapped for the marking call
while some thread is inside a region, and the sync checks one dict's length.
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from contextlib import ContextDecorator

from . import metrics, sources
from .ops import registry

DATA_LOADING = "data_loading"
LOGGING = "logging"

marks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Node -> (order, region, site)
_order = itertools.count()
_local = threading.local()  # .regions: this thread's stack of region names
_active = [0]               # regions entered and not left, all threads together
_lock = threading.Lock()
_warned: set = set()        # (sync site, region) already warned about


class GraphLeakWarning(UserWarning):
    """Ops recorded in a data-loading or logging region run in a step's program."""


def _stack() -> list:
    stack = getattr(_local, "regions", None)
    if stack is None:
        stack = _local.regions = []
    return stack


def _marking_call(op, *operands, **attrs):
    """``OpDef.__call__`` while a region is active: trace, then mark what was recorded."""
    out = (sources._recording_call if sources.enabled() else sources._plain_call)(op, *operands, **attrs)
    stack = getattr(_local, "regions", None)
    if stack:  # another thread's region swapped the call in: this thread records unmarked
        mark = (next(_order), stack[-1], sources._user_frame())
        for t in out if isinstance(out, tuple) else (out,):
            node = t.node
            marks[node] = mark
            if node.op == "tuple_get":  # a multi-output op: its node too
                marks[node.operands[0]] = mark
    return out


class mark_region(ContextDecorator):  # noqa: N801 - used like a function: lc.mark_region("data")
    """Mark the ops recorded inside as belonging to region ``name`` (a context manager
    or a decorator). A sync outside every region whose program contains them warns
    with ``GraphLeakWarning``; a sync inside the region (``lc.sync()`` at the end of
    loading) is the region's own and does not. Regions are per thread; a generator
    should ``yield`` outside one (suspended inside, it leaves the region open)."""

    def __init__(self, name: str = DATA_LOADING):
        if not isinstance(name, str) or not name:
            raise TypeError(f"mark_region: name must be a non-empty str, got {name!r}")
        self.name = name

    def __enter__(self):
        _stack().append(self.name)
        with _lock:
            _active[0] += 1
            registry.OpDef.__call__ = _marking_call
        return self

    def __exit__(self, *exc):
        _stack().pop()
        with _lock:
            _active[0] -= 1
            if not _active[0]:
                select_op_call()  # the plain or the source-recording call again
        return False


def data_loading() -> mark_region:
    """``with lc.data_loading():`` (or ``@lc.data_loading()``): batch preparation."""
    return mark_region(DATA_LOADING)


def logging_region() -> mark_region:
    """``with lc.logging_region():`` (or ``@lc.logging_region()``): metrics and logging."""
    return mark_region(LOGGING)


def check(program, site: str) -> None:
    """Called by the runtime before running ``program`` at ``site`` when ``marks`` is
    not empty: warn if it holds ops recorded in a region (unless this sync is in one)."""
    if getattr(_local, "regions", None):
        return
    found: dict = {}  # region -> [ops, first mark]
    for node in program.nodes:
        mark = marks.get(node)
        if mark is None:
            continue
        entry = found.get(mark[1])
        if entry is None:
            found[mark[1]] = [0, mark]
            entry = found[mark[1]]
        if node.op != "tuple_get":
            entry[0] += 1
        if mark[0] < entry[1][0]:
            entry[1] = mark
    for region, (ops, first) in found.items():
        metrics.inc("graph_leaks")
        if (site, region) in _warned:
            continue
        _warned.add((site, region))
        _warn(region, ops, first[2], site)


def _warn(region: str, ops: int, first, site: str) -> None:
    filename, _, line = site.rpartition(":")
    message = (
        f"graph leak: {ops} op{'s' if ops != 1 else ''} recorded in the {region!r} region "
        f"(first at {first[0]}:{first[1]}) run in the program of the sync at {site}: "
        f"{'they are' if ops != 1 else 'it is'} compiled into the step's graph and recompile"
        f"{'' if ops != 1 else 's'} it whenever the preprocessing changes. Materialize the batch before the step (lc.sync() or lc.materialize(batch)"
        " at the end of loading) or feed it through lc.DeviceLoader.")
    lineno = int(line) if line.isdigit() else 0
    warnings.warn_explicit(message, GraphLeakWarning, filename or site, lineno,
                           module=(filename or site).rsplit("/", 1)[-1].removesuffix(".py"))


def select_op_call() -> None:
    """Install the op call (``OpDef.__call__``) the settings and regions need: marking
    inside a region (it records sources itself when asked), else recording sources iff
    a setting needs them (``sources.enabled()``), else the plain ``trace.call``. Here,
    above ``sources``, because only this module knows all three; ``configure`` and
    ``verify`` call it when a setting changes."""
    if _active[0]:
        registry.OpDef.__call__ = _marking_call
        return
    registry.OpDef.__call__ = sources._recording_call if sources.enabled() else sources._plain_call


def reset() -> None:
    """Forget which (site, region) pairs were warned about (they warn again)."""
    _warned.clear()


select_op_call()  # settings from the environment (LAZYCORE_SOURCES, debug) at import
