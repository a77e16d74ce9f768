"""Whole-function capture: a ``tf.function`` on lazy values records ONE node per call.

Tracing a step through TensorFlow's graph (``_graph``) is correct but runs it in TF's
graph runtime, op by op. Instead, when a ``tf.function`` is called with lazy inputs (or
while ``ltf.Variable``s exist, which its body may read), its Python function is traced
once per input signature onto ``lazycore`` placeholder leaves and cut into a
``lazycore.subprogram.Subprogram``; later calls record one ``call`` node over the
current inputs and variable values, which fuses with the rest of the step into one XLA
program.

* The signature follows ``tf.function``: tensors (lazy, eager, NumPy) by shape and
  dtype, Python values by value, containers by structure; an ``ltf.Variable`` argument
  by identity (TF: by spec -- a different variable of the same spec traces again here).
* Every live ``ltf.Variable`` is a placeholder while the body is traced (``_Trace``);
  those the program reads are inputs, those it assigns are outputs written back after
  each call; variables the body creates (optimizer slots) are placeholders from birth.
* ``ltf.GradientTape`` inside the body records on the placeholders; a tape outside the
  call watches the variables the program reads and differentiates through the call.
* Random draws get fresh keys from their own stream every call.
* The body's Python scalars are constants of its program, as TF bakes them (XLA folds
  them), unless a Python number is an argument: each value traces anew, and with the
  scalars as parameters every such trace is one program, compiled once.
* Python side effects run at trace time only, as in TF.
* If the body needs a placeholder's value (a Python ``if`` on a tensor, an API that
  runs eagerly), runs a stateful TF op eagerly (``tf.random.normal`` on host values, a
  ``tf.Variable`` read: TF's op callback sees it), raises, or touches nothing lazy, that
  signature falls back to TensorFlow's own ``tf.function`` path (``_graph``), counted as
  ``tf_function_fallback`` and logged. Never a stale value.
"""

from __future__ import annotations

import gc
import logging
import os
import weakref

import numpy as np
import tensorflow as tf
from tensorflow.python.eager.polymorphic_function import polymorphic_function as _pf
from tensorflow.python.framework import op_callbacks, op_def_registry, ops, random_seed

import lazycore as lc
from lazycore.subprogram import CaptureError

from . import _state
from ._convert import to_core
from ._dispatch import wrap
from ._graph import building
from ._tensor import LazyTensor, handle, is_lazy_class, new
from ._variable import Variable

log = logging.getLogger("lazy_tf")
# every ltf.Variable alive (weakly): any of them may be read by a traced body
LIVE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_ORIGINAL_CALL = _pf.Function.__call__
_FALLBACK = "fallback"   # a signature run by TensorFlow's tf.function
_PURE = "pure"           # a signature with nothing lazy: TensorFlow's tf.function
_UNCAPTURABLE = object()
# False: every tf.function runs through TensorFlow's graph (``_graph``), as before
# capture existed (``LAZY_TF_CAPTURE=0``; tests run both paths)
ENABLED = [os.environ.get("LAZY_TF_CAPTURE", "1") != "0"]


# -- the input signature (tf.function's retracing rules) ------------------------------
def _flatten(x, flat: list, sig: list) -> None:
    cls = x.__class__
    if cls is tuple or cls is list:
        sig.append((cls, len(x)))
        for e in x:
            _flatten(e, flat, sig)
    elif cls is dict:
        keys = sorted(x)
        sig.append((dict, tuple(keys)))
        for k in keys:
            _flatten(x[k], flat, sig)
    elif cls is LazyTensor:  # the usual leaf, without the ABC checks below
        flat.append(x)
        sig.append(("tensor", x.__dict__["_h"].node.aval))
    elif isinstance(x, tuple) and hasattr(x, "_fields") or cls is tf.IndexedSlices:
        sig.append((cls, len(x) if cls is not tf.IndexedSlices else 3))
        for e in x if cls is not tf.IndexedSlices else (x.values, x.indices, x.dense_shape):
            _flatten(e, flat, sig)
    else:
        flat.append(x)
        sig.append(_leaf_signature(x, cls))


def _leaf_signature(x, cls):
    if is_lazy_class(cls):
        if isinstance(x, Variable):
            return ("variable", id(x))
        return ("tensor", x.__dict__["_h"].node.aval)
    if isinstance(x, ops.EagerTensor):
        return ("tensor", tuple(x.shape), x.dtype)
    if cls is np.ndarray:
        return ("tensor", x.shape, x.dtype)
    if isinstance(x, tf.Variable | tf.Tensor | tf.__internal__.CompositeTensor |
                  tf.TypeSpec) or getattr(x, "__tf_tracing_type__", None) is not None:
        return _UNCAPTURABLE   # TF's own values (iterators, Keras variables, specs)
    try:
        hash(x)
    except TypeError:
        return _UNCAPTURABLE
    return (cls, x)


def _has_lazy(flat) -> bool:
    return any(is_lazy_class(x.__class__) for x in flat)


def _pack(structure, flat: list):
    it = iter(flat)

    def build(x):
        cls = x.__class__
        if cls is tuple or cls is list:
            return cls(build(e) for e in x)
        if cls is dict:
            return {k: build(x[k]) for k in sorted(x)}
        if isinstance(x, tuple) and hasattr(x, "_fields") or cls is tf.IndexedSlices:
            return cls(*[build(e) for e in (x if cls is not tf.IndexedSlices else
                                            (x.values, x.indices, x.dense_shape))])
        return next(it)
    return build(structure)


# -- tracing ---------------------------------------------------------------------------
class _Trace:
    """The state of one capture: each variable's value before it, and its placeholder."""

    def __init__(self):
        self.vars: dict[int, tuple] = {}   # id(var) -> (var, node before, placeholder)
        self.stateful: list[str] = []      # stateful TF ops run eagerly meanwhile
        self.kernels: dict = {}            # id(rng_key node) -> seeded TF draw's kernel

    def eager_op(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        """TF's op callback: a stateful op run eagerly (``tf.random.normal`` on host
        values, a ``tf.Variable`` read) computed a value the next call would need anew."""
        if graph is None:
            op_def = op_def_registry.get(op_type)
            if op_def is None or op_def.is_stateful:
                self.stateful.append(op_type)

    def adopt(self, var) -> None:
        """``var`` reads a placeholder until the trace ends (``restore``)."""
        if id(var) in self.vars:
            return
        h = handle(var)
        ph = lc.subprogram.placeholder(h.node.aval, f"variable {var.name}")
        self.vars[id(var)] = (var, h.node, ph)
        h.node = ph.node

    def restore(self) -> None:
        for var, node, _ in self.vars.values():
            var.__dict__["_h"].node = node


class _Stream:
    """Where a captured draw takes its fresh key each call: its lazy_tf random stream
    (looked up per call, so ``ltf.random.set_seed`` restarts it as for lazy draws)."""

    def __init__(self, op_seed):
        self.op_seed = op_seed

    def next_key(self):
        from ._api_random import next_key

        return next_key(self.op_seed)


def _stream_of(node) -> _Stream:
    from ._api_random import _STREAMS

    if id(node) in _state.capture[0].kernels:
        return _state.capture[0].kernels[id(node)]
    seed = int(lc.ir.host_value(node.operands[0]))
    for (_, op_seed), gen in list(_STREAMS.items()):
        if gen.seed == seed:
            return _Stream(op_seed)
    raise CaptureError("a random draw of the traced function comes from no ltf.random "
                       "stream")


def _stream_counters() -> dict:
    from ._api_random import _STREAMS

    return {key: gen.counter for key, gen in _STREAMS.items()}


def _rewind(counters: dict) -> None:
    """The trace's draws are not the first call's: every stream continues where it was
    (the first call draws what an uncaptured call would)."""
    from ._api_random import _STREAMS

    for key, gen in _STREAMS.items():
        gen.counter = counters.get(key, 0)


def reachable(roots: list, targets: set) -> set:
    """Ids of the ``targets`` nodes the ``roots`` depend on."""
    seen, found = set(), set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in targets:
            found.add(id(node))
            continue
        stack.extend(node.operands)
    return found


class _Capture:
    """One signature's sub-program and how to feed it and unpack its results."""

    def __init__(self, fn, structure, flat: list, name: str, lazy_args: bool):
        tr = _Trace()
        args, feeds, holders = [], [], []
        for i, x in enumerate(flat):
            if isinstance(x, Variable):
                tr.adopt(x)
                args.append(x)
            elif is_lazy_class(x.__class__) or isinstance(x, ops.EagerTensor | np.ndarray):
                aval = to_core(x).node.aval if not is_lazy_class(x.__class__) else \
                    x.__dict__["_h"].node.aval
                ph = lc.subprogram.placeholder(aval, f"argument {i}")
                holders.append(ph)
                feeds.append(("arg", i, ph.node))
                args.append(new(ph))
            else:
                args.append(x)
        for var in list(LIVE.values()):
            tr.adopt(var)
        tapes, stopped = _state.active_tapes[:], _state.stopped[0]
        _state.active_tapes.clear()
        _state.stopped[0] = 0
        outer, _state.capture[0] = _state.capture[0], tr
        # Python scalars are constants of the trace (TF bakes them too): literals XLA
        # folds (an epsilon, a mean's 1/n), never a recompile (the trace is kept). Not
        # when a Python number is an argument: each value traces anew (as in TF), and
        # with parameters every such trace is the same program, compiled once
        bake, lc.settings.bake_scalars = lc.settings.bake_scalars, not any(
            type(x) in (int, float) for x in flat)
        counters = _stream_counters()
        op_callbacks.add_op_callback(tr.eager_op)
        try:
            with lc.subprogram.capturing() as captured:
                f_args, f_kwargs = _pack(structure, args)
                out = fn(*f_args, **f_kwargs)
            if tr.stateful:  # its result would be a constant of the capture
                raise CaptureError(f"stateful TensorFlow op {tr.stateful[0]} ran eagerly "
                                   "while a tf.function was captured")
            self._build(tr, out, feeds, holders, captured, name, lazy_args)
        finally:
            op_callbacks.remove_op_callback(tr.eager_op)
            _rewind(counters)
            _state.capture[0] = outer
            lc.settings.bake_scalars = bake
            _state.active_tapes[:] = tapes
            _state.stopped[0] = stopped
            tr.restore()

    def _build(self, tr, out, feeds, holders, captured, name, lazy_args):
        placeholders = [ph for _, _, ph in tr.vars.values()] + holders
        for ph in placeholders:  # a value was needed, even if the error was caught
            if ph.node.value.__traceback__ is not None:
                raise ph.node.value
        out_flat, out_sig = [], []
        _flatten(out, out_flat, out_sig)
        self.out_structure = _pack(out, [None] * len(out_flat))  # no traced values kept
        plan, results = [], []
        for o in out_flat:
            if is_lazy_class(o.__class__) and not isinstance(o, Variable):
                plan.append(("result", len(results)))
                results.append(lc.Tensor(o.__dict__["_h"].node))
            else:
                plan.append(("object", o))
        self.writes = []  # (variable, result index)
        for var, _, ph in tr.vars.values():
            if var.__dict__["_h"].node is not ph.node:
                self.writes.append((var, len(results)))
                results.append(lc.Tensor(var.__dict__["_h"].node))
        roots = [t.node for t in results] + [c.flag.node for c in captured.checks]
        used = reachable(roots, {id(ph.node) for ph in placeholders})
        self.feeds = [(kind, i) for kind, i, node in feeds if id(node) in used]
        inputs = [lc.Tensor(node) for _, _, node in feeds if id(node) in used]
        for var, _, ph in tr.vars.values():
            if id(ph.node) in used:
                self.feeds.append(("variable", var))
                inputs.append(lc.Tensor(ph.node))
        if not results or (not self.writes and not any(k == "variable" for k, _ in self.feeds)
                           and not lazy_args):
            self.program = None  # nothing lazy: TensorFlow's own function
            return
        self.plan = plan
        self.program = lc.subprogram.Subprogram(inputs, results, _stream_of, captured.checks,
                                                site=f"tf.function {name}")

    def run(self, flat: list):
        # (a tape outside the call watches the variables read: ``to_core`` tells it)
        inputs = [to_core(flat[i] if kind == "arg" else i) for kind, i in self.feeds]
        values = self.program(*inputs)
        for var, j in self.writes:
            handle(var).assign(values[j])
        return _pack(self.out_structure, [wrap(values[v]) if kind == "result" else v
                                          for kind, v in self.plan])


def _capture_for(function, flat, sig, structure):
    """The signature's capture (traced now if new), or a marker for TF's path."""
    caps = function.__dict__.setdefault("_lazy_captures", {})
    key = tuple(sig)
    cap = caps.get(key)
    if cap is not None:
        return cap
    name = getattr(function, "_name", "?")
    lazy_args = _has_lazy(flat)
    try:
        cap = _Capture(function._python_function, structure, flat, name, lazy_args)
    except Exception as error:  # noqa: BLE001 - TF's path decides (and raises TF's error)
        cap = _FALLBACK
        if lazy_args or _caused_by_capture(error):
            lc.metrics.inc("tf_function_fallback")
            log.info("tf.function %s: whole-function capture fell back to TensorFlow's "
                     "graph for this signature (%s: %s)", name, type(error).__name__, error)
    if cap is _FALLBACK:  # the failed trace's values sit in reference cycles (errors'
        gc.collect()      # tracebacks): freed now, before the next sync would run them
    if cap is not _FALLBACK and cap.program is None:
        cap = _PURE
    else:
        lc.metrics.inc("tf_function_capture")
        log.debug("tf.function %s: captured signature %s", name, key)
    caps[key] = cap
    return cap


def _caused_by_capture(error) -> bool:
    while error is not None:
        if isinstance(error, CaptureError):
            return True
        error = error.__cause__ or error.__context__
    return False


def call(function, args, kwargs):
    """``tf.function``'s ``__call__``: captured when lazy values are involved."""
    if building() or function._run_functions_eagerly or not ENABLED[0]:
        return _ORIGINAL_CALL(function, *args, **kwargs)
    if _state.capture[0] is not None:  # inside a capture: inline, as TF inlines calls
        return function._python_function(*args, **kwargs)
    flat, sig = [], []
    structure = (args, kwargs)
    _flatten(structure, flat, sig)
    if _UNCAPTURABLE in sig or (not LIVE and not _has_lazy(flat)):
        return _ORIGINAL_CALL(function, *args, **kwargs)
    cap = _capture_for(function, flat, sig, structure)
    if cap is _FALLBACK or cap is _PURE:
        return _ORIGINAL_CALL(function, *args, **kwargs)
    lc.metrics.inc("tf_function_call")
    return cap.run(flat)


def _function_call(self, *args, **kwargs):
    return call(self, args, kwargs)


def _tracing_count(self) -> int:
    """TF's traces plus whole-function captures (each runs the Python body once)."""
    return _ORIGINAL_COUNT(self) + captures(self)


_ORIGINAL_COUNT = _pf.Function.experimental_get_tracing_count


# tf.Variable methods that read or write its state: refused while a body is captured,
# BEFORE TensorFlow runs them (the op callback only sees ops after they ran: a write would
# happen here and again on the fallback path)
_VARIABLE_STATE = ("_read_variable_op", "assign", "assign_add", "assign_sub", "scatter_add",
                   "scatter_sub", "scatter_update", "scatter_max", "scatter_min",
                   "scatter_mul", "scatter_div", "batch_scatter_update", "scatter_nd_update",
                   "scatter_nd_add", "scatter_nd_sub", "scatter_nd_max", "scatter_nd_min")


def _guard_variable_state() -> None:
    from tensorflow.python.ops import resource_variable_ops

    stack = [resource_variable_ops.BaseResourceVariable]
    while stack:  # subclasses may carry their own copies (ResourceVariable does)
        cls = stack.pop()
        _guard(cls, _VARIABLE_STATE, "tf.Variable")
        stack.extend(cls.__subclasses__())


def _guard(owner, names, what: str, allow=lambda *a, **k: False) -> None:
    for name in names:
        original = owner.__dict__.get(name)
        if original is None or getattr(original, "__lazy_tf__", False):
            continue

        def guarded(*args, _original=original, _name=name, **kwargs):
            if _state.capture[0] is not None and not building() and not allow(*args, **kwargs):
                raise CaptureError(f"{what}: {_name.strip('_')} while a tf.function is "
                                   "captured (its state is TensorFlow's)")
            return _original(*args, **kwargs)

        guarded.__lazy_tf__ = True
        setattr(owner, name, guarded)


def install() -> None:
    _pf.Function.__call__ = _function_call
    _pf.Function.experimental_get_tracing_count = _tracing_count
    _guard_variable_state()
    # TF's stateful random ops take their op seed from the eager context's stream before
    # they run: a capture that falls back must not advance it (later eager draws differ)
    # (an op seed given: nothing taken; TF's kernel is then traced, ``_api_random``)
    _guard(random_seed, ("get_seed",), "tf.random", lambda op_seed=None: op_seed is not None)


def captures(function) -> int:
    """How many signatures of ``function`` were traced by whole-function capture."""
    caps = function.__dict__.get("_lazy_captures", {})
    return sum(1 for c in caps.values() if isinstance(c, _Capture))
