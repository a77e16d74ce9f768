"""Keras 3 (TensorFlow backend) on lazy_tf.

>>> import keras, lazy_tf as ltf
>>> ltf.keras.enable()          # Keras variables created from now on hold lazy values
>>> model = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])

* Lazy tensors are tensors to TensorFlow (``tf.is_tensor``), so Keras's
  ``convert_to_tensor`` passes them through and ``keras.ops`` reach the TF APIs that
  lazy_tf traces (that part needs no ``enable``).
* ``enable()`` makes every Keras variable created afterwards keep an ``ltf.Variable``
  as its value (instead of a ``tf.Variable``): layers then read weights from the lazy
  graph, ``ltf.GradientTape`` differentiates with respect to Keras variables, and Keras
  optimizers' updates (``variable.assign``) are recorded, so a whole Keras training
  step is one compiled program. While enabled, ``tf.GradientTape`` is
  ``ltf.GradientTape`` (Keras's trainer, a model's own ``train_step`` and custom loops
  write ``tf.GradientTape``); ``disable()`` restores both.
* Requires Keras 3 with ``KERAS_BACKEND=tensorflow``.
"""

from __future__ import annotations

import functools
import importlib
import sys

import tensorflow as tf
from tensorflow.python.eager import backprop

from . import _keras_rnn, _state
from ._convert import lazy_inside
from ._tape import GradientTape
from ._tensor import LazyTensor
from ._variable import Variable

_STATE = _state.keras


def _backend_variable_class():
    import keras

    if keras.backend.backend() != "tensorflow":
        raise RuntimeError("lazy_tf.keras needs Keras's TensorFlow backend "
                           f"(KERAS_BACKEND=tensorflow), not {keras.backend.backend()!r}")
    return importlib.import_module("keras.src.backend.tensorflow.core").Variable


def enable() -> None:
    """Keras variables created from now on hold ``ltf.Variable`` values (idempotent)."""
    cls = _backend_variable_class()
    if _STATE["enabled"]:
        return
    original = cls._initialize

    def _initialize(self, value):
        if not _STATE["enabled"] or isinstance(value, Variable):
            return original(self, value)
        with tf.init_scope():  # inside a TF graph trace the variable is created
            if callable(value):  # eagerly, as ``tf.Variable`` lifts its initializer
                value = value()
            self._value = Variable(value, trainable=self.trainable, dtype=self._dtype,
                                   name=self.name)

    cls._initialize = _initialize
    _STATE["original"] = original
    _STATE["converter"] = _patch_convert_to_tensor()
    _patch_optimizer()
    _patch_sparse_divide()
    _patch_output_spec()
    _make_dispatchable(cls)
    _keras_rnn.install()  # recurrent layers as one loop node
    _patch_trainer()
    tf.GradientTape = GradientTape  # the trainer's, a train_step's, a custom loop's
    _STATE["enabled"] = True


def _patch_trainer() -> None:
    """``model.fit``/``evaluate``/``predict``/``train_on_batch`` with ``run_eagerly=True``
    trace each step lazily: the trainer's tape is ``ltf.GradientTape`` and each step
    ends with a barrier (``ltf.sync``), one compiled program per step. Compiled steps
    (the default) run TensorFlow's graph on the variables' shadows (see ``_graph``)."""
    from . import sync

    cls = importlib.import_module("keras.src.backend.tensorflow.trainer").TensorFlowTrainer
    if getattr(cls._make_function, "__lazy_tf__", False):
        return
    for name in ("train_step", "test_step", "predict_step"):
        original = getattr(cls, name)

        def step(self, data, _original=original):
            out = _original(self, data)
            if _STATE["enabled"] and tf.executing_eagerly() and _state.capture[0] is None:
                sync()  # the step barrier: Keras may read nothing before the epoch ends
            return out

        functools.update_wrapper(step, original)
        setattr(cls, name, step)
    make = cls._make_function

    def _make_function(self, step_function, _original=make):
        if (self.run_eagerly or not (_STATE["enabled"] and _lazy_or_unbuilt(self))
                or type(self.distribute_strategy).__name__ != "_DefaultDistributionStrategy"):
            return _original(self, step_function)
        return _captured_steps(self, step_function)

    functools.update_wrapper(_make_function, make)
    _make_function.__lazy_tf__ = True
    cls._make_function = _make_function


def _lazy_or_unbuilt(model) -> bool:
    """Whether the model's steps are lazy_tf's: it holds lazy variables, or none yet (a
    model without ``Input`` builds in its first step, creating lazy variables then)."""
    return not model.variables or any(lazy_value(v) is not None for v in model.variables)


def _captured_steps(model, step_function):
    """``fit``/``evaluate``'s step function for a model with lazy variables and compiled
    steps (``run_eagerly=False``): the step is a ``tf.function`` that lazy_tf captures
    whole (``_capture``: one call node per step, traced once per batch signature), fed
    batch by batch from the iterator on the host, each step ending with a barrier.
    Keras's own path would trace the step into TensorFlow's graph and run it there on
    the variables' shadows."""
    from . import sync

    @tf.autograph.experimental.do_not_convert
    def one_step_on_data(data):
        return step_function(data)

    one_step = tf.function(one_step_on_data, reduce_retracing=True)

    def batches(iterator):
        if isinstance(iterator, tf.data.Iterator | tf.distribute.DistributedIterator):
            for _ in range(model.steps_per_execution):
                optional = iterator.get_next_as_optional()
                if not optional.has_value():
                    return
                yield optional.get_value()
        else:
            for _, data in zip(range(model.steps_per_execution), iterator, strict=False):
                yield data

    def function(iterator):
        outputs = None
        for data in batches(iterator):
            sync()  # what Keras recorded between steps (metric resets at an epoch's start):
            # its own program, so the step's program stays the same every step
            outputs = one_step(data)
            sync()  # the step barrier (the loss is read by the next step's inputs anyway)
        if outputs is None:
            raise StopIteration
        return outputs

    return function


def _make_dispatchable(cls) -> None:
    """TF ops called on a Keras variable itself (``tf.cast(v)``, ``tf.split(v, 4)``) would
    convert it through its ``__tf_tensor__``: an eager copy of a lazy value. Made a
    dispatchable type, its elementwise ops and the table's APIs come to lazy_tf, which
    calls them again on the variable's value (lazy: traced; a ``tf.Variable``:
    TensorFlow's own op)."""
    from tensorflow.python.util import dispatch as tf_dispatch

    from ._dispatch import TENSOR_LIKES, add_tensor_like

    if cls in TENSOR_LIKES:
        return
    tf_dispatch.register_dispatchable_type(cls)
    add_tensor_like(cls, _value_of)

    @tf.experimental.dispatch_for_unary_elementwise_apis(cls)
    def _unary(api_func, x):
        return api_func(_value_of(x))


def _value_of(v):
    return v.value


def _patch_optimizer() -> None:
    """Keras's TF optimizer sends gradients through ``tf.distribute``'s all-reduce, whose
    ``custom_gradient`` rejects composite tensors. Without a distribution strategy that
    reduction is the identity and the update is ``update_step`` per variable: for lazy
    variables that is what runs (with a strategy, Keras's own path, unchanged)."""
    cls = importlib.import_module("keras.src.backend.tensorflow.optimizer").TFOptimizer
    if getattr(cls._backend_update_step, "__lazy_tf__", False):
        return
    original = cls._backend_update_step

    @functools.wraps(original)
    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        lazy = [lazy_value(v) for v in trainable_variables]
        if tf.distribute.has_strategy() or not any(v is not None for v in lazy):
            return original(self, grads, trainable_variables, learning_rate)
        for grad, var, inner in zip(grads, trainable_variables, lazy, strict=True):
            self.update_step(grad, inner if inner is not None else var, learning_rate)

    _backend_update_step.__lazy_tf__ = True
    cls._backend_update_step = _backend_update_step


def _patch_sparse_divide() -> None:
    """Keras's ``ops.divide(IndexedSlices, dense)`` (RMSprop, Adagrad, Adadelta on an
    ``Embedding``) takes ``tf.cond(any divisor row zero or NaN)``: the union of the
    slices' rows and those rows, else the slices' rows. A lazy predicate is a sync (in
    a captured step: TF's graph path). Lazily both cases are one IndexedSlices: the
    slices divided by their rows, then every row ``0 / divisor`` where no slice is (0,
    or Keras's NaN/inf where the divisor is zero or NaN), so scatters and densifying
    give eager's values either way (Keras's union of repeated ids differs)."""
    original = (module := importlib.import_module("keras.src.backend.tensorflow.numpy")).divide
    if getattr(original, "__lazy_tf__", False):
        return

    @functools.wraps(original)
    def divide(x1, x2):
        if not (isinstance(x1, tf.IndexedSlices) and type(x2) is LazyTensor and x2.shape.rank):
            return original(x1, x2)
        func, rows, idx = original.__wrapped__, x2.shape[0], x1.indices
        taken = tf.math.unsorted_segment_max(tf.ones_like(idx), idx, rows) > 0  # rows sliced
        other = tf.where(tf.reshape(taken, [rows] + [1] * (x2.shape.rank - 1)),
                         tf.zeros_like(x2), func(tf.zeros_like(x2), x2))
        return tf.IndexedSlices(tf.concat([func(x1.values, tf.gather(x2, idx)), other], 0),
                                tf.concat([idx, tf.range(rows, dtype=idx.dtype)], 0),
                                x1.dense_shape)

    divide.__lazy_tf__ = True
    module.divide = divide


def _patch_convert_to_tensor():
    """Keras's TF ``convert_to_tensor`` hands a Keras variable holding an ``ltf.Variable``
    on as that variable's value (TF would convert the Keras variable through its
    ``__tf_tensor__``: an eager copy). Every Keras module that imported the function by
    name gets the wrapper."""
    original = importlib.import_module("keras.src.backend.tensorflow.core").convert_to_tensor

    @functools.wraps(original)
    def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
        if lazy_value(x) is not None:
            x = x.value  # autocast and stateless scopes apply, as in Keras
        return original(x, dtype=dtype, sparse=sparse, ragged=ragged)

    _swap(original, convert_to_tensor)
    return original, convert_to_tensor


def _patch_output_spec() -> None:
    """Keras builds a layer by calling it in a scratch graph for its shapes only
    (``compute_output_spec``): lazy inputs enter as ``KerasTensor``s of their shape and
    dtype (TF would bake their values: a sync, or inside a captured ``tf.function`` a
    value not known yet)."""
    from keras import KerasTensor, tree

    original = importlib.import_module("keras.src.backend.tensorflow.core").compute_output_spec

    @functools.wraps(original)
    def compute_output_spec(fn, *args, **kwargs):
        args, kwargs = tree.map_structure(lambda x: KerasTensor(x.shape, x.dtype.name) if
                                          type(x) is LazyTensor else x, (args, kwargs))
        return original(fn, *args, **kwargs)

    if not getattr(original, "__lazy_tf__", False):
        compute_output_spec.__lazy_tf__ = True
        _swap(original, compute_output_spec, "compute_output_spec")


def _swap(old, new, attribute="convert_to_tensor") -> None:
    for name, module in list(sys.modules.items()):
        if name.startswith("keras") and getattr(module, attribute, None) is old:
            setattr(module, attribute, new)


def disable() -> None:
    """Keras variables created from now on hold a ``tf.Variable`` again (undoes ``enable``)."""
    if _STATE["enabled"]:
        _backend_variable_class()._initialize = _STATE["original"]
        _swap(*reversed(_STATE["converter"]))
        tf.GradientTape = backprop.GradientTape
        _STATE["enabled"] = False


def is_enabled() -> bool:
    """Whether ``enable()`` is in effect (new Keras variables hold lazy values)."""
    return _STATE["enabled"]


lazy_value = lazy_inside  # the ``ltf.Variable`` behind a Keras variable, or None
