"""Leaving the lazy world: eager conversion, fallback, and TF as the error oracle.

* ``to_eager`` backs ``__tf_tensor__``: ``tf.convert_to_tensor(x)`` is an
  observation (a sync); any other TF API without a lazy handler that converts our
  value is a *fallback*, counted as ``fallback::<api>``.
* ``run_eager`` runs a TF API on eager copies of the lazy arguments and brings the
  results back as lazy values (counted as ``fallback::<api>``).
* When the lazy path rejects a call (a core shape/dtype error), the same call is
  re-run eagerly: TensorFlow then raises its own exception type and message at the
  call; if TensorFlow accepts it instead, its result is used (a counted fallback),
  so the lazy path can be stricter than TF but never wrong.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import tensorflow as tf

import lazycore as lc

from . import _state
from ._graph import building, to_tensor
from ._tensor import LazyTensor, handle, new, observe

_TF_DIR = os.path.dirname(tf.__file__)
_TF_DIRS = (_TF_DIR, os.path.join(os.path.dirname(_TF_DIR), "keras"))
_HERE = os.path.dirname(os.path.abspath(__file__))
_WRAPPERS = {"error_handler", "op_dispatch_handler", "wrapper", "wrapped", "new_func",
             "_wrapper", "__call__"}


_PRINTS = {"print_v2", "Print"}  # printing inside a tape observes, nothing is lost
_CORE_DTYPES = {tf.bool, tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16, tf.uint32,
                tf.uint64, tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.complex64,
                tf.complex128}


def _entry_api() -> str | None:
    """Name of the TF function the user called that is now converting our value."""
    frame = sys._getframe(2)
    names = []
    while frame is not None:
        fname = frame.f_code.co_filename
        if fname.startswith(_HERE):
            frame = frame.f_back
            continue
        if not fname.startswith(_TF_DIRS):
            break
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    for name in reversed(names):
        if name not in _WRAPPERS:
            return name
    return None


def _display(api: str | None) -> str:
    """A readable name for the TF function found on the stack (``_rfft`` -> ``rfft``)."""
    name = (api or "convert_to_tensor").lstrip("_")
    return "convert_to_tensor" if name.startswith("convert_to_tensor") else name


def to_eager(x: LazyTensor, dtype=None) -> tf.Tensor:
    """``__tf_tensor__``: an eager ``tf.Tensor`` holding the value (syncs it)."""
    if dtype is not None and tf.as_dtype(dtype) != x.dtype:
        raise ValueError(f"Tensor conversion requested dtype {tf.as_dtype(dtype).name} for "
                         f"Tensor with dtype {x.dtype.name}: {x!r}")
    if building():  # inside a tf.function trace: the graph tensor standing for it
        return to_tensor(x)
    api = _entry_api()
    if _state.active_tapes and (api or "") not in _PRINTS:
        from ._tape import check_leaving

        check_leaving(_display(api), [x])
    if api is not None and not api.startswith("convert_to_tensor") and api not in _PRINTS:
        lc.metrics.inc("fallbacks")
        lc.metrics.inc(f"fallback::{api}")
    return tf.constant(observe(x, f"fallback:{api}" if api is not None and not
                                    api.startswith("convert_to_tensor") else "convert"))


def _parts(v) -> tuple:
    """An IndexedSlices' parts (a tape gradient's are lazy), else the value itself."""
    return (v.values, v.indices, v.dense_shape) if isinstance(v, tf.IndexedSlices) else (v,)


def wrap_result(result):
    """Eager results (nests of tf.Tensor / numpy) -> lazy values."""
    def one(v):
        if isinstance(v, tf.Tensor) and v.dtype in _CORE_DTYPES:
            return new(lc.asarray(np.asarray(v.numpy())))
        return v  # e.g. tf.string results stay eager: the core holds numbers only
    return tf.nest.map_structure(one, result)


def run_eager(name: str, api, args, kwargs, *, count: bool = True):
    """Call the TF API on eager copies of every lazy argument (one sync for all)."""
    leaves = [p for v in tf.nest.flatten((args, kwargs)) for p in _parts(v)
              if isinstance(p, LazyTensor)]
    if _state.active_tapes:
        from ._tape import check_leaving

        check_leaving(name, leaves)
    eager = {id(v): tf.constant(h) for v, h in zip(leaves, lc.to_numpy_many(
        [handle(v) if v.__class__ is LazyTensor else v._read() for v in leaves],
        cause=f"fallback:{name}"), strict=True)}

    def one(v):
        if isinstance(v, tf.IndexedSlices):
            return tf.IndexedSlices(*[eager.get(id(p), p) for p in _parts(v)])
        return eager[id(v)] if isinstance(v, LazyTensor) else v
    e_args, e_kwargs = tf.nest.map_structure(one, (args, kwargs))
    result = api(*e_args, **e_kwargs)
    if count:
        lc.metrics.inc("fallbacks")
        lc.metrics.inc(f"fallback::{name}")
    return wrap_result(result)


def oracle(name: str, api, args, kwargs, error: BaseException):
    """The lazy path refused the call: let TensorFlow decide (raise, or compute)."""
    try:
        out = run_eager(name, api, args, kwargs)
    except Exception as tf_error:
        tf_error.__cause__ = None
        tf_error.__suppress_context__ = True
        raise tf_error from None
    if lc.settings.debug:
        print(f"[lazy_tf] {name}: lazy path refused ({error}); TF computed it eagerly",
              file=sys.stderr)
    return out
