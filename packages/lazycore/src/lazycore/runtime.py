"""Live-value registry, barriers, materialization, async execution, fallback.

``sync()`` cuts the trace: every live pending value becomes an output of one
compiled program; values nobody holds are never computed, so intermediates fuse
away. Execution is asynchronous (JAX dispatch): ``sync`` returns once the program is
enqueued and only host transfers wait. In a full sync, input buffers that no live
value still holds (a parameter being overwritten) are donated to the program.
"""

from __future__ import annotations

import operator
import os
import threading
import time
import weakref
from typing import NamedTuple

import jax
import numpy as np

from . import (
    cache,
    checks,
    cursor,
    diagnostics,
    interpreter,
    leaks,
    metrics,
    sharding,
    steps,
    tiers,
)
from .callsite import _call_site, register_internal_path  # noqa: F401 (lc.register_internal_path)
from .config import settings
from .errors import CaptureError, ExecutionError
from .ir import LEAF_OPS, Aval, Node, host_value, independent_of, leaf
from .lowering import Program, arg_layout, from_recording, layout_args, linearize
from .tensor import Tensor, _live, _snapshot, live_tensors  # noqa: F401 (lc.runtime.live_tensors)

# ``_live``: the live handles (``tensor.py`` keeps the set; a sync reads it)
_lock = threading.RLock()  # one sync at a time; tracing itself needs no lock


class _Seen(NamedTuple):
    """A site's last program without its nodes (the recompile reasons' "before"): holding
    the program kept the last step's graph and buffers alive until the next sync there,
    which then freed them before its run, not after."""

    key: tuple
    placement: object
    avals: tuple


_site_history: dict[str, _Seen] = {}
_device = None


class BufferHold:
    """While one is alive, syncs donate no buffers: its owner keeps graph nodes outside
    live handles (e.g. a gradient tape's recorded graph) whose leaves must stay valid."""

    __slots__ = ("__weakref__",)


_holds: weakref.WeakSet = weakref.WeakSet()


def hold_buffers() -> BufferHold:
    """A token that suspends buffer donation until it is dropped."""
    token = BufferHold()
    _holds.add(token)
    return token


# -- leaves ------------------------------------------------------------------------

def data_node(array) -> Node:
    return Node("data", (), (), Aval(tuple(array.shape), np.dtype(array.dtype)), array)


def asarray(value, dtype=None):
    """Host data (NumPy array, scalar, ``jax.Array``) -> a device-data Tensor."""
    from .dtypes import canonical

    if isinstance(value, jax.Array) and (dtype is None or np.dtype(dtype) == value.dtype):
        array = value
        if len(array.sharding.device_set) > 1:
            sharding.activate()  # a sharded array from outside: syncs must plan placement
    else:
        # always a private copy: on CPU, device_put may alias the NumPy buffer, and a lazy
        # value must neither see later writes by the user nor (via donation) make them
        host = np.array(value, dtype=None if dtype is None else canonical(dtype), copy=True)
        canonical(host.dtype)
        array = jax.device_put(host, default_device())
    return Tensor(data_node(array))


def set_cpu_dispatch(mode: str, chosen: bool = False) -> None:
    """JAX's CPU dispatch (``settings.cpu_dispatch``), while its CPU client does not exist
    yet. At import (``chosen`` false) a choice made through JAX's own environment
    variable is kept; ``configure(cpu_dispatch=...)`` after the client exists raises."""
    from jax._src import xla_bridge

    if not chosen and "JAX_CPU_ENABLE_ASYNC_DISPATCH" in os.environ:
        return
    want = mode == "async"
    if xla_bridge.backends_are_initialized():
        if chosen and xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value != want:
            raise RuntimeError(f"cpu_dispatch={mode!r}: JAX's CPU client already exists (it"
                               " reads the setting once); set LAZYCORE_CPU_DISPATCH or call"
                               " configure() before the first computation")
        return
    jax.config.update("jax_cpu_enable_async_dispatch", want)


def default_device():
    global _device
    if _device is None:
        _device = jax.devices()[0]
    return _device


# -- barriers ----------------------------------------------------------------------

def sync(tensors=None, *, wait: bool = False, cause: str = "explicit") -> None:
    """Compute pending values: all live ones (``tensors=None``) or just ``tensors``.

    If XLA fails to compile or run the program, no value is lost: each pending value
    is retried on its own, those that do not depend on the failing op are computed,
    those that do keep the error (raised again when observed), and the first error is
    raised here as ``ExecutionError`` naming the op and the user's line."""
    with _lock:
        metrics.inc("syncs")
        metrics.inc(f"sync::{cause}")
        full = tensors is None
        diagnostics.before_sync(cause, full)  # allow_sync guard, profile step marks
        if full:
            _reset_trace_limit()
        live = _snapshot()  # once per sync: the step model, donation and what is left
        pending = [t for t in live if t.node.op not in LEAF_OPS]
        try:
            targets = pending if full else [t for t in tensors if t.node.op not in LEAF_OPS]
            if not targets and not checks.pending():
                if not pending:  # every node of the epoch was dropped: let them go
                    cursor.restart()
                return
            whole = full
            if not full and cause not in diagnostics.STEP_CAUSES:  # an observation
                targets, whole = steps.observation_targets(targets, pending, settings.observe)
            try:
                outputs = _run(targets, whole, cause, live, observed=tensors or [])
            except ExecutionError as error:
                if len(targets) == 1:
                    _poison(targets[0], error)
                    raise
                failures = _run_each(targets, cause)
                raise failures[0] from None
            if not full and not any(t.node.op not in LEAF_OPS for t in pending):
                _reset_trace_limit()  # nothing left pending: the trace starts afresh
        finally:
            # a raised error's traceback keeps this frame: it must not keep every
            # pending handle alive (a later sync would compute them)
            pending = live = None
        if wait:
            jax.block_until_ready(outputs)


def _run(targets, full: bool, cause: str, live=None, observed=None):
    targets = sorted(targets, key=_creation_order)  # the live set is unordered; keys must not be
    roots: list[Node] = list(dict.fromkeys([t.node for t in targets]))  # by identity
    batch = checks.take(roots)  # pending data checks: one extra output, read after the run
    # the trace cursor: a step that repeats the last one takes its program without a walk
    # (only if no other thread may have traced into the epoch)
    alone = _alone()
    found = cursor.take(roots) if alone else None
    taken = found is not None
    program = from_recording(*found, roots) if taken else linearize(roots)
    failed = [n for n in program.inputs if n.op == "failed"]
    keep = _without_leaked(targets, failed, observed) if failed else None
    if keep is not None:  # the program never runs: its checks wait, the epoch goes on
        checks.PENDING[:0] = batch or ()
        return _run(keep, full, cause, live) if keep else ()
    cursor.close(roots, program, taken)
    site = _call_site()
    if leaks.marks:  # ops recorded in an lc.data_loading()/logging_region() region
        leaks.check(program, site)
    if failed:
        raise failed[0].value
    # another thread may be tracing on top of a buffer we would donate: only donate alone
    donate = (_donatable(program, roots, live)
              if full and settings.donate and alone
              and not _holds
              and not diagnostics.verifying()  # verify re-reads the inputs after the run
              else ())
    try:
        placement = sharding.plan(program)  # None unless a mesh is involved
        if placement is None:
            donate = tiers.donation(program, donate, site)
        key = (program.key, donate)
        if placement is None and tiers.interpret_now(program, key, donate, placement, site):
            start = time.perf_counter()
            outputs = interpreter.run(program)  # tier 0: no compile (lazycore.tiers)
            tiers.record_interpreted(key, time.perf_counter() - start)
            metrics.inc("interpreted_executions")
            first = tiers.runs(key) <= 1  # a miss the first time (tier compile compiles)
            diagnostics.on_sync(cause, site, program, hit=not first, detail=_INTERPRETED[first])
        else:
            executable = _executable(program, donate, cause, site, placement)
            args = (placement.args if placement
                    else layout_args(arg_layout(program), program.inputs))
            start = time.perf_counter()
            outputs = executable(*args)
    except ExecutionError:
        raise
    except Exception as e:  # noqa: BLE001 - any XLA/JAX failure becomes ExecutionError
        raise ExecutionError(f"{_describe(e)} (sync at {site}, cause {cause})",
                             op=getattr(e, "lazy_op", None)) from e
    metrics.add_time("execute", time.perf_counter() - start)
    metrics.inc("executions")
    if diagnostics.verifying():  # lc.verify(): the op-by-op eager check of this program
        diagnostics.verify_program(program, outputs, site, cause)
    # each output's aval is its root's (the rules and lowerings agree: tests/core checks
    # every op), so no jax.Array shape/dtype queries here
    leaf_hashes = _plan(program, roots)[2]
    results = {r: leaf("data", r.aval, value, h)  # by identity
               for r, value, h in zip(roots, outputs, leaf_hashes, strict=True)}
    new_nodes = [results[t.node] for t in targets]  # a handle may be listed twice
    for t, node in zip(targets, new_nodes, strict=True):
        t.node = node
    checks.verify(batch, outputs, roots, targets)
    return outputs


_PLANS: dict = {}  # program key -> ``_plan``


def _plan(program: Program, roots: list[Node]) -> tuple:
    """What a program's key determines about its inputs and outputs, memoized (hashing
    an Aval hashes its dtype: ~1 us, hundreds per step): the data inputs an output of
    the same aval could reuse, as (input index, output aval group) pairs; each group's
    size; the outputs' data-leaf hashes (``Node.__init__``'s); the inputs' avals."""
    plan = _PLANS.get(program.key)
    if plan is None:
        groups: dict = {}
        sizes: list = []
        for root in roots:
            group = groups.setdefault(root.aval, len(groups))
            if group == len(sizes):
                sizes.append(0)
            sizes[group] += 1
        slots = tuple((i, groups[n.aval]) for i, n in enumerate(program.inputs)
                      if n.op == "data" and n.aval in groups)
        if len(_PLANS) >= 256:
            _PLANS.clear()
        plan = _PLANS[program.key] = (slots, tuple(sizes), [hash(("data", r.aval)) for r in roots],
                                      tuple(program.input_avals()))
    return plan


def _alone() -> bool:
    """No other thread may be tracing: the only threads besides this one are lazycore's
    compile thread, device loaders and known monitors (``_QUIET_THREADS``)."""
    n = threading.active_count()
    return n == 1 or n - tiers.threads() - sum(
        1 for t in threading.enumerate() if t.name in _QUIET_THREADS) == 1


# threads known never to trace: ``DeviceLoader``s only copy fresh host batches to the
# device (no tracing on top of a buffer a program could consume); tqdm's monitor, which
# importing ``transformers`` starts, only polls progress bars (counted, it turned every
# Hugging Face step's sync into a walk without donation)
_QUIET_THREADS = frozenset({"lazycore-device-loader", "tqdm_monitor"})


_creation_order = operator.attrgetter("seq")


def _without_leaked(targets, failed, observed):
    """``targets`` less the values computed from a leaked capture placeholder: made
    inside a captured graph and kept after it (TF's out-of-scope symbolic tensors, a
    Keras layer's activity loss), such a value raises when observed and never stops
    others from being computed. None where an observed value needs a failed input, or
    a failure is of another kind (``observed`` None: every target is observed)."""
    if observed is None or not all(isinstance(n.value, CaptureError) for n in failed):
        return None
    clean = independent_of([t.node for t in targets], failed)
    needed = any(id(t.node) not in clean for t in observed if t.node.op not in LEAF_OPS)
    return None if needed else [t for t in targets if id(t.node) in clean]


def _run_each(targets, cause: str) -> list:
    """After a failed program: compute each value on its own, keep every failure."""
    failures = []
    for t in targets:
        if t.node.op in LEAF_OPS and t.node.op != "failed":
            continue
        try:
            _run([t], False, cause, observed=[])  # a leaked capture value is skipped
        except ExecutionError as error:
            _poison(t, error)
            failures.append(error)
    return failures


def _poison(tensor, error) -> None:
    """The value cannot be computed: keep its error as a leaf, raised when observed."""
    tensor.node = Node("failed", (), (), tensor.node.aval, error)


def _describe(e: Exception) -> str:
    text = str(e).strip().splitlines()
    first = text[0] if text else type(e).__name__
    op = getattr(e, "lazy_op", None)
    where = f"op {op!r} failed: " if op else ""
    return f"{where}{type(e).__name__}: {first}"


def _reset_trace_limit() -> None:
    metrics._pending_limit[0] = metrics._trace_time[0] + settings.max_pending_ops


mark_step = sync


def wait() -> None:
    """Block until every live value has been computed."""
    jax.block_until_ready([t.node.value for t in _snapshot() if t.node.op == "data"])


def _donatable(program: Program, roots: list[Node], live=None) -> tuple[int, ...]:
    """Inputs no live handle (``live``: the sync's snapshot) holds whose aval an output
    (a root) can reuse."""
    held = {t.node for t in (_snapshot() if live is None else live)}  # nodes: by identity
    slots, sizes = _plan(program, roots)[:2]
    left = list(sizes)
    inputs = program.inputs
    donate = []
    for i, group in slots:
        if left[group] and inputs[i] not in held:
            left[group] -= 1
            donate.append(i)
    return tuple(donate)


def _executable(program: Program, donate: tuple[int, ...], cause: str, site: str,
                placement=None):
    key = (program.key, donate) if placement is None else (program.key, donate, placement.key)
    program.placement = placement  # sharding.explain_change reads it
    seen = _Seen(program.key, placement, _plan(program, program.roots)[3])
    executable = cache.lookup(key)
    if executable is not None:
        _site_history[site] = seen
        metrics.inc("cache_hits")
        _log(cause, site, program, "cache hit")
        return executable
    metrics.inc("cache_misses")
    previous = _site_history.get(site)
    reason = explain_change(previous, program) if previous is not None else "first compile"
    if previous is not None and previous.key == program.key:  # only the cache key's extras differ
        reason = "same graph, different buffer donation (which inputs are overwritten in place)"
    if previous is not None:
        reason = sharding.explain_change(previous, program) or reason
        metrics.note_recompile(site, reason)
    _site_history[site] = seen
    digest = None
    if settings.persistent_cache_dir:
        start = time.perf_counter()
        digest = cache.program_digest(program, donate, placement.key if placement else None)
        executable = cache.load(digest, None if placement else [default_device()])
        if executable is not None:
            metrics.add_time("load", time.perf_counter() - start)
            metrics.inc("persistent_cache_hits")
            cache.store(key, executable)
            _log(cause, site, program, "loaded from the persistent cache", reason)
            return executable
    executable, seconds = tiers.compile_now(program, key, donate, site, digest,
                                            placement.shardings if placement else None)
    _log(cause, site, program, f"compiled in {seconds * 1e3:.1f} ms ({reason})", reason)
    return executable


def explain_change(previous: _Seen, program: Program) -> str:
    """What differs between the program last run at a call site and a new one there."""
    old, new = previous.avals, program.input_avals()
    old_ops, new_ops = ([k[0] for k in p.key[0] if k[1]] for p in (previous, program))  # ops
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


_INTERPRETED = ("interpreted", "interpreted, not compiled (tier auto: compiled in the"
                " background if it runs again)")  # the sync log's detail, by first run


def _log(cause: str, site: str, program: Program, what: str, reason: str | None = None) -> None:
    """Record the sync (diagnostics: sync log, storm summary; printed when debugging)."""
    diagnostics.on_sync(cause, site, program, hit=reason is None, reason=reason, detail=what)


# -- observation -------------------------------------------------------------------

def materialize(tensor, cause: str | None = None):
    """The ``jax.Array`` of a tensor, computing it (and only what it needs) if pending.
    ``cause``: what the user did (``diagnostics.observing`` around it wins)."""
    node = tensor.node
    if node.op not in LEAF_OPS:
        sync([tensor], cause=diagnostics.observed_cause(cause))
        node = tensor.node
    if node.op == "failed":
        raise node.value
    if node.op != "data":
        tensor.node = data_node(jax.device_put(host_value(node), default_device()))
    return tensor.node.value


def to_numpy(tensor, cause: str | None = None) -> np.ndarray:
    """A writable host copy of the value; counts a host transfer (``cause``: see
    ``materialize``)."""
    node = tensor.node
    if node.op in ("param", "const"):
        return np.array(host_value(node))
    if node.op == "failed":
        raise node.value
    cause = diagnostics.observed_cause(cause)
    diagnostics.before_host_transfer(cause)  # allow_sync(False) guard
    array = materialize(tensor, cause)
    start = time.perf_counter()
    host = np.array(array)
    metrics.add_time("transfer", time.perf_counter() - start)
    metrics.inc("host_transfers")
    return host


def to_numpy_many(tensors, cause: str | None = None) -> list[np.ndarray]:
    """Host copies of several values with one sync for all pending ones."""
    cause = diagnostics.observed_cause(cause)
    pending = [t for t in tensors if t.node.op not in LEAF_OPS]
    if pending:
        sync(pending, cause=cause)
    return [to_numpy(t, cause) for t in tensors]


# -- fallback ----------------------------------------------------------------------

def fallback(name: str, fn, tensors, *args, **kwargs):
    """Run ``fn`` on host copies of ``tensors`` (the host framework does the work) and
    bring NumPy results back as device data. Counted as ``fallback::<name>``."""
    metrics.inc("fallbacks")
    metrics.inc(f"fallback::{name}")
    result = fn(*to_numpy_many(list(tensors), cause=f"fallback:{name}"), *args, **kwargs)
    return jax.tree_util.tree_map(
        lambda v: asarray(v) if isinstance(v, np.ndarray | np.generic) else v, result,
        is_leaf=lambda v: isinstance(v, Tensor))


_reset_trace_limit()
if "LAZYCORE_CPU_DISPATCH" in os.environ:  # else JAX's state stands (a user's own
    set_cpu_dispatch(settings.cpu_dispatch)  # jax.config choice; its default is async)
