"""The ``lazy`` device: PrivateUse1 renamed, plus Python kernels for allocation.

With these, ``torch.zeros(3, device="lazy")``, ``cpu_tensor.to("lazy")`` and
``module.to("lazy")`` produce ``LazyTensor``s. Factories that PyTorch implements as
"allocate, then fill in place" need only ``empty``; those implemented as
``out=`` kernels (arange, linspace, randperm) get direct kernels here.
"""

from __future__ import annotations

import threading
import weakref

import torch

import lazycore as lc

from . import _autocast, _serialization, _tensor
from ._convert import cpu_to_core, np_dtype
from ._tensor import LazyTensor, to_cpu, wrap
from .lowerings import random as _random

_LIB = None


class _DeviceModule:
    """What ``torch.lazy`` answers (seeding, availability) for PyTorch's device hooks."""

    @staticmethod
    def is_initialized() -> bool:
        return True

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def _is_in_bad_fork() -> bool:
        return False

    @staticmethod
    def manual_seed_all(seed: int) -> None:
        _random.manual_seed(seed)

    manual_seed = manual_seed_all

    @staticmethod
    def synchronize(device=None) -> None:
        lc.wait()

    @staticmethod
    def get_amp_supported_dtype() -> list:
        """``torch.autocast("lazy")``: PyTorch's own AutocastPrivateUse1 cast policy
        applies; both half types are real XLA types here."""
        return [torch.float16, torch.bfloat16]


def _dtype(dtype):
    return dtype if dtype is not None else torch.get_default_dtype()


def _empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    # a fresh handle: ``torch.ones``/``full`` are empty + fill_, several per generated token
    return wrap(lc.numeric.zeros(tuple(size), np_dtype(_dtype(dtype))), fresh=True)


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return _empty(size, dtype)


def _copy_from(src, dst, non_blocking=False):
    if isinstance(dst, LazyTensor):
        from .lowerings.special import copy_

        copy_(None, (dst, src), {})
    else:
        with torch._C._DisableTorchDispatch():
            dst.copy_(to_cpu(src))
    return dst


def _host_factory(fn):
    """Factories whose exact values PyTorch defines (arange, linspace): computed on the
    host once and entered as device data."""
    def kernel(*args, dtype=None, layout=None, device=None, pin_memory=None, **kw):
        host = fn(*args, dtype=dtype, **kw)
        if (fn is torch.arange and host.numel() and all(type(a) is int for a in args)
                and not host.dtype.is_floating_point and host.dtype not in _NOT_IOTA):
            # integer ranges (positions, cache indices: several per generated token) are
            # start + step * iota in the program: no host transfer, and the same program
            # for every start (its scalars are parameters)
            start, step = (0, 1) if len(args) == 1 else (args[0], args[2] if len(args) > 2 else 1)
            return wrap(lc.numeric.arange(start, step=step, length=host.numel(),
                                          dtype=np_dtype(host.dtype)))
        return wrap(cpu_to_core(host))
    return kernel


_NOT_IOTA = (torch.bool, torch.complex64, torch.complex128)
# factories whose device kernels are per-backend stubs (no composite reaches the trace)
_HOST_FACTORIES = {"triu_indices": torch.triu_indices, "tril_indices": torch.tril_indices,
                   "kaiser_window": torch.kaiser_window,
                   "kaiser_window.periodic": torch.kaiser_window,
                   "kaiser_window.beta": torch.kaiser_window}


def _randperm(n, *, dtype=None, layout=None, device=None, pin_memory=None, generator=None):
    return wrap(_random.randperm(n, dtype or torch.int64))


_PINNED: set = set()  # storage addresses of CPU tensors "pinned" for the lazy device


def _pin_memory(self, device=None):
    """``Tensor.pin_memory()`` / ``DataLoader(pin_memory=True)``: with ``lazy`` as the
    current accelerator PyTorch asks the PrivateUse1 hooks for a pinned allocator, which
    a Python backend cannot provide. Page-locking buys nothing here (XLA's host device
    reads ordinary memory), so pinning is a contiguous copy that reports pinned."""
    if device is not None and torch.device(device).type not in ("lazy", "cpu"):
        raise RuntimeError(f"pin_memory: lazy_torch cannot pin memory for device {device}")
    out = self.clone(memory_format=torch.contiguous_format)
    ptr = out.untyped_storage().data_ptr()
    if ptr:
        _PINNED.add(ptr)
        weakref.finalize(out.untyped_storage(), _PINNED.discard, ptr)
    return out


def _is_pinned(self, device=None):
    return self.numel() > 0 and self.untyped_storage().data_ptr() in _PINNED


def _one_hot(self, num_classes=-1):
    """``F.one_hot``: PyTorch skips its class-range check on devices other than CPU and
    CUDA (its decomposition gives an all-zero row for a bad class); eager CPU raises, so
    the range is checked in the next compiled program."""
    from ._tensor import read

    if self.dtype != torch.int64:  # eager CPU's check (skipped for other devices)
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if not isinstance(self, LazyTensor) or num_classes < 0:
        return torch.ops.aten.one_hot.default.decompose(self, num_classes)  # eager's checks
    out = torch.eq(self.unsqueeze(-1), torch.arange(num_classes, device=self.device)).to(torch.int64)
    if self.numel():
        lc.checks.index_in_range(read(self), num_classes, RuntimeError,
                                 "Class values must be non-negative and smaller than "
                                 "num_classes.", op="aten.one_hot", negative=False,
                                 guards=(read(out),))
    return out


_THREAD = threading.local()


def _keep_ties() -> None:
    """``module.to(lazy)`` keeps each Parameter object, as ``.to("cuda")`` does through
    ``param.data =``: an optimizer built before the move (pytorch/examples'
    forward-forward layers) updates the module's parameters, and tied parameters (GPT-2's
    LM head and token embedding) stay one. A CPU parameter cannot take a lazy value
    through ``param.data =`` (different tensor types), so ``nn.Module._apply`` makes a new
    Parameter; the outermost ``_apply`` here swaps each old Parameter with its converted
    one (``torch.utils.swap_tensors``) and points every slot that held it at it (an RNN's
    weak references to its weights are dropped first and rebuilt after; a parameter with
    other weak references gets the converted one). (Swapping globally,
    ``set_swap_module_params_on_conversion``, changes ``load_state_dict`` for every module
    in the process and fails for RNNs.)"""
    original = torch.nn.Module._apply
    if getattr(original, "_lazy_keeps_ties", False):
        return

    def _apply(self, fn, recurse=True):
        if getattr(_THREAD, "depth", 0) or not recurse:
            return original(self, fn, recurse)
        slots = [(m, k, p) for m in self.modules() for k, p in m._parameters.items()
                 if p is not None]
        _THREAD.depth = 1
        try:
            out = original(self, fn, recurse)
        finally:
            _THREAD.depth = 0
        first, rnns = {}, [m for m in self.modules() if getattr(m, "_flat_weight_refs", None)]
        for rnn in rnns:  # its weak references to its weights would refuse the swap
            rnn._flat_weight_refs = []
        for module, key, before in slots:
            now = module._parameters.get(key)
            if now is None or now is before:
                continue
            if id(before) not in first:
                try:
                    torch.utils.swap_tensors(before, now)
                    now = before
                except RuntimeError:  # other weak references: a new Parameter
                    pass
                first[id(before)] = now
            module._parameters[key] = first[id(before)]
        for rnn in rnns:
            rnn._init_flat_weights()
        return out

    _apply._lazy_keeps_ties = True
    torch.nn.Module._apply = _apply


def setup() -> torch.device:
    global _LIB
    if _LIB is not None:
        return _tensor.DEVICE
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    _setup_privateuseone_for_python_backend("lazy", backend_module=_DeviceModule())
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("empty.memory_format", _empty, "PrivateUse1")
    lib.impl("empty_strided", _empty_strided, "PrivateUse1")
    lib.impl("_efficientzerotensor", _empty, "PrivateUse1")  # backward formulas' zeros (sgn)
    lib.impl("_copy_from", _copy_from, "PrivateUse1")
    lib.impl("arange.start_step", _host_factory(torch.arange), "PrivateUse1")
    lib.impl("arange.start", _host_factory(torch.arange), "PrivateUse1")
    lib.impl("arange", _host_factory(torch.arange), "PrivateUse1")
    lib.impl("linspace", _host_factory(torch.linspace), "PrivateUse1")
    lib.impl("eye", _host_factory(torch.eye), "PrivateUse1")
    lib.impl("eye.m", _host_factory(torch.eye), "PrivateUse1")
    for name, fn in _HOST_FACTORIES.items():
        lib.impl(name, _host_factory(fn), "PrivateUse1")
    lib.impl("randperm", _randperm, "PrivateUse1")
    lib.impl("_local_scalar_dense", lambda t: _tensor.to_cpu(t, cause="item").item(),
             "PrivateUse1")  # torch.tensor([lazy 0-dim tensors]) reads them below Python
    lib.impl("one_hot", _one_hot, "AutogradPrivateUse1")
    lib.impl("_pin_memory", _pin_memory, "CPU")
    lib.impl("is_pinned", _is_pinned, "CPU")
    _LIB = lib
    _tensor.DEVICE = torch.device("lazy", 0)
    _keep_ties()
    _autocast.install()
    _serialization.install()
    return _tensor.DEVICE

