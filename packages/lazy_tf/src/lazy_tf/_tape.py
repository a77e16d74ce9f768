"""``ltf.GradientTape``: tf.GradientTape's interface, gradients from the core.

The forward computation is already a graph in the core, so the tape records nothing
per op: it only remembers what is watched (``watch`` and trainable variables read
inside it). ``gradient`` asks ``lazycore.grad`` for the vector-Jacobian product of
the lazy graph (lowered through ``jax.vjp``); gradients stay lazy and fuse with the
forward pass and the update into one compiled step.
"""

from __future__ import annotations

import contextlib
import weakref

import tensorflow as tf
from tensorflow.python.eager import backprop, record
from tensorflow.python.framework.ops import EagerTensor

import lazycore as lc

from . import _state
from ._capture import reachable
from ._convert import dtype_of, to_core
from ._graph import building, symbolic_nest
from ._sparse_grads import from_rows
from ._tensor import LazyTensor, handle, is_lazy_class, new
from ._variable import Variable

UnconnectedGradients = tf.UnconnectedGradients


def _flat_lazy(structure) -> bool:
    """A flat list/tuple of lazy tensors (the usual sources): ``tf.nest`` (slow Protocol
    checks per call) is not needed to flatten or rebuild it."""
    return structure.__class__ in (list, tuple) and all(
        is_lazy_class(v.__class__) for v in structure)


def _flatten(structure) -> list:
    if is_lazy_class(structure.__class__):
        return [structure]
    return list(structure) if _flat_lazy(structure) else tf.nest.flatten(structure)


def _pack(structure, flat: list):
    if is_lazy_class(structure.__class__):
        return flat[0]
    if _flat_lazy(structure):
        return structure.__class__(flat)
    return tf.nest.pack_sequence_as(structure, flat)


class GradientTape:
    """``tf.GradientTape``'s interface over lazy values. The forward ops are already a
    graph in the core, so the tape only remembers what is watched (``watch`` and the
    trainable variables read inside it); ``gradient`` asks ``lazycore.grad`` for the
    vector-Jacobian product, and gradients stay lazy, fusing with the forward pass and
    the update into one compiled step. Arguments mean what they mean in TensorFlow."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._watched: dict[int, object] = {}   # id(value) -> value (kept alive)
        self._used = self._recording = False
        # handle -> node when made: a sync (e.g. printing the loss inside
        # the tape) re-points handles at device data; gradients need the graph behind them
        self._made: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._read: dict[int, lc.Tensor] = {}   # id(value) -> handle as first read here
        self._outside: dict[int, object] = {}  # nodes of values used here, made before it
        # eager values TF's tape derives from what it differentiates (eager ops on a
        # tf.Variable before a lazy model), sources of the lazy graph: see ``source``
        self._bridges: dict[int, object] = {}
        # the recorded graph lives outside live handles: no buffer donation meanwhile
        self._hold = lc.runtime.hold_buffers()
        # TF's own tape, entered with this one: in a tf.function trace the ops are TF's and
        # it answers everything; eagerly it records TF's own values (eager tensors,
        # tf.Variables: while lazy Keras is enabled this class is ``tf.GradientTape``)
        self._tf_tape = backprop.GradientTape(persistent, watch_accessed_variables)
        self._in_graph = False

    # -- context ------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._recording = True
        self._tf_tape.__enter__()
        self._in_graph = building()
        if not self._in_graph:
            _state.active_tapes.append(self)
        return self

    def __exit__(self, *exc) -> None:
        self._recording = False
        self._tf_tape.__exit__(*exc)
        if self in _state.active_tapes:
            _state.active_tapes.remove(self)

    @contextlib.contextmanager
    def stop_recording(self):
        """Values computed inside are constants for every tape (``stop_gradient``)."""
        if not self._recording:
            raise ValueError("Tape.stop_recording() can only be called within the tape's "
                             "context manager.")
        _state.stopped[0] += 1
        try:
            with self._tf_tape.stop_recording():
                yield
        finally:
            _state.stopped[0] -= 1

    def reset(self) -> None:
        self._tf_tape.reset()
        self._hold = lc.runtime.hold_buffers()
        for recorded in (self._watched, self._read, self._bridges, self._made, self._outside):
            recorded.clear()

    # -- watching -----------------------------------------------------------------
    def watch(self, tensor) -> None:
        if self._in_graph:
            self._tf_tape.watch(symbolic_nest(tensor))
            return
        for t in map(_unwrap, tf.nest.flatten(tensor)):
            if not isinstance(t, LazyTensor):
                self._tf_tape.watch(t)  # TF's own value (or TF's error for anything else)
            # an eager tensor is a source of the lazy graph too (FGSM, saliency maps):
            # while this tape records, the lazy ops it enters use this one handle
            if isinstance(t, LazyTensor | EagerTensor) and id(t) not in self._watched:
                self._watched[id(t)] = t
                self._read[id(t)] = lc.Tensor(to_core(t).node) if isinstance(
                    t, LazyTensor) else _eager_handle(t)

    def source(self, t) -> lc.Tensor | None:
        """The handle of an eager value entering the lazy graph, if this tape
        differentiates it: a watched one's, or (while recording) a fresh source for one
        TF's tape derives from a watched value or a trainable ``tf.Variable`` (read by
        ``to_core``); ``gradient`` carries the lazy graph's gradient for it on through
        TF's tape."""
        h = self._read.get(id(t))
        if h is None and self._recording and not _state.stopped[0] and \
                record.should_record_backprop([t]):
            h = self._read[id(t)] = _eager_handle(t)
            self._bridges[id(t)] = t
        return h

    def _watch_handle(self, var: Variable, h) -> None:
        if id(var) not in self._watched:
            self._watched[id(var)] = var
            self._read[id(var)] = lc.Tensor(h.node)

    def _used_input(self, h: lc.Tensor, used: lc.Tensor) -> None:
        """A value used while recording: if the tape did not make it, it is a constant
        for this tape (TF records only ops run inside the tape)."""
        if self._recording and not _state.stopped[0] and h not in self._made:
            self._outside.setdefault(id(used.node), used.node)

    def _constants(self) -> list:
        return [lc.Tensor(n) for n in self._outside.values()]

    def _record(self, h: lc.Tensor) -> None:
        self._made[h] = h.node

    def _graph_handle(self, value) -> lc.Tensor:
        """The handle to differentiate: the recorded graph, not synced data."""
        if id(value) in self._read:
            return self._read[id(value)]
        h = to_core(value)
        made = self._made.get(h, h.node)
        return h if made is h.node else lc.Tensor(made)

    def differentiates(self, value) -> bool:
        """Would ``gradient`` differentiate through ``value``? (It depends on a watched
        source, or is a trainable variable this tape watches when read.) Asked only when
        a value is about to leave the lazy graph, so a walk over the graph is fine."""
        if not self._recording or _state.stopped[0]:
            return False
        if isinstance(value, Variable) and value.trainable and self._watch_accessed:
            return True
        root = self._made.get(handle(value), handle(value).node)
        return bool(reachable([root], {id(h.node) for h in self._read.values()}))

    def watched_variables(self) -> tuple:
        if self._in_graph:
            return self._tf_tape.watched_variables()
        return tuple(v for v in self._watched.values() if isinstance(v, Variable)) + \
            self._tf_tape.watched_variables()

    # -- gradients ------------------------------------------------------------------
    def _use(self) -> None:
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        self._used = True

    def _tf_answers(self, target, sources) -> bool:
        """In a tf.function trace, or with no lazy value among targets and sources."""
        return self._in_graph or not any(is_lazy_class(_unwrap(v).__class__)
                                         for v in _flatten(target) + _flatten(sources))

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        self._use()
        if self._tf_answers(target, sources):
            return self._tf_tape.gradient(
                symbolic_nest(target), symbolic_nest(sources), symbolic_nest(output_gradients),
                unconnected_gradients)
        targets = _flatten(target)
        flat_sources = [_unwrap(s) for s in _flatten(sources)]
        for s in flat_sources:
            if not isinstance(s, LazyTensor | EagerTensor | tf.Variable):
                raise ValueError(f"ltf.GradientTape cannot differentiate with respect to "
                                 f"{type(s).__name__}; sources must be lazy tensors, eager "
                                 "tensors, ltf.Variables, tf.Variables or Keras variables")
        outs = [self._graph_handle(t) for t in targets]
        cts = None if output_gradients is None else [
            None if g is None else to_core(g, o.dtype)
            for g, o in zip(tf.nest.flatten(output_gradients), outs, strict=True)]
        # only watched sources get gradients (TF returns None for the others)
        inputs = [self._graph_handle(s) if id(s) in self._watched else None
                  for s in flat_sources]
        active = [i for i in inputs if i is not None]
        grads = lc.grad(outs, active + [self._read[i] for i in self._bridges], cts,
                        constants=self._constants(), rows=True)
        via_tf = self._through_tf(grads[len(active):], flat_sources)
        grads = iter(grads)
        results = []
        zero = unconnected_gradients in (UnconnectedGradients.ZERO, "zero")
        for s, inp, t in zip(flat_sources, inputs, via_tf, strict=True):
            g = next(grads) if inp is not None else None
            if g is None and zero and t is None:
                g = lc.numeric.zeros(tuple(s.shape.as_list()), dtype_of(s))
            if isinstance(g, lc.autodiff.Rows):  # eager TF's IndexedSlices (row gathers)
                g = from_rows(g, tuple(s.shape.as_list()), _new_recorded)
            elif g is not None:
                g = _new_recorded(g)
            results.append(g if t is None else t if g is None else tf.math.add_n([g, t]))
        if not self._persistent:
            self._hold = None  # the recorded graph is done with: donation may resume
        return _pack(sources, results)

    def _through_tf(self, grads: list, sources: list) -> list:
        """Eager sources' gradients through the eager values TF's tape made from them
        before they entered the lazy graph (``source``): the lazy graph's gradients at
        those values (one sync) are the output gradients TF's tape carries on."""
        eager = [s for s in sources if not isinstance(s, LazyTensor)]
        if not eager:
            return [None] * len(sources)
        if self._bridges and any(tape is not self for tape in _state.active_tapes):
            raise lc.errors.UnsupportedError(
                "a gradient with respect to eager values that reached the lazy graph "
                "through eager ops, taken inside another GradientTape: the outer tape "
                "would see the lazy part's gradient as a constant (higher-order "
                "gradients). Use ltf.Variables or lazy tensors as the sources.")
        pairs = [(b, g) for b, g in zip(self._bridges.values(), grads, strict=True)
                 if g is not None]
        values = lc.to_numpy_many([to_core(from_rows(g, tuple(b.shape), new)) if isinstance(
            g, lc.autodiff.Rows) else g for b, g in pairs], cause="tape_eager_sources")
        got = iter(self._tf_tape.gradient([b for b, _ in pairs], eager,
                                          list(map(tf.constant, values))))
        return [None if isinstance(s, LazyTensor) else next(got) for s in sources]

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...], shaped ``target.shape + source.shape``: one
        vector-Jacobian product per target element (fine for the small targets
        jacobians are used on), all traced into the same lazy graph."""
        self._use()
        if self._tf_answers(target, sources):
            return self._tf_tape.jacobian(
                symbolic_nest(target), symbolic_nest(sources), unconnected_gradients,
                parallel_iterations, experimental_use_pfor)
        out = self._graph_handle(target)
        flat_sources = [_unwrap(s) for s in _flatten(sources)]
        if self._bridges and not all(isinstance(s, LazyTensor) for s in flat_sources):
            raise lc.errors.UnsupportedError(
                "ltf.GradientTape.jacobian with respect to eager values (tf.Variables, "
                "watched tensors) that reached the lazy graph through eager ops: TF's tape "
                "would carry each row on. Use tape.gradient, or ltf.Variables.")
        active = [self._graph_handle(s) for s in flat_sources if id(s) in self._watched]
        eye = lc.numeric.eye(out.size, dtype=out.dtype) if out.size else None
        # one vector-Jacobian product per target element; a column per watched source
        columns = iter(zip(*[lc.grad(
            [out], active, [lc.numeric.reshape(lc.numeric.getitem(eye, k), out.shape)],
            constants=self._constants()) for k in range(out.size)], strict=True))
        zero = unconnected_gradients in (UnconnectedGradients.ZERO, "zero")
        results = []
        for s in flat_sources:
            shape, dtype = tuple(s.shape.as_list()), dtype_of(s)
            column = next(columns, ()) if id(s) in self._watched else ()
            results.append(
                (new(lc.numeric.zeros(tuple(out.shape) + shape, dtype)) if zero else None)
                if all(g is None for g in column) else
                _new_recorded(lc.numeric.reshape(lc.numeric.stack(
                    [lc.numeric.zeros(shape, dtype) if g is None else g for g in column], 0),
                    tuple(out.shape) + shape)))
        return _pack(sources, results)


def _eager_handle(t) -> lc.Tensor:
    """One handle per eager value for every active tape (nested tapes differentiate
    the same leaf: the Hessian of a watched tensor), else its value as a new leaf."""
    shared = [tape._read[id(t)] for tape in _state.active_tapes if id(t) in tape._read]
    return shared[0] if shared else lc.asarray(t.numpy())


def _unwrap(value):
    """A Keras variable stands for the variable it holds: an ``ltf.Variable``
    (``lazy_tf.keras``) or, made before ``ltf.keras.enable()``, a ``tf.Variable``."""
    if is_lazy_class(value.__class__):
        return value
    inner = getattr(value, "__dict__", {}).get("_value")
    return inner if isinstance(inner, LazyTensor | tf.Variable) else value


def check_leaving(api: str, values) -> None:
    """Raise before lazy values a recording tape differentiates through leave the lazy
    graph (an eager fallback or conversion): the gradient through them would silently
    be lost."""
    for tape in _state.active_tapes:
        for v in values:
            if tape.differentiates(v):
                raise lc.errors.UnsupportedError(
                    f"tf.{api} has no lazy implementation: it would run eagerly on a value "
                    "that an ltf.GradientTape differentiates, and the gradient through it "
                    "would be lost. Compute it outside the tape (or inside "
                    "tape.stop_recording() when no gradient should flow through it).")


def _new_recorded(h: lc.Tensor):
    """Gradients computed inside an outer tape are recorded by it (higher order)."""
    for tape in _state.active_tapes:
        tape._record(h)
    return new(h)
