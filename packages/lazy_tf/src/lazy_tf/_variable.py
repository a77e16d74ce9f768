"""``ltf.Variable``: a lazy tensor whose value can be re-assigned.

It is a ``LazyTensor`` (so every TF API dispatches on it) whose core handle is
re-pointed by ``assign*`` (a functional update: the new value is recorded, not
computed). Reading it inside a ``GradientTape`` watches it when trainable.
"""

from __future__ import annotations

import itertools

import numpy as np
import tensorflow as tf
from tensorflow.python.trackable.base import Trackable

import lazycore as lc

from . import _state, _trackable
from ._convert import to_core
from ._dtypes import to_np
from ._graph import building, shadow
from ._table import in_range
from ._tensor import LazyTensor, handle, new

_names = itertools.count()
_variable_seq = itertools.count(-(2 ** 62)).__next__


# A sync orders its outputs by handle creation (``lazycore.Tensor.seq``). A variable
# created during the first step (Keras builds optimizer slots at the first
# ``apply_gradients``) would sort after that step's loss there but before the loss of
# every later step: a second program. Variables' handles sort before all other handles,
# in their own creation order, in every step.


def _settle(value: lc.Tensor) -> None:
    """A variable's first value must be what every later step reads: device data. A
    constant (``tf.zeros_like(w)``: one baked fill) becomes data; a pending value
    (``ltf.random.normal(...)``) is computed now, in a program of its own. Otherwise
    the first step's program would hold it and the second step compile again."""
    node = value.node
    if node.op in ("const", "param"):
        value.assign(lc.asarray(lc.ir.host_value(node)))
    elif node.op not in lc.ir.LEAF_OPS:
        lc.sync([value], cause="explicit")


class _Factory(type(LazyTensor)):
    """Calling the class builds the instance in ``_create`` and skips the ExtensionType
    ``__init__`` validator, which rejects the Python attributes a variable carries."""

    def __call__(cls, *args, **kwargs):
        return cls._create(*args, **kwargs)


class Variable(LazyTensor, Trackable, metaclass=_Factory):
    """``tf.Variable``'s interface over a lazy value.

    >>> v = Variable([1.0, 2.0])
    >>> v.assign_add([1.0, 1.0]).numpy().tolist()
    [2.0, 3.0]

    A ``Trackable`` (``tf.train.Checkpoint``, SavedModel: see ``_trackable``).
    """

    @classmethod
    def _create(cls, initial_value=None, trainable=True, name=None, dtype=None, **_):
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, LazyTensor):
            t = handle(initial_value) if initial_value.__class__ is LazyTensor else \
                initial_value._read()
            if dtype is not None and to_np(dtype) != t.dtype:
                t = lc.numeric.cast(t, to_np(dtype))
        else:
            eager = tf.convert_to_tensor(initial_value, dtype=dtype)
            t = lc.asarray(np.asarray(eager.numpy()))  # its own data (not a shared scalar)
        value = lc.Tensor(t.node)  # a fresh handle: assigning must not re-point the source
        value.seq = _variable_seq()
        _settle(value)
        obj = new(value, cls)
        obj.__dict__["_trainable"] = bool(trainable)
        obj.__dict__["_name"] = f"Variable{'' if (n := next(_names)) == 0 else f'_{n}'}:0" \
            if name is None else f"{name}:0"
        from ._capture import LIVE

        LIVE[obj._id] = obj  # a captured tf.function body may read it
        if _state.capture[0] is not None:  # created while a tf.function is captured
            _state.capture[0].adopt(obj)
        return obj

    # -- reading ------------------------------------------------------------------
    def _read(self) -> lc.Tensor:
        h = handle(self)
        if _state.active_tapes and self._trainable:
            for tape in _state.active_tapes:
                if tape._watch_accessed:
                    tape._watch_handle(self, h)
        return h

    def read_value(self) -> LazyTensor:
        if building():
            return shadow(self).read_value()
        return new(lc.Tensor(self._read().node))

    value = read_value

    def numpy(self):
        if building():
            raise NotImplementedError("numpy() is only available when eager execution is "
                                      "enabled.")
        return super().numpy()

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def name(self) -> str:
        return self._name

    # -- assignment: re-point the handle at a newly recorded value ------------------
    def _check(self, value) -> lc.Tensor:
        t = to_core(value, handle(self).dtype)
        if t.shape != handle(self).shape:
            t = lc.numeric.broadcast_to(t, handle(self).shape) if t.ndim == 0 else t
        if t.shape != handle(self).shape:
            raise ValueError(f"Cannot assign value to variable ' {self._name}': Shape mismatch."
                             f"The variable shape {tuple(self.shape.as_list())}, and the "
                             f"assigned value shape {t.shape} are incompatible.")
        return t

    def assign(self, value, use_locking=None, name=None, read_value=True):
        if building():  # inside a tf.function: the shadow variable, synced at call time
            return shadow(self).assign(value, use_locking, name, read_value)
        handle(self).assign(self._check(value))
        return self

    def _update(self, api: str, delta, use_locking, name, read_value):
        """``assign_add``/``assign_sub``."""
        if building():  # inside a tf.function: the shadow variable, synced at call time
            return getattr(shadow(self), api)(delta, use_locking, name, read_value)
        h = handle(self)
        h.assign(getattr(lc.ops, api[7:])(h, self._check(delta)))
        return self

    def _scatter(self, api: str, delta):
        """Rows ``delta.indices`` updated by ``delta.values`` (Keras's sparse optimizer
        updates); repeated rows accumulate, as TF's scatter kernels do."""
        if building():
            return getattr(shadow(self), api)(delta)
        if not isinstance(delta, tf.IndexedSlices):
            raise TypeError("Argument `sparse_delta` must be a `tf.IndexedSlices`. "
                            f"Received arg: {delta}")
        h = handle(self)
        v, i = to_core(delta.values, h.dtype), to_core(delta.indices)
        new = (lc.numeric.index_copy(h, 0, i, v) if api == "scatter_update" else
               lc.numeric.index_add(h, 0, i, lc.ops.neg(v) if api == "scatter_sub" else v))
        h.assign(in_range(i, h.shape[0] if h.ndim else 1, new, "ResourceScatter"))
        return self

    def __repr__(self) -> str:
        head = f"<ltf.Variable '{self._name}' shape={tuple(self.shape.as_list())} dtype={self.dtype.name}"
        return f"{head}>" if building() else f"{head}, numpy={np.asarray(self.numpy())!r}>"


# (not converted by AutoGraph: a lambda's source cannot be, and its warning prints the
# variable, reading its value inside the trace)
for _api in ("scatter_add", "scatter_sub", "scatter_update"):
    setattr(Variable, _api, tf.autograph.experimental.do_not_convert(
        lambda self, sparse_delta, use_locking=False, name=None, _api=_api:
        self._scatter(_api, sparse_delta)))
for _api in ("assign_add", "assign_sub"):
    setattr(Variable, _api, tf.autograph.experimental.do_not_convert(
        lambda self, delta, use_locking=None, name=None, read_value=True, _api=_api:
        self._update(_api, delta, use_locking, name, read_value)))

# What Keras's TF optimizer keys its slots by (``tf.Variable._unique_id``)
Variable._unique_id = property(lambda self: f"ltf.Variable:{self._id}")
# TF parses a variable's device when colocating with it (Keras's optimizer slots): no
# placement constraint, rather than the tensor's informative "lazy"
Variable.device = property(lambda self: "")


def _handle(self):
    """Inside a ``tf.function`` trace: the resource of the variable's shadow (what
    TensorFlow's tape and Keras's compiled steps use); a lazy value has none outside."""
    if building():
        return shadow(self).handle
    raise AttributeError("an ltf.Variable has no TensorFlow resource handle outside a "
                         "tf.function trace")


Variable.handle = property(_handle)


def _variable_spec(self):
    from ._graph import LazyVariableSpec

    return LazyVariableSpec(self.shape, self.dtype, self.trainable)


# a tf.function argument: the variable's shadow, read and assigned by the graph
Variable._type_spec = property(_variable_spec)


for _name, _f in _trackable.METHODS.items():  # checkpoints and SavedModel (``_trackable``)
    setattr(Variable, _name, _f)
for _name, _f in _trackable.PROPERTIES.items():
    setattr(Variable, _name, property(_f))
# savers treat it as a resource variable: its SavedModel object is its shadow's
Variable._should_act_as_resource_variable = True
