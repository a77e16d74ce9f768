"""Why did my lazy program sync, and why did it recompile?

The runtime reports every sync here (``on_sync``): its cause, the user's
``file:line`` that triggered it, the graph size, cache hit or miss and, for a
recompile of a call site, what changed. This module keeps

- a bounded log of recent syncs (``sync_log()``), printed one line each to stderr
  when ``settings.debug`` is on (``LAZYCORE_DEBUG=1`` or ``lc.configure(debug=True)``);
- per-site aggregates, turned into advice by ``summary()``: recompile storms
  ("compiled 37 times at train.py:52; input 0 shape varies in dim 0 -- pad or
  bucket it") and sites that sync often. With debug on, the summary is printed at exit;
- the ``allow_sync(False)`` guard: an implicit sync inside it raises
  ``ImplicitSyncError`` naming the user's line (explicit ``lc.sync()`` still works).

Sync causes (the ``cause=`` of ``lc.sync`` / ``lc.to_numpy_many``, counted as
``sync::<cause>``) are listed in ``CAUSES``. ``"explicit"`` is the only one
``allow_sync(False)`` lets through.
"""

from __future__ import annotations

import atexit
import functools
import linecache
import sys
import threading
from collections import Counter, deque
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import dump
from .callsite import _call_site
from .config import settings
from .errors import ImplicitSyncError
from .lowering import graph_id
from .verify import check_program  # lazycore.verify is the context manager

#: The documented cause vocabulary. Frontends may pass other strings; they are
#: treated as implicit syncs and counted under their own name.
CAUSES = {
    "explicit": "lc.sync() / lc.mark_step() / a frontend's sync(): the barrier you asked for",
    "mark_step": "a frontend's mark_step() (lazy_torch): the step barrier you asked for",
    "item": "a Python scalar was read (.item(), float(), int(), bool() of a tensor)",
    "print": "a value was printed or formatted (repr/str)",
    "host_transfer": "a value was copied to host memory (.numpy(), np.asarray, tf .numpy())",
    "materialize": "the core needed a value on device or host (lc.to_numpy / lc.materialize)",
    "fallback:<op>": "an op ran on the host framework (no lazy lowering): its inputs were"
                     " synced (logged with the op's name: fallback:numpy.gcd)",
    "data_dependent": "an output shape depends on values (nonzero, unique, boolean masks)",
    "convert": "a lazy value was converted to the host framework's eager tensor",
    "control_flow": "Python control flow on a tensor (if x: / while x:)",
    "trace_limit": "the trace grew past settings.max_pending_ops without a sync and was cut",
}



def describe_cause(cause: str) -> str:
    """What a cause means (``fallback:aten::nonzero`` is a ``fallback``)."""
    return CAUSES.get("fallback:<op>" if cause.startswith("fallback:") else cause,
                      "a value was observed")


#: Causes of a step barrier: a full sync with one of them ends a step.
STEP_CAUSES = frozenset({"explicit", "mark_step"})
#: Causes allowed inside ``allow_sync(False)``: the barriers you asked for, and the
#: automatic cut of an over-long trace (it waits for nothing on the host).
EXPLICIT_CAUSES = STEP_CAUSES | {"trace_limit"}

#: Advice thresholds: compiles at one site / implicit syncs at one site.
STORM_COMPILES = 5
FREQUENT_SYNCS = 20
_MAX_AVALS_PER_SITE = 64


@dataclass
class SyncRecord:
    """One sync that ran a program (syncs with nothing pending are not recorded)."""

    cause: str
    site: str
    ops: int            # graph size: nodes other than inputs (ops and baked constants)
    inputs: int
    outputs: int
    hit: bool
    reason: str | None  # for a miss: "first compile" or what changed since the last compile
    graph: int          # short structural id of the graph (same graph -> same id)
    detail: str = ""    # e.g. "compiled in 41.2 ms (first compile)"

    def line(self) -> str:
        what = "cache hit" if self.hit else f"cache miss, {self.detail or self.reason}"
        return (f"[lazycore] sync cause={self.cause} site={self.site} ops={self.ops}"
                f" inputs={self.inputs} outputs={self.outputs} graph={self.graph:08x}: {what}")


@dataclass
class _Site:
    syncs: Counter = field(default_factory=Counter)      # cause -> count
    compiles: int = 0
    reasons: Counter = field(default_factory=Counter)    # recompile reason -> count
    avals: list = field(default_factory=list)            # input avals of each compile
    op_counts: set = field(default_factory=set)


_log: deque = deque(maxlen=1000)
_sites: dict[str, _Site] = {}
_state = {"allowed": True, "steps": 0}
_listeners: list = []  # profile hooks: fn(event, **info)
_local = threading.local()  # .cause: what the user did, set by a frontend's observation


# -- what the user did: frontends name it, the runtime logs it --------------------------

def observed_cause(cause: str | None = None) -> str:
    """The cause of a sync the runtime is about to run: the outermost ``observing``
    block's (``print(t)`` reads the value through the same path as ``t.numpy()``),
    else ``cause``, else ``"materialize"``."""
    return getattr(_local, "cause", None) or cause or "materialize"


class observing:  # noqa: N801 - used like a function: ``with observing("print"):``
    """Syncs inside the block are logged with ``cause`` (the outermost block wins)."""

    __slots__ = ("cause", "outer")

    def __init__(self, cause: str):
        self.cause = cause

    def __enter__(self):
        self.outer = getattr(_local, "cause", None)
        if self.outer is None:
            _local.cause = self.cause
        return self

    def __exit__(self, *exc):
        _local.cause = self.outer
        return False


def observes(cause: str):
    """Decorator for a frontend's observation method (``__bool__`` -> ``control_flow``)."""
    def decorate(fn):
        @functools.wraps(fn)
        def observe(*args, **kwargs):
            with observing(cause):
                return fn(*args, **kwargs)
        return observe
    return decorate


# -- hooks the runtime calls -------------------------------------------------------

def before_sync(cause: str, full: bool) -> None:
    """Called at the start of every ``lc.sync``: guard, step counting, profile markers."""
    if not _state["allowed"] and cause not in EXPLICIT_CAUSES:
        _refuse(cause)
    if full and cause in STEP_CAUSES:
        _state["steps"] += 1
    for listener in _listeners:
        listener("sync", cause=cause, full=full)


def before_host_transfer(cause: str = "host_transfer") -> None:
    """Called before a device value is copied to the host (``lc.to_numpy``)."""
    if not _state["allowed"]:
        _refuse("host_transfer" if cause == "materialize" else cause)


def verifying() -> bool:
    """True inside ``lc.verify()`` or with ``LAZYCORE_VERIFY=1``."""
    return settings.verify


def verify_program(program, outputs, site: str, cause: str) -> None:
    """``lc.verify()``: check a program just run against its op-by-op eager evaluation."""
    check_program(program, outputs, site, cause)


def on_compile(program, lowered, executable, site: str) -> None:
    """Called after each compile (``LAZYCORE_DUMP_DIR``: write the IR and HLO)."""
    if settings.dump_dir:
        dump.write(program, lowered, executable, site)


def on_sync(cause: str, site: str, program, hit: bool, reason: str | None = None,
            detail: str = "") -> None:
    """Record one executed sync; log it when debugging."""
    # O(outputs), not O(graph): sync is on the hot path. Node hashes are structural, so the
    # outputs' hashes identify the graph (up to which leaves are shared).
    ops = program.size - len(program.inputs)
    graph = graph_id(program)  # the HLO module is named lazy_<graph>
    record = SyncRecord(cause, site, ops, len(program.inputs), len(program.output_positions),
                        hit, reason, graph, detail)
    _log.append(record)
    entry = _sites.get(site)
    if entry is None:
        entry = _sites[site] = _Site()
    entry.syncs[cause] += 1
    if not hit:
        entry.compiles += 1
        if reason and reason != "first compile":
            entry.reasons[reason] += 1
        if len(entry.avals) < _MAX_AVALS_PER_SITE:
            entry.avals.append(tuple(program.input_avals()))
        entry.op_counts.add(ops)
    for listener in _listeners:
        listener("program", record=record)
    if settings.debug:
        print(record.line(), file=sys.stderr)


# -- allow_sync ---------------------------------------------------------------------

@contextmanager
def allow_sync(allowed: bool = True):
    """``with lc.allow_sync(False):`` -- any implicit sync inside raises.

    Use it around a training step to find hidden ``.item()`` calls, prints and
    host transfers: the ``ImplicitSyncError`` names the line that caused it.
    Explicit ``lc.sync()`` / ``mark_step()`` still run. Nests; restores on exit.
    """
    previous = _state["allowed"]
    _state["allowed"] = bool(allowed)
    try:
        yield
    finally:
        _state["allowed"] = previous


def sync_allowed() -> bool:
    return _state["allowed"]


def _refuse(cause: str) -> None:
    site = _call_site()
    filename, _, lineno = site.rpartition(":")
    source = linecache.getline(filename, int(lineno)).strip() if lineno.isdigit() else ""
    where = f"{site}: {source}" if source else site
    raise ImplicitSyncError(
        f"implicit sync (cause={cause}) inside allow_sync(False) at {where}"
        f" -- {describe_cause(cause)}. Move it out of the step,"
        f" or call lc.sync() explicitly.", cause=cause, site=site)


# -- reading the log ----------------------------------------------------------------

def sync_log() -> list[SyncRecord]:
    """Recent executed syncs, oldest first (bounded)."""
    return list(_log)


def steps() -> int:
    """Full explicit syncs (step barriers) seen so far."""
    return _state["steps"]


def site_stats() -> dict[str, dict]:
    """``{site: {"syncs": {cause: n}, "compiles": n, "reasons": {...}}}``."""
    return {site: {"syncs": dict(s.syncs), "compiles": s.compiles, "reasons": dict(s.reasons)}
            for site, s in _sites.items()}


def reset() -> None:
    _log.clear()
    _sites.clear()
    _state["steps"] = 0


def explain_storm(avals_per_compile: list[tuple], op_counts: set | None = None) -> str:
    """Advice for a site that compiled many times, from the input avals of each compile.

    Compiles are grouped by their number of inputs (an optimizer's state appearing at
    step 2 changes it once); within each group every input is checked for a varying
    dtype, rank or dimension, so a varying batch is named whatever the optimizer."""
    hints = []
    groups: dict[int, list[tuple]] = {}
    for avals in avals_per_compile:
        groups.setdefault(len(avals), []).append(avals)
    if len(groups) > 1:
        hints.append(f"the number of inputs varies ({sorted(groups)}): a value that is an"
                     f" input of some steps only (e.g. optimizer state created at the first"
                     f" step, which costs one extra compile)")
    for _, group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if len(group) > 1:
            hints.extend(h for h in _varying_inputs(group) if h not in hints)
    if len(hints) == (len(groups) > 1):  # nothing but (at most) the input count
        if op_counts and len(op_counts) > len(groups):
            hints.append("the graph changes between steps (Python control flow, a growing"
                         " trace, or a step that is not cut by lc.sync())")
        elif len(groups) == 1:
            hints.append("the graph changes (baked constants or Python values in the trace?"
                         " pass changing scalars as lc.scalar parameters)")
    return "; ".join(hints[:4])


def _varying_inputs(avals_per_compile: list[tuple]) -> list[str]:
    """Per input position: how its aval varies over compiles with the same input count."""
    hints = []
    for i in range(len(avals_per_compile[0])):
        column = [a[i] for a in avals_per_compile]
        if len({c.dtype for c in column}) > 1:
            names = sorted({c.dtype.name for c in column})
            hints.append(f"input {i} dtype varies ({', '.join(names)}) -- cast it once")
            continue
        ranks = {len(c.shape) for c in column}
        if len(ranks) > 1:
            hints.append(f"input {i} rank varies ({sorted(ranks)}) -- reshape to one rank")
            continue
        dims = [d for d in range(ranks.pop()) if len({c.shape[d] for c in column}) > 1]
        if dims:
            seen = sorted({c.shape[dims[0]] for c in column})
            sample = ", ".join(map(str, seen[:5])) + (", ..." if len(seen) > 5 else "")
            which = "dim " + ", ".join(map(str, dims)) if len(dims) > 1 else f"dim {dims[0]}"
            hints.append(f"input {i} shape varies in {which} (sizes {sample})"
                         f" -- pad or bucket it")
    return hints


def summary() -> str:
    """Warnings about recompile storms and frequent syncs ('' when all is well)."""
    lines = []
    for site, s in sorted(_sites.items(), key=lambda kv: -kv[1].compiles):
        if s.compiles >= STORM_COMPILES:
            lines.append(f"  compiled {s.compiles} times at {site}; "
                         f"{explain_storm(s.avals, s.op_counts)}")
    for site, s in sorted(_sites.items(), key=lambda kv: -sum(kv[1].syncs.values())):
        implicit = {c: n for c, n in s.syncs.items() if c not in EXPLICIT_CAUSES}
        total = sum(implicit.values())
        if total >= FREQUENT_SYNCS:
            causes = ", ".join(f"{c} x{n}" for c, n in sorted(implicit.items(), key=lambda x: -x[1]))
            per_step = f" ({total / _state['steps']:.1f} per step)" if _state["steps"] else ""
            lines.append(f"  {total} implicit syncs at {site}{per_step} [{causes}]; each one"
                         f" waits for the device -- keep values on device and read them"
                         f" every N steps")
    return "" if not lines else "lazycore summary:\n" + "\n".join(lines)


def _exit_summary() -> None:
    if settings.debug:
        text = summary()
        if text:
            print(text, file=sys.stderr)


atexit.register(_exit_summary)
