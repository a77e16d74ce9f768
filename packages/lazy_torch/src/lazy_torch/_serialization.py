"""``torch.save`` / ``torch.load`` of lazy tensors, ``weights_only=True`` included.

A lazy tensor pickles as a CPU copy of its value plus :func:`restore`, and the CPU
copy's storage is saved under the location tag ``lazy:0`` (a serialization package
registered here), so ``torch.load`` treats it like a CUDA checkpoint: by default the
tensors come back on the lazy device, ``map_location="cpu"`` (or a dict / callable
mapping ``lazy:0`` elsewhere) gives CPU tensors, ``map_location=lazy_torch.device()``
lazy ones. :func:`restore` is on ``torch.serialization``'s safe-globals list: it only
moves a CPU tensor to the lazy device, so the default ``weights_only=True`` loads.
"""

from __future__ import annotations

import torch

from . import _tensor

_SAVING: set = set()  # storages (by StorageImpl address) of CPU copies being pickled
_LOADING: set = set()  # storages restored from a lazy location: rebuild on the lazy device


def reduce(t) -> tuple:
    cpu = _tensor.to_cpu(t)
    _SAVING.add(cpu.untyped_storage()._cdata)
    return (restore, (cpu, t.requires_grad))


def restore(cpu: torch.Tensor, requires_grad: bool):
    """A loaded tensor: on the lazy device unless ``map_location`` sent its storage
    elsewhere."""
    key = cpu.untyped_storage()._cdata
    if key in _LOADING:
        _LOADING.discard(key)
        return cpu.to(_tensor.DEVICE).requires_grad_(requires_grad)
    return cpu.requires_grad_(requires_grad)


def _tag(storage):
    key = getattr(storage, "_cdata", None)
    if key in _SAVING:
        _SAVING.discard(key)
        return f"{_tensor.DEVICE.type}:0"
    return None


def _deserialize(storage, location: str):
    if location.startswith(_tensor.DEVICE.type):
        _LOADING.add(storage._cdata)
        return storage  # the bytes stay on the host; restore() makes the lazy tensor
    return None


_INSTALLED = []


def install() -> None:
    if _INSTALLED:
        return
    torch.serialization.register_package(5, _tag, _deserialize)
    torch.serialization.add_safe_globals([restore, _tensor._restore])
    _INSTALLED.append(True)
