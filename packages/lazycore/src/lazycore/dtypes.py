"""Dtypes and the promotion policies the core's own helpers use.

Dtypes are plain ``numpy.dtype`` objects (``bfloat16`` from ml_dtypes). Promotion is
a frontend's decision: lazy_numpy asks NumPy itself (``ufunc.resolve_dtypes``),
lazy_torch computes ``torch.result_type`` (c10's dim / zero-dim / wrapped-scalar
categories, ``lazy_torch/lowerings/common.py``) and passes ``dtype=`` to
``composites.promote``. Two policies remain here:

* ``"numpy"``  NEP 50: Python scalars are weak, ``float64`` by default (the default
  of ``composites.promote``/``elementwise``/``where``).
* ``"strict"`` TensorFlow: tensors must already agree; a lone Python scalar takes
  TF's default dtype of its kind (lazy_tf's conversion of scalars).
"""

from __future__ import annotations

from collections.abc import Iterable

import ml_dtypes
import numpy as np

from .errors import DTypeError

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (np.dtype(t) for t in ("float16", "float32", "float64"))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

ALL = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
       float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL}


def canonical(dtype) -> np.dtype:
    """Any dtype-like (name, numpy type, numpy dtype) -> numpy dtype we support."""
    if isinstance(dtype, np.dtype) and dtype in ALL:
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise DTypeError(f"not a dtype: {dtype!r}") from e
    if d not in ALL:
        raise DTypeError(f"dtype {d} is not supported")
    return d


def is_bool(d) -> bool:
    return np.dtype(d) == bool_


def is_integer(d) -> bool:
    return np.dtype(d).kind in "iu"


def is_unsigned(d) -> bool:
    return np.dtype(d).kind == "u"


def is_floating(d) -> bool:
    d = np.dtype(d)
    return d.kind == "f" or d == bfloat16


def is_complex(d) -> bool:
    return np.dtype(d).kind == "c"


def is_inexact(d) -> bool:
    return is_floating(d) or is_complex(d)


def category(d) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    if is_bool(d):
        return 0
    if is_integer(d):
        return 1
    return 2 if is_floating(d) else 3


def finfo(d):
    return ml_dtypes.finfo(d) if np.dtype(d) == bfloat16 else np.finfo(d)


def iinfo(d):
    return np.iinfo(d)


def real_dtype(d) -> np.dtype:
    """complex64 -> float32, complex128 -> float64; others unchanged."""
    d = np.dtype(d)
    return {complex64: float32, complex128: float64}.get(d, d)


_WEAK_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}


def _pair(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if bfloat16 in (a, b):
        other = b if a == bfloat16 else a
        if category(other) <= 1:
            return bfloat16
        if other == float16:
            return float32
        return other
    return np.promote_types(a, b)


def _promote_tensors(dts: list[np.dtype]) -> np.dtype:
    out = dts[0]
    for d in dts[1:]:
        out = _pair(out, d)
    return out


def result_type(args: Iterable, policy: str = "numpy", defaults=None) -> np.dtype:
    """Promote dtypes and weak Python scalar types (``bool``/``int``/``float``/``complex``).

    ``args`` mixes numpy dtypes (strong) and Python types (weak scalars).
    ``defaults`` maps category -> default dtype for weak-only or category-lifting cases.
    """
    defaults = defaults or DEFAULTS[policy]
    strong = [canonical(a) for a in args if not isinstance(a, type)]
    weak = [_WEAK_CATEGORY[a] for a in args if isinstance(a, type)]
    if not strong:
        return defaults[max(weak)]
    if policy == "strict":
        if any(d != strong[0] for d in strong):
            names = ", ".join(str(d) for d in strong)
            raise DTypeError(f"cannot combine tensors of dtypes {names} without a cast")
        return strong[0]
    out = _promote_tensors(strong)
    if weak and max(weak) > category(out):
        cat = max(weak)
        if cat == 3 and category(out) == 2:
            return complex128 if out == float64 else complex64
        return defaults[cat]
    return out


DEFAULTS = {
    "numpy": {0: bool_, 1: int64, 2: float64, 3: complex128},
    "strict": {0: bool_, 1: int32, 2: float32, 3: complex128},
}
