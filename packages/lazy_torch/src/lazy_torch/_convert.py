"""Dtypes and host data: torch dtypes <-> core (NumPy) dtypes, CPU tensors <-> core values."""

from __future__ import annotations

import numpy as np
import torch

import lazycore as lc

_PAIRS = [
    (torch.bool, lc.dtypes.bool_), (torch.uint8, lc.dtypes.uint8), (torch.int8, lc.dtypes.int8),
    (torch.int16, lc.dtypes.int16), (torch.int32, lc.dtypes.int32),
    (torch.int64, lc.dtypes.int64), (torch.uint16, lc.dtypes.uint16),
    (torch.uint32, lc.dtypes.uint32), (torch.uint64, lc.dtypes.uint64),
    (torch.float16, lc.dtypes.float16), (torch.bfloat16, lc.dtypes.bfloat16),
    (torch.float32, lc.dtypes.float32), (torch.float64, lc.dtypes.float64),
    (torch.complex64, lc.dtypes.complex64), (torch.complex128, lc.dtypes.complex128),
]
TO_NP: dict[torch.dtype, np.dtype] = dict(_PAIRS)
TO_TORCH: dict[np.dtype, torch.dtype] = {n: t for t, n in _PAIRS}


def np_dtype(dtype: torch.dtype) -> np.dtype:
    try:
        return TO_NP[dtype]
    except KeyError:
        raise TypeError(f"lazy_torch: dtype {dtype} is not supported") from None


def torch_dtype(dtype) -> torch.dtype:
    return TO_TORCH[np.dtype(dtype)]


def sparse_error(where: str) -> NotImplementedError:
    return NotImplementedError(f"lazy_torch: sparse tensors are not supported on the lazy "
                               f"device ({where}); use .to_dense()")


def cpu_to_numpy(t: torch.Tensor) -> np.ndarray:
    """A host CPU tensor as a NumPy array (bfloat16 via ml_dtypes)."""
    if t.layout != torch.strided:  # torch.spmm(cpu_sparse, lazy)
        raise sparse_error(f"a {t.layout} operand")
    t = t.detach().resolve_conj().resolve_neg()  # each returns t itself when its bit is unset
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(lc.dtypes.bfloat16)
    return t.numpy()


def numpy_to_cpu(a, *, owned: bool = False) -> torch.Tensor:
    """A CPU tensor with ``a``'s value; ``owned``: ``a`` is a fresh copy nobody else
    holds (``lc.to_numpy``'s result), so it is wrapped without a second copy."""
    a = np.asarray(a)
    if a.dtype == lc.dtypes.bfloat16:
        return torch.from_numpy(a.copy(order="C").view(np.int16)).view(torch.bfloat16)
    if owned and a.flags.writeable and a.flags.c_contiguous:
        return torch.from_numpy(a)
    return torch.from_numpy(np.array(a, copy=True))


def cpu_to_core(t: torch.Tensor) -> lc.Tensor:
    host = cpu_to_numpy(t)
    value = lc.asarray(host)
    if host.dtype.kind in "iu":  # indices and labels: range checks decided on the host
        lc.checks.remember_range(value, host)
    return value
