"""``LazyTensor``: a ``tf.experimental.ExtensionType`` that TensorFlow dispatches to us.

ExtensionType fields cannot hold arbitrary Python objects, so the type carries only
an int id, the static shape and the dtype; the core handle (``lazycore.Tensor``)
lives in a side table keyed by that id. Each instance also pins its handle in its
``__dict__`` (the side table holds handles weakly), so a value lives exactly as long
as some Python object holds it -- the core never computes values nobody holds.
Construction bypasses the ExtensionType validator (~18 us) because every field is
built here from already-valid objects.
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


def new(t: lc.Tensor, cls=LazyTensor):
    """Wrap a core handle (fast path: fields are valid by construction)."""
    i = _next_id()
    obj = object.__new__(cls)
    d = obj.__dict__
    d["_id"] = i
    d["shape"] = _shape(t.shape)
    d["dtype"] = to_tf(t.dtype)
    d["_h"] = t
    _HANDLES[i] = t
    return obj


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
