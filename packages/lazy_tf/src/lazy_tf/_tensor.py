"""``LazyTensor``: a ``tf.experimental.ExtensionType`` that TensorFlow dispatches to us.

ExtensionType fields cannot hold arbitrary Python objects, so the type carries only
an int id, the static shape and the dtype; each instance pins its core handle
(``lazycore.Tensor``) in its ``__dict__``, so a value lives exactly as long as some
Python object holds it -- the core never computes values nobody holds. Copies that
TensorFlow rebuilds from a TypeSpec carry only the id: a side table keyed by id
(holding handles weakly) answers for them. A spec is always taken from a live
instance first, so the instance enters the table then, not on every op.
Construction bypasses the ExtensionType validator (~18 us) because every field is
built here from already-valid objects, with shape and dtype cached per aval.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np
import tensorflow as tf

import lazycore as lc

from ._dtypes import to_tf

_HANDLES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
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

    # -- static information ------------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.shape.rank

    def get_shape(self) -> tf.TensorShape:
        return self.shape

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

    def __bool__(self):
        return bool(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __index__(self):
        return self.numpy().__index__()

    def __len__(self):
        if self.shape.rank == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self.shape[0]

    def __iter__(self):
        if self.shape.rank == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self.shape[0]):
            yield self[i]

    __hash__ = None  # like tf.Tensor: unhashable (== is elementwise)

    def __repr__(self) -> str:
        return (f"<tf.Tensor: shape={tuple(self.shape.as_list())}, dtype={self.dtype.name}, "
                f"numpy={np.asarray(self.numpy())!r}>")

    def __str__(self) -> str:
        return (f"tf.Tensor({np.asarray(self.numpy())}, shape={tuple(self.shape.as_list())}, "
                f"dtype={self.dtype.name})")

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


_spec_of = LazyTensor._type_spec.fget


def _registered_spec(self):
    """TensorFlow's ``_type_spec``, after entering the instance in the side table: the
    spec can rebuild copies that carry only ``_id`` (``handle`` looks them up)."""
    if "_h" in self.__dict__:
        _HANDLES[self._id] = self.__dict__["_h"]
    return _spec_of(self)


# set after class creation: ExtensionType reserves the name in the class body
LazyTensor._type_spec = property(_registered_spec)


def handle(x) -> lc.Tensor:
    """The core handle of a LazyTensor (also for copies TensorFlow rebuilt from the spec)."""
    h = x.__dict__.get("_h")
    if h is None:
        h = _HANDLES.get(x._id)
        if h is None:
            raise ValueError(f"lazy tensor {x._id} has no value (it was never created here)")
        x.__dict__["_h"] = h
    return h


def observe(x, cause: str = "observe") -> np.ndarray:
    """Host copy of a lazy value. Observing is a step barrier: every live pending value
    is computed in the same program, since TF programs have no explicit ``mark_step``
    and variables updated in a loop would otherwise grow one ever longer graph."""
    h = handle(x) if x.__class__ is LazyTensor else x._read()
    if h.is_pending:
        lc.sync(cause=cause)
    return np.asarray(lc.to_numpy(h))
