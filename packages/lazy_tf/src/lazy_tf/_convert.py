"""TF values -> core handles, with TensorFlow's conversion rules.

An op infers its dtype from its first tensor argument and converts the other
arguments to it (TF's eager fast path): Python scalars adopt the tensor's dtype,
NumPy arrays and lists are converted by TensorFlow itself with that dtype. Tensors of
different dtypes are never promoted: that raises ``lc.DTypeError``, which the
dispatcher turns into TensorFlow's own exception (see ``_fallback.oracle``).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import lazycore as lc

from . import _state
from ._dtypes import to_np, to_tf
from ._tensor import LazyTensor, handle, is_lazy_class

_PY_SCALARS = (bool, int, float, complex)
_TENSORS = (LazyTensor, tf.Tensor, tf.Variable)
_TENSOR_CLASSES: dict[type, bool] = {}


def is_tensor(v) -> bool:
    """``isinstance(v, _TENSORS)``, cached per class (the classes are ABCs: slow checks)."""
    cls = v.__class__
    out = _TENSOR_CLASSES.get(cls)
    if out is None:
        out = _TENSOR_CLASSES[cls] = issubclass(cls, _TENSORS)
    return out


def dtype_of(v):
    """numpy dtype of a tensor-like, None for Python values."""
    if is_lazy_class(v.__class__):  # the core's dtype: no tf.DType hashing
        return handle(v).node.aval.dtype
    return to_np(v.dtype) if is_tensor(v) else None


_SAMPLES = {bool: True, int: 1, float: 0.5, complex: 0.5 + 1j}  # in range for every dtype
_ACCEPTS: dict = {}


def scalar_accepted(kind: type, dtype: np.dtype) -> bool:
    """Does TF convert Python scalars of type ``kind`` to ``dtype``? TF's answer depends on
    the type only (besides int ranges) and is irregular (``True`` converts to int32 but
    not to int8), so TF is asked once per pair."""
    key = (kind, dtype)
    out = _ACCEPTS.get(key)
    if out is None:
        try:
            tf.convert_to_tensor(_SAMPLES[kind], dtype=to_tf(dtype))
            out = True
        except (TypeError, ValueError):
            out = False
        _ACCEPTS[key] = out
    return out


def int_range(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _check_scalar(value, dtype: np.dtype) -> None:
    kind = type(value)
    if not scalar_accepted(kind, dtype):
        raise lc.DTypeError(f"cannot convert {value!r} to a tensor of dtype {dtype}")
    if kind is int and lc.dtypes.is_integer(dtype):
        lo, hi = int_range(dtype)
        if not lo <= value <= hi:
            raise lc.DTypeError(f"{value} does not fit {dtype}")


def _inside_tapes(h: lc.Tensor) -> lc.Tensor:
    """What an op inside recording tapes reads for ``h``: the graph a tape recorded for
    a value a sync has since re-pointed at device data (ops after the sync extend it,
    or the gradient through them is lost; the graph is computed again)."""
    made = next((n for tape in _state.active_tapes
                 if tape._recording and (n := tape._made.get(h)) is not None), h.node)
    used = h if made is h.node else lc.Tensor(made)
    for tape in _state.active_tapes:
        tape._used_input(h, used)
    return used


def to_core(v, dtype=None) -> lc.Tensor:
    """One argument as a core handle; ``dtype`` is what the op expects (numpy dtype)."""
    if is_lazy_class(v.__class__):
        h = v._read() if v.__class__ is not LazyTensor else handle(v)
        if _state.active_tapes:
            h = _inside_tapes(h)
        if dtype is not None and h.dtype != dtype:
            raise lc.DTypeError(f"expected a {dtype} tensor, got {h.dtype}")
        return h
    if isinstance(v, lc.Tensor):  # already a core handle (internal composition)
        if dtype is not None and v.dtype != dtype:
            raise lc.DTypeError(f"expected a {dtype} tensor, got {v.dtype}")
        return v
    if type(v) in _PY_SCALARS:
        target = dtype if dtype is not None else lc.dtypes.result_type([type(v)], "strict")
        _check_scalar(v, target)
        return lc.scalar(v, target)
    if isinstance(v, tf.Tensor | tf.Variable):
        if _state.capture[0] is not None and isinstance(v, tf.Variable):
            raise lc.subprogram.CaptureError(  # its value would be baked into the capture
                f"tf.Variable {v.name} read while a tf.function is captured")
        if dtype is not None and to_np(v.dtype) != dtype:
            raise lc.DTypeError(f"expected a {dtype} tensor, got {v.dtype.name}")
        # an eager value a recording tape differentiates is that tape's source handle (a
        # variable is read once, as TF's tapes record it)
        v = v.read_value() if isinstance(v, tf.Variable) and _state.active_tapes else v
        found = [h for h in (tape.source(v) for tape in _state.active_tapes) if h is not None]
        return found[0] if found else _device_data(np.asarray(v.numpy()))
    inner = lazy_inside(v)
    if inner is not None:
        return to_core(inner, dtype)
    tf_dtype = None if dtype is None else tf.as_dtype(dtype)
    try:
        t = tf.convert_to_tensor(v, dtype=tf_dtype)
    except (TypeError, ValueError):
        if tf_dtype is None:
            raise
        t = tf.convert_to_tensor(v)  # TF then reports the dtype mismatch itself
    if is_lazy_class(t.__class__):  # a lazy composite (IndexedSlices) made dense
        return to_core(t, dtype)
    return host_data(np.asarray(t.numpy()))


def host_data(arr: np.ndarray) -> lc.Tensor:
    """Host values as device data; an integer array's range is kept, so the range checks
    of indices and labels made on the host (``tf.data``, NumPy) are decided at the call."""
    value = lc.asarray(arr)
    lc.checks.remember_range(value, arr)  # (integer arrays only)
    return value


_SCALARS: dict = {}  # (dtype, bytes) -> device data of an eager scalar
_MAX_SCALARS = 1024


def _device_data(arr: np.ndarray) -> lc.Tensor:
    """An eager tensor's value as device data. Scalars are uploaded once per value:
    Keras's optimizers make the same eager constants (``beta_1``, ``epsilon`` cast to
    the variable's dtype) for every variable at every step, and an upload costs more
    than the op it feeds. Device data is immutable, so sharing a handle is safe; an
    ``ltf.Variable`` uploads its own initial value (two variables sharing one input of
    step 1's program would make step 2's program another one). Cached handles sort
    with variables (see ``_variable``)."""
    if arr.ndim:
        return host_data(arr)
    key = (arr.dtype, arr.tobytes())
    out = _SCALARS.get(key)
    if out is None:
        if len(_SCALARS) >= _MAX_SCALARS:
            _SCALARS.clear()
        from ._variable import _variable_seq

        out = _SCALARS[key] = lc.asarray(arr)
        out.seq = _variable_seq()  # sorts as state does: first made in step 1 or not,
    return out                     # the step's program is the same


def lazy_inside(v):
    """The lazy value a wrapper holds (a Keras variable with an ``ltf.Variable`` value,
    see ``lazy_tf.keras``), or None."""
    d = getattr(v, "__dict__", None)
    inner = d.get("_value") if d else None
    return inner if inner is not None and is_lazy_class(inner.__class__) else None


def same_dtype(*values, dtype=None) -> list[lc.Tensor]:
    """Convert several arguments the way one TF op does: the first tensor's dtype wins,
    everything else must match it (no promotion)."""
    if dtype is None:
        for v in values:
            dtype = dtype_of(v)
            if dtype is not None:
                break
    out = [to_core(v, dtype) for v in values]
    first = out[0].dtype
    for t in out[1:]:
        if t.dtype != first:
            raise lc.DTypeError(f"cannot combine tensors of dtypes {first} and {t.dtype}")
    return out


def broadcast(*values, dtype=None) -> list[lc.Tensor]:
    """``same_dtype`` + NumPy broadcasting (TF binary ops broadcast the same way)."""
    if dtype is None and len(values) == 2 and not _state.active_tapes:
        # fast path: two lazy values of one aval (a tape must see them in ``to_core``)
        a, b = values
        if a.__class__ is LazyTensor and b.__class__ is LazyTensor:
            ha, hb = handle(a), handle(b)
            if ha.node.aval == hb.node.aval:
                return [ha, hb]
    ts = same_dtype(*values, dtype=dtype)
    shape = lc.numeric.broadcast_shapes(*[t.shape for t in ts])
    return [lc.numeric.broadcast_to(t, shape) for t in ts]


def static(v):
    """A value needed while tracing (axis, shape, perm, ...) as Python ints/lists.
    A lazy value here is synced (data-dependent), a TF tensor read on the host."""
    if v is None or isinstance(v, int | float | str | bool):
        return v
    if is_lazy_class(v.__class__):
        return np.asarray(lc.to_numpy_many([handle(v)], cause="data_dependent")[0]).tolist()
    if isinstance(v, tf.Tensor | tf.Variable | np.ndarray | np.generic):
        return np.asarray(v).tolist()
    if isinstance(v, tf.TensorShape):
        return v.as_list()
    return [static(x) for x in v] if isinstance(v, list | tuple) else v


def static_int(v) -> int:
    out = static(v)
    if isinstance(out, list):
        if len(out) != 1:
            raise lc.ShapeError(f"expected a scalar, got {out}")
        out = out[0]
    return int(out)


def np_dtype(dtype):
    """A TF dtype argument (DType, string, numpy type) or None -> numpy dtype or None."""
    return None if dtype is None else to_np(dtype)
