"""Lazy values inside ``tf.function`` (and any other TensorFlow graph being built).

A trace must never bake a lazy value into its graph: the function would return what
it computed the first time. So:

* ``LazySpec`` is the lazy tensor's TypeSpec: shape and dtype, no identity; its one
  component is a ``tf.Tensor``. ``tf.function`` therefore traces once per
  (shape, dtype), the traced body sees a symbolic ``tf.Tensor`` and every call feeds
  the argument's current value (a sync).
* While a graph is built, any TF call that meets a lazy value runs TensorFlow's own op
  on graph tensors (``symbolic``): a plain lazy tensor is an immutable value, captured
  like an eager tensor; an ``ltf.Variable`` stands for its *shadow*, a ``tf.Variable``
  the graph reads and assigns.
* Every graph using a variable's shadow also captures a call-time value
  (``FuncGraph.capture_call_time_value``): before each call it copies the lazy value
  into the shadow when the lazy side is newer and hands authority to the shadow; the
  next lazy use of the variable (``_tensor.handle``) copies the shadow back. Between
  calls of a function in a loop nothing is copied.
"""

from __future__ import annotations

import functools

import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.framework import ops, type_spec, type_spec_registry
from tensorflow.python.framework.func_graph import FuncGraph
from tensorflow.python.ops import resource_variable_ops
from tensorflow.python.saved_model import save_context

import lazycore as lc

from . import _state


def building() -> bool:
    """True while TensorFlow builds a graph (a ``tf.function`` trace). Every traced op
    asks, so this reads the eager context's thread-local flag directly (what
    ``tf.executing_eagerly`` does through three calls)."""
    ctx = context._context
    return ctx is not None and not ctx._thread_local_data.is_eager


def _lazy_classes():
    from ._tensor import LazyTensor
    from ._variable import Variable

    return LazyTensor, Variable


@type_spec_registry.register("lazy_tf.LazySpec")
class LazySpec(type_spec.BatchableTypeSpec):
    """TypeSpec of a lazy tensor: static shape and dtype; one ``tf.Tensor`` component."""

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape, dtype):
        self._shape = tf.TensorShape(shape)
        self._dtype = tf.as_dtype(dtype)

    @property
    def value_type(self):
        return _lazy_classes()[0]

    @property
    def shape(self) -> tf.TensorShape:
        return self._shape

    @property
    def dtype(self) -> tf.DType:
        return self._dtype

    def _serialize(self):
        return (self._shape, self._dtype)

    @property
    def _component_specs(self):
        return [tf.TensorSpec(self._shape, self._dtype)]

    def _to_components(self, value):
        """The value as a ``tf.Tensor``: its current value (a sync), or the graph tensor
        standing for it while a graph is built."""
        return [to_tensor(value)]

    def _from_components(self, components):
        """Inside a graph the symbolic tensor itself (TF ops trace it natively); an eager
        tensor becomes a lazy value again."""
        t = components[0]
        if isinstance(t, ops.EagerTensor):
            from ._convert import to_core
            from ._tensor import new

            return new(to_core(t))
        return t

    def _batch(self, batch_size):
        return LazySpec(tf.TensorShape([batch_size]).concatenate(self._shape), self._dtype)

    def _unbatch(self):
        return LazySpec(self._shape[1:], self._dtype)

    _to_legacy_output_types, _to_legacy_output_shapes = dtype.fget, shape.fget

    def _to_legacy_output_classes(self):
        return self


@type_spec_registry.register("lazy_tf.LazyVariableSpec")
class LazyVariableSpec(type_spec.TypeSpec):
    """TypeSpec of an ``ltf.Variable``: its component is the variable's shadow (a
    ``tf.Variable``), so a ``tf.function`` taking the variable as an argument reads and
    assigns it, as with a ``tf.Variable`` argument."""

    __slots__ = ("_shape", "_dtype", "_trainable")

    def __init__(self, shape, dtype, trainable=True):
        self._shape = tf.TensorShape(shape)
        self._dtype = tf.as_dtype(dtype)
        self._trainable = bool(trainable)

    @property
    def value_type(self):
        return _lazy_classes()[1]

    def _serialize(self):
        return (self._shape, self._dtype, self._trainable)

    @property
    def _component_specs(self):
        return [resource_variable_ops.VariableSpec(self._shape, self._dtype,
                                                   trainable=self._trainable)]

    def _to_components(self, value):
        s = shadow(value)
        if not building():
            before_call(value)  # the shadow holds the current value for this call
        return [s]

    def _from_components(self, components):
        return components[0]


def eager(x) -> tf.Tensor:
    """The current value of a lazy tensor or variable as an eager tensor (a sync)."""
    from ._tensor import observe

    with ops.init_scope():
        return tf.constant(observe(x, "graph_input"))


def to_tensor(x) -> tf.Tensor:
    """A lazy value as a ``tf.Tensor``: eager (its value) or, while a graph is built,
    the graph tensor standing for it."""
    if not building():
        return eager(x)
    s = symbolic(x)
    return s if isinstance(s, tf.Tensor) else tf.convert_to_tensor(s)


def symbolic(x):
    """What a lazy value is inside the graph being built: an ``ltf.Variable`` is its
    shadow ``tf.Variable`` (read and assigned by the graph, synced at call time), a
    lazy tensor its value captured like an eager tensor."""
    _, Variable = _lazy_classes()
    if isinstance(x, Variable):
        return shadow(x)
    return tf.convert_to_tensor(eager(x))


def symbolic_nest(structure):
    """``structure`` with every lazy value replaced by ``symbolic`` (variables: their
    shadows, so a gradient with respect to an ``ltf.Variable`` is its shadow's)."""
    LazyTensor, _ = _lazy_classes()
    return tf.nest.map_structure(
        lambda v: symbolic(v) if isinstance(v, LazyTensor) else v, structure)


def run_in_graph(api, args, kwargs):
    """TensorFlow's own ``api`` on graph tensors (no lazy value left to dispatch on)."""
    g_args, g_kwargs = symbolic_nest((args, kwargs))
    return api(*g_args, **g_kwargs)


# -- variables: the shadow and the hand-over of authority ------------------------------
@functools.cache
def _true() -> tf.Tensor:
    with ops.init_scope():
        return tf.constant(True)


def shadow(var) -> tf.Variable:
    """The ``tf.Variable`` standing for ``var`` in graphs; the graph being built also
    syncs it at each call (one call-time capture per variable and graph)."""
    d = var.__dict__
    s = d.get("_shadow")
    if s is None:
        # the class itself: tf.function's creator scopes (a second trace of the function
        # that "created a variable") are not involved; eager even inside a SavedModel's
        # export graph (a plain Graph, which init_scope does not leave). While a
        # tf.function is captured the variable is a placeholder (Keras builds a layer
        # in a scratch graph for its output shape): zeros, as every call of a graph
        # using the shadow first copies the variable's value into it (``before_call``)
        stateful = _state.capture[0].stateful if _state.capture[0] is not None else []
        ops_before = len(stateful)
        with ops.init_scope(), context.eager_mode():
            s = resource_variable_ops.ResourceVariable(
                tf.zeros(var.shape, var.dtype) if d["_h"].node.op == "failed" else eager(var),
                trainable=var.trainable, name=var.name.split(":")[0])
        del stateful[ops_before:]  # the capture's record of stateful ops the body ran
        d["_shadow"] = s
    graph = ops.get_default_graph()
    if isinstance(graph, FuncGraph) and not save_context.in_save_context():
        # (a SavedModel's graph owns its own copy of the variable: nothing to sync)
        graph.capture_call_time_value(lambda: before_call(var), tf.TensorSpec([], tf.bool),
                                      key=("lazy_tf.variable", var._id))
    return s


def before_call(var) -> tf.Tensor:
    """Called by TensorFlow before each call of a function using ``var``: when the lazy
    value is newer, copy it into the shadow and park the lazy handle (the shadow is now
    the variable's value until the next lazy use)."""
    d = var.__dict__
    h = d.get("_h")
    if h is not None:
        d["_shadow"].assign(eager(var))
        d["_parked"] = d.pop("_h")
    return _true()


def unpark(var) -> lc.Tensor:
    """The lazy handle of a variable whose value is in its shadow: it is re-pointed at
    the shadow's current value (called by ``_tensor.handle`` on first lazy use)."""
    from ._convert import to_core

    d = var.__dict__
    h = d.pop("_parked")
    h.assign(to_core(d["_shadow"].value()))
    d["_h"] = h
    return h
