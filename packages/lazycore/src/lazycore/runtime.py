"""Live-value registry, barriers, materialization, async execution, fallback.

``sync()`` cuts the trace: every live pending value becomes an output of one
compiled program; values nobody holds are never computed, so intermediates fuse
away. Execution is asynchronous (JAX dispatch): ``sync`` returns once the program is
enqueued and only host transfers wait. In a full sync, input buffers that no live
value still holds (a parameter being overwritten) are donated to the program.
"""

from __future__ import annotations

import os
import sys
import time
import weakref

import jax
import numpy as np

from . import cache, metrics
from .config import settings
from .ir import LEAF_OPS, Aval, Node
from .lowering import Program, linearize, lower

_live: weakref.WeakSet = weakref.WeakSet()
_internal_paths: list[str] = [os.path.dirname(os.path.abspath(__file__))]
_site_history: dict[str, Program] = {}
_device = None


def register(tensor) -> None:
    _live.add(tensor)


def register_internal_path(path: str) -> None:
    """Frames under ``path`` are skipped when naming the user code that caused a sync."""
    path = os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else path
    if path not in _internal_paths:
        _internal_paths.append(path)


def live_tensors() -> list:
    return list(_live)


def pending_tensors() -> list:
    return [t for t in list(_live) if t.node.op not in LEAF_OPS]


# -- leaves ------------------------------------------------------------------------

def data_node(array) -> Node:
    return Node("data", (), (), Aval(tuple(array.shape), np.dtype(array.dtype)), array)


def asarray(value, dtype=None):
    """Host data (NumPy array, scalar, ``jax.Array``) -> a device-data Tensor."""
    from .dtypes import canonical
    from .tensor import Tensor

    if isinstance(value, jax.Array) and (dtype is None or np.dtype(dtype) == value.dtype):
        array = value
    else:
        host = np.asarray(value, dtype=None if dtype is None else canonical(dtype))
        canonical(host.dtype)
        array = jax.device_put(host, default_device())
    return Tensor(data_node(array))


def default_device():
    global _device
    if _device is None:
        _device = jax.devices()[0]
    return _device


# -- barriers ----------------------------------------------------------------------

def sync(tensors=None, *, wait: bool = False, cause: str = "explicit") -> None:
    """Compute pending values: all live ones (``tensors=None``) or just ``tensors``."""
    metrics.inc("syncs")
    metrics.inc(f"sync::{cause}")
    full = tensors is None
    targets = pending_tensors() if full else [t for t in tensors if t.node.op not in LEAF_OPS]
    if not targets:
        return
    roots: list[Node] = []
    seen: set[int] = set()
    for t in targets:
        if id(t.node) not in seen:
            seen.add(id(t.node))
            roots.append(t.node)
    program = linearize(roots)
    donate = _donatable(program, targets) if full and settings.donate else ()
    executable = _executable(program, donate, cause)
    args = [n.value for n in program.inputs]
    start = time.perf_counter()
    outputs = executable(*args)
    metrics.add_time("execute", time.perf_counter() - start)
    metrics.inc("executions")
    results = {id(r): data_node(o) for r, o in zip(roots, outputs, strict=True)}
    for t in targets:
        t.node = results[id(t.node)]
    if wait:
        jax.block_until_ready(outputs)


mark_step = sync


def wait() -> None:
    """Block until every live value has been computed."""
    arrays = [t.node.value for t in list(_live) if t.node.op == "data"]
    jax.block_until_ready(arrays)


def _donatable(program: Program, targets) -> tuple[int, ...]:
    """Inputs no live handle holds whose aval an output can reuse."""
    held = {id(t.node) for t in list(_live)}
    out_avals: dict = {}
    for pos in program.output_positions:
        aval = program.nodes[pos].aval
        out_avals[aval] = out_avals.get(aval, 0) + 1
    donate = []
    for i, node in enumerate(program.inputs):
        if node.op == "data" and id(node) not in held and out_avals.get(node.aval, 0) > 0:
            out_avals[node.aval] -= 1
            donate.append(i)
    return tuple(donate)


def _executable(program: Program, donate: tuple[int, ...], cause: str):
    key = (program.key, donate)
    site = _call_site()
    executable = cache.lookup(key)
    if executable is not None:
        _site_history[site] = program
        metrics.inc("cache_hits")
        _log(cause, site, program, "cache hit")
        return executable
    metrics.inc("cache_misses")
    previous = _site_history.get(site)
    reason = explain_change(previous, program) if previous is not None else "first compile"
    if previous is not None:
        metrics.note_recompile(site, reason)
    _site_history[site] = program
    start = time.perf_counter()
    lowered = lower(program, donate)
    lowered_at = time.perf_counter()
    executable = lowered.compile()
    done = time.perf_counter()
    metrics.add_time("lower", lowered_at - start)
    metrics.add_time("compile", done - lowered_at)
    metrics.inc("compiles")
    cache.store(key, executable)
    _log(cause, site, program, f"compiled in {(done - start) * 1e3:.1f} ms ({reason})")
    return executable


def explain_change(previous: Program, program: Program) -> str:
    """What differs between two programs compiled at the same call site."""
    old, new = previous.input_avals(), program.input_avals()
    old_ops = [k[0] for k, n in zip(previous.key[0], previous.nodes, strict=True) if not n.is_leaf]
    new_ops = [k[0] for k, n in zip(program.key[0], program.nodes, strict=True) if not n.is_leaf]
    changes = []
    if len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                what = "shape" if a.dtype == b.dtype else "dtype" if a.shape == b.shape else "aval"
                changes.append(f"input {i} {what} {a} -> {b}")
    if old_ops != new_ops or len(old) != len(new):
        if not changes:
            changes.append(f"graph changed ({len(old_ops)} ops -> {len(new_ops)} ops,"
                           f" {len(old)} inputs -> {len(new)} inputs)")
        elif len(old_ops) != len(new_ops):
            changes.append(f"graph changed ({len(old_ops)} ops -> {len(new_ops)} ops)")
    if not changes:
        changes.append("graph changed (same ops, different sharing or constants)")
    return "; ".join(changes[:4]) + (" ..." if len(changes) > 4 else "")


def _call_site() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not any(filename.startswith(p) for p in _internal_paths):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def _log(cause: str, site: str, program: Program, what: str) -> None:
    if settings.debug:
        print(f"[lazycore] sync cause={cause} site={site} outputs={len(program.output_positions)}"
              f" nodes={len(program.nodes)} graph={hash(program.key) & 0xFFFFFFFF:08x}: {what}",
              file=sys.stderr)


# -- observation -------------------------------------------------------------------

def materialize(tensor):
    """The ``jax.Array`` of a tensor, computing it (and only what it needs) if pending."""
    node = tensor.node
    if node.op not in LEAF_OPS:
        sync([tensor], cause="materialize")
        node = tensor.node
    if node.op != "data":
        tensor.node = data_node(jax.device_put(np.asarray(node.value), default_device()))
    return tensor.node.value


def to_numpy(tensor) -> np.ndarray:
    """A writable host copy of the value; counts a host transfer."""
    node = tensor.node
    if node.op in ("param", "const"):
        return np.array(node.value)
    array = materialize(tensor)
    start = time.perf_counter()
    host = np.array(array)
    metrics.add_time("transfer", time.perf_counter() - start)
    metrics.inc("host_transfers")
    return host


def to_numpy_many(tensors, cause: str = "materialize") -> list[np.ndarray]:
    """Host copies of several values with one sync for all pending ones."""
    pending = [t for t in tensors if t.node.op not in LEAF_OPS]
    if pending:
        sync(pending, cause=cause)
    return [to_numpy(t) for t in tensors]


# -- fallback ----------------------------------------------------------------------

def fallback(name: str, fn, tensors, *args, **kwargs):
    """Run ``fn`` on host copies of ``tensors`` (the host framework does the work) and
    bring NumPy results back as device data. Counted as ``fallback::<name>``."""
    from .tensor import Tensor

    metrics.inc("fallbacks")
    metrics.inc(f"fallback::{name}")
    host = to_numpy_many(list(tensors))
    result = fn(*host, *args, **kwargs)
    return jax.tree_util.tree_map(
        lambda v: asarray(v) if isinstance(v, np.ndarray | np.generic) else v, result,
        is_leaf=lambda v: isinstance(v, Tensor))
