"""``LazyTensor``: a ``tf.experimental.ExtensionType`` that TensorFlow dispatches to us.

ExtensionType fields cannot hold arbitrary Python objects, so the type carries only
an int id, the static shape and the dtype; each instance pins its core handle
(``lazycore.Tensor``) in its ``__dict__``, so a value lives exactly as long as some
Python object holds it -- the core never computes values nobody holds. The TypeSpec
TensorFlow sees is not the generated one but ``_graph.LazySpec`` (shape and dtype, a
``tf.Tensor`` component): a spec never names a value, so ``tf.function`` cannot bake one.
Construction bypasses the ExtensionType validator (~18 us) because every field is
built here from already-valid objects, with shape and dtype cached per aval.
"""

from __future__ import annotations

import itertools

import numpy as np
import tensorflow as tf

import lazycore as lc

from . import _state
from ._dtypes import to_tf

_next_id = itertools.count(1).__next__
_SHAPES: dict[tuple, tf.TensorShape] = {}
_META: dict = {}  # core aval -> (tf.TensorShape, tf.DType)
_MAX_META = 4096  # a program with ever new shapes must not grow it forever
_object_new = object.__new__


def _shape(shape: tuple) -> tf.TensorShape:
    out = _SHAPES.get(shape)
    if out is None:
        out = _SHAPES[shape] = tf.TensorShape(shape)
    return out


class LazyTensor(tf.experimental.ExtensionType):
    """A TensorFlow value recorded into the lazycore graph, computed at a barrier.

    >>> import tensorflow as tf, lazy_tf as ltf
    >>> x = ltf.convert_to_tensor([1.0, 2.0])
    >>> float(tf.reduce_sum(x * 3.0))   # traced, then observed (a sync)
    9.0
    """

    _id: int
    shape: tf.TensorShape
    dtype: tf.DType

    __array_priority__ = 100  # numpy defers to our reflected operators, as with tf.Tensor

    def __lazycore_tensor__(self) -> lc.Tensor:
        """The core handle (``lazycore.interop``: another frontend adopts it, no sync)."""
        return handle(self)

    # -- static information ------------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.shape.rank

    def get_shape(self) -> tf.TensorShape:
        return self.shape

    def set_shape(self, shape) -> None:
        """A check, never a change, as for an eager tensor (Keras ops call it)."""
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied "
                             f"shape {tf.TensorShape(shape)}.")

    @property
    def device(self) -> str:
        return "lazy"

    @property
    def is_pending(self) -> bool:
        return handle(self).is_pending

    # -- observation (each one syncs what it needs) --------------------------------
    def numpy(self):
        arr = observe(self)
        return arr[()] if arr.ndim == 0 else arr

    def __array__(self, dtype=None, copy=None):
        arr = observe(self)
        return arr if dtype is None else arr.astype(dtype)

    def __tf_tensor__(self, dtype=None, name=None):
        from ._fallback import to_eager

        return to_eager(self, dtype)

    @lc.diagnostics.observes("control_flow")
    def __bool__(self):
        return bool(self.numpy())

    @lc.diagnostics.observes("item")
    def __int__(self):
        return int(self.numpy())

    @lc.diagnostics.observes("item")
    def __float__(self):
        return float(self.numpy())

    @lc.diagnostics.observes("item")
    def __index__(self):
        return self.numpy().__index__()

    def __len__(self):
        if self.shape.rank == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self.shape[0]

    def __iter__(self):
        if self.shape.rank == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        yield from (self[i] for i in range(self.shape[0]))

    __hash__ = None  # like tf.Tensor: unhashable (== is elementwise)

    @lc.diagnostics.observes("print")
    def __repr__(self) -> str:
        return self._text("<tf.Tensor: shape={s}, dtype={d}, numpy={v!r}>",
                          "<tf.Tensor 'lazy:0' shape={s} dtype={d}>")

    @lc.diagnostics.observes("print")
    def __str__(self) -> str:
        return self._text("tf.Tensor({v}, shape={s}, dtype={d})", 'Tensor("lazy:0", shape={s}, dtype={d})')

    def _text(self, valued: str, symbolic: str) -> str:
        """With the value; TF's graph-tensor form in a captured ``tf.function``'s trace
        (Keras's errors show its tensors: no placeholder is read) or for a value it leaked."""
        s, d = tuple(self.shape.as_list()), self.dtype.name
        try:
            if _state.capture[0] is None:
                return valued.format(s=s, d=d, v=np.asarray(self.numpy()))
        except lc.errors.CaptureError:
            pass
        return symbolic.format(s=s, d=d)

    # -- operators and indexing route to the same table as tf.* calls ----------------
    def __getitem__(self, key):
        from ._indexing import getitem

        return getitem(self, key)

    def __eq__(self, other):
        from ._operators import equality

        return equality("__operators__.eq", self, other)

    def __ne__(self, other):
        from ._operators import equality

        return equality("__operators__.ne", self, other)


def _meta(aval) -> tuple:
    """(TensorShape, DType) of a core aval, built once per aval."""
    if len(_META) >= _MAX_META:
        _META.clear()
    out = _META[aval] = (_shape(aval.shape), to_tf(aval.dtype))
    return out


def meta(aval) -> tuple:
    """The ``shape`` and ``dtype`` fields of a LazyTensor holding a value of ``aval``."""
    return _META.get(aval) or _meta(aval)


_LAZY_CLASSES: dict[type, bool] = {}


def is_lazy_class(cls: type) -> bool:
    """``issubclass(cls, LazyTensor)``, cached: ExtensionType is an ABC, so a plain
    ``isinstance`` runs ``ABCMeta.__instancecheck__`` in Python on every operand."""
    out = _LAZY_CLASSES.get(cls)
    if out is None:
        out = _LAZY_CLASSES[cls] = issubclass(cls, LazyTensor)
    return out


def new(t: lc.Tensor, cls=LazyTensor):
    """Wrap a core handle (fast path: fields are valid by construction). Every traced
    op ends here, so it is a few dict stores: no validation, no side-table entry."""
    aval = t.node.aval
    return build(t, *(_META.get(aval) or _meta(aval)), cls)


def build(t: lc.Tensor, shape, dtype, cls=LazyTensor):
    """``new`` with the TensorShape and DType already known (a plan carries them)."""
    obj = _object_new(cls)
    d = obj.__dict__
    d["_id"] = _next_id()
    d["shape"] = shape
    d["dtype"] = dtype
    d["_h"] = t
    return obj


def _spec(self):
    """A ``LazySpec`` (shape, dtype; no identity): ``tf.function`` traces once per
    signature and feeds each call the current value (see ``_graph``)."""
    from ._graph import LazySpec

    return LazySpec(self.shape, self.dtype)


# set after class creation: ExtensionType reserves the name in the class body
LazyTensor._type_spec = property(_spec)
# tf.is_tensor(x) is True: Keras's convert_to_tensor and the like pass it through
LazyTensor.is_tensor_like = property(lambda self: True)


def _fast_is_tensor() -> None:
    """``tf.is_tensor`` ends in ``isinstance(x, (NativeObject, Tensor, IsTensorLike))``;
    ``IsTensorLike`` is a runtime-checkable Protocol, checked in Python (tens of us,
    hundreds of times per Keras step). Naming the lazy class before it in that tuple
    gives the same answer without the Protocol check."""
    from tensorflow.python.framework import tensor_util

    classes = tensor_util.tf_type_classes
    if LazyTensor not in classes:
        tensor_util.tf_type_classes = (*classes[:-1], LazyTensor, classes[-1])


_fast_is_tensor()
_FIELDS = frozenset({"_id", "shape", "dtype"})


def _setattr(self, name, value):
    """Fields stay immutable; other attributes may be set as on a ``tf.Tensor`` (Keras
    marks activations' outputs: ``x._keras_logits = ...``)."""
    if name in _FIELDS:
        raise AttributeError(f"Cannot mutate attribute `{name}` of a lazy tensor.")
    object.__setattr__(self, name, value)  # property setters apply (Trackable's uids)


LazyTensor.__setattr__ = _setattr


def handle(x) -> lc.Tensor:
    """The core handle of a LazyTensor (a variable whose value is in its ``tf.function``
    shadow gets it back first)."""
    h = x.__dict__.get("_h")
    if h is None:
        if "_parked" in x.__dict__:
            from ._graph import unpark

            return unpark(x)
        raise ValueError(f"lazy tensor {x._id} has no value (it was never created here)")
    return h


def observe(x, cause: str = "host_transfer") -> np.ndarray:
    """Host copy of a lazy value. Observing is a step barrier: every live pending value
    is computed in the same program, since TF programs have no explicit ``mark_step``
    and variables updated in a loop would otherwise grow one ever longer graph. While a
    ``tf.function`` is captured the live values include its placeholders, which hold no
    value: only what ``x`` needs is computed (``tf.shape(x)[1]`` as a slice bound)."""
    h = handle(x) if x.__class__ is LazyTensor else x._read()
    cause = lc.diagnostics.observed_cause(cause)  # print / item / control_flow win
    if h.is_pending and _state.capture[0] is None:
        lc.sync(cause=cause)
    return np.asarray(lc.to_numpy(h, cause))
