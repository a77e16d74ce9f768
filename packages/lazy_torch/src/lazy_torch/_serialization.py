"""``torch.save`` / ``torch.load`` of lazy tensors, ``weights_only=True`` included.

Saving: a lazy tensor pickles as a CPU copy of its value plus :func:`restore`, and the
CPU copy's storage is saved under the location tag ``lazy:0`` (a serialization package
registered here), so ``torch.load`` treats it like a CUDA checkpoint.

Loading: a storage whose location (after ``map_location``: a device, a string, a dict
or a callable) is the lazy device is marked by :func:`_deserialize`; PyTorch then
rebuilds each tensor over it with ``torch._utils._rebuild_tensor``, which
:func:`_rebuild_tensor` (installed in its place) answers with a view of one lazy copy
of the whole storage -- so a CPU checkpoint loaded with
``map_location=lazy_torch.device()`` gives lazy tensors, and tensors that shared a
storage in the file still share one after loading, as they would on CUDA. Other
storages take PyTorch's own path. :func:`restore` is on ``torch.serialization``'s
safe-globals list: it only marks requires_grad on a tensor rebuilt as above, so the
default ``weights_only=True`` loads.
"""

from __future__ import annotations

import copyreg

import torch

from . import _tensor

_SAVING: set = set()  # storages (by StorageImpl address) of CPU copies being pickled
_MARK = "_lazy_copies"  # attribute of a loaded storage mapped to the lazy device


def reduce(t) -> tuple:
    cpu = _tensor.to_cpu(t)
    _SAVING.add(cpu.untyped_storage()._cdata)
    return (restore, (cpu, t.requires_grad))


def restore(t: torch.Tensor, requires_grad: bool):
    """A loaded tensor: already on the lazy device unless ``map_location`` sent its
    storage elsewhere."""
    return t.requires_grad_(requires_grad)


def _tag(storage):
    key = getattr(storage, "_cdata", None)
    if key in _SAVING:
        _SAVING.discard(key)
        return f"{_tensor.DEVICE.type}:0"
    return None


def _deserialize(storage, location: str):
    if location.startswith(_tensor.DEVICE.type):
        setattr(storage, _MARK, {})  # the bytes stay on the host until rebuilt
        return storage
    return None


def _lazy_over(storage, offset, size, stride, dtype):
    """The tensor ``(size, stride, offset)`` over a marked storage: a view of the
    storage's one lazy copy (per dtype), so aliasing in the file is kept."""
    copies = getattr(storage, _MARK)
    base = copies.get(dtype)
    if base is None:
        n = storage.nbytes() // torch.empty((), dtype=dtype).element_size()
        flat = torch.empty(0, dtype=dtype).set_(storage, 0, (n,), (1,))
        base = copies[dtype] = flat.to(_tensor.DEVICE)
    return base.as_strided(tuple(size), tuple(stride), offset)


def _wrap_rebuild(original):
    def _rebuild_tensor(storage, storage_offset, size, stride):
        untyped = getattr(storage, "_untyped_storage", storage)
        if hasattr(untyped, _MARK):
            return _lazy_over(untyped, storage_offset, size, stride, storage.dtype)
        return original(storage, storage_offset, size, stride)

    _rebuild_tensor._lazy_original = original
    return _rebuild_tensor


_INSTALLED = []


def install() -> None:
    if _INSTALLED:
        return
    torch.serialization.register_package(5, _tag, _deserialize)
    torch.serialization.add_safe_globals([restore, _tensor._restore])
    # pickling / torch.save of a LazyTensor: its value as a CPU tensor under the lazy
    # location (the pickler's dispatch table comes before ``__reduce_ex__``)
    copyreg.pickle(_tensor.LazyTensor, reduce)
    if not hasattr(torch._utils._rebuild_tensor, "_lazy_original"):
        torch._utils._rebuild_tensor = _wrap_rebuild(torch._utils._rebuild_tensor)
    _INSTALLED.append(True)
