"""``LazyTensor``: a ``torch.Tensor`` wrapper subclass over one ``lazycore.Tensor``,
and the storage model that gives views and in-place ops eager PyTorch semantics.

Storage model: a base tensor owns a ``Cell`` holding the core value of its whole
(contiguous) storage. A view shares its base's cell and remembers only what the
wrapper itself reports -- size, stride, storage offset -- so every view kind
(slices, transposes, ``as_strided``, ``diagonal``, ...) is handled by one rule:

* reading a view after its base changed re-derives it (a reshape of the cell for
  contiguous views, otherwise a gather of the storage positions it covers -- for a
  view in another dtype, ``view(dtype)``/``view_as_real``, positions in the storage
  read as that dtype: ``lazycore``'s ``reinterpret``);
* writing through a view scatters into the cell at those positions and bumps the
  cell's version, so every other view re-derives on its next read.

Core handles are re-pointed with ``lc.Tensor.assign`` so that a value keeps one
handle (the runtime tracks live handles).
"""

from __future__ import annotations

import math

import torch

import lazycore as lc
from lazycore.composites.indexing import write_elements

from ._convert import TO_NP, TO_TORCH, cpu_to_numpy

DEVICE = None  # torch.device("lazy", 0), created by _device.setup() after the rename
_make = torch.Tensor._make_wrapper_subclass
_inference_enabled = torch.is_inference_mode_enabled
_InferenceMode = torch._C._InferenceMode

FULL, RESHAPE, GENERAL, REINTERPRET, MATH = 0, 1, 2, 3, 4
# REINTERPRET: GENERAL in another dtype; MATH: a conj()/neg view (``_math``) of any layout


class Cell:
    """The storage of a base tensor and its views: one core value, a version, and the
    element writes (``t[i, j] = 3.0``) held since the value was last read."""

    __slots__ = ("_value", "version", "writes", "__weakref__")

    def __init__(self, value: lc.Tensor):
        self._value = value
        self.version = 0
        self.writes = None

    @property
    def value(self) -> lc.Tensor:
        """The storage's value with the held element writes applied (one scatter,
        ``write_elements``), re-pointing its handle so FULL tensors see them too."""
        if self.writes is not None:
            writes, self.writes = self.writes, None
            self._value.assign(write_elements(self._value, writes))
        return self._value


class LazyTensor(torch.Tensor):
    """A tensor on the ``lazy`` device. Ops are recorded (``__torch_dispatch__``),
    not run; observing a value (``item``, ``print``, ``cpu``) syncs what it needs."""

    __torch_function__ = torch._C._disabled_torch_function_impl
    # a new base tensor's layout and version (``build`` sets neither: per-op cost)
    _kind = FULL
    _ver = 0
    _math = None  # (conj, neg) of a math-bit view: its value is the storage's, transformed

    def __lazycore_tensor__(self) -> lc.Tensor:
        """The core handle (``lazycore.interop``: another frontend adopts it, no sync)."""
        return read(self)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """``Tensor.backward`` with the autograd engine on the calling thread. Recording
        a lazy backward is Python work, so the engine's per-device worker thread gains
        nothing (it measured ~8% slower: a hand-off per call), and that thread's queue
        only exists when the engine started after lazy_torch was imported: a CPU
        backward run before the import made every lazy backward fail PyTorch's
        INTERNAL ASSERT (``device_ready_queues_``). The switch is thread-local."""
        previous = _multithreading_enabled()
        _set_multithreading(False)
        try:
            return super().backward(gradient, retain_graph, create_graph, inputs)
        finally:
            _set_multithreading(previous)

    @property
    def data(self):
        return _DATA.__get__(self)

    @data.setter
    def data(self, new):
        """``param.data = other`` (what ``nn.Module._apply`` does for ``.half()``,
        ``.double()``, ``.to(dtype)`` when module params are not swapped): the metadata
        changes in C++, and the storage model must follow, or the tensor would report
        the new dtype over the old values. Eager swaps an inference tensor's data with a
        normal one's; a wrapper's kind is fixed at creation: a clear error here."""
        if isinstance(new, LazyTensor) and new.is_inference() != self.is_inference():
            raise NotImplementedError("lazy_torch: `t.data = other` between an inference "
                                      "tensor and a normal tensor is not supported")
        _DATA.__set__(self, new)
        if isinstance(new, LazyTensor):
            self._cell, self._lc, self._kind, self._ver = new._cell, new._lc, new._kind, new._ver
            self._math = new._math

    def __deepcopy__(self, memo):
        """torch's default deep-copies ``__dict__`` over its clone, this tensor's lazy state
        included: the copy would share this tensor's device buffer, deleted once a sync
        donates it. The copy takes a clone's state (the ``data`` setter's swap). A lazy
        parameter is a LazyTensor marked ``_is_param``: nn.Parameter's copy has no grad."""
        if id(self) not in memo:
            new = super().__deepcopy__(memo)
            new.data = self.detach().clone()
            if getattr(self, "_is_param", False):
                new.grad = None
        return memo[id(self)]

    # -- observation (host side; syncs) -------------------------------------------
    @lc.diagnostics.observes("print")
    def __repr__(self, *, tensor_contents=None):
        body = repr(to_cpu(self))
        extra = [f"device='{DEVICE}'"]
        if self.grad_fn is not None:
            extra.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            extra.append("requires_grad=True")
        return body[:-1] + ", " + ", ".join(extra) + ")"

    __format__ = lc.diagnostics.observes("print")(torch.Tensor.__format__)

    @lc.diagnostics.observes("control_flow")
    def __bool__(self):
        return torch.Tensor.__bool__(self)

    def numpy(self, *, force: bool = False):
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return cpu_to_numpy(to_cpu(self))

    def tolist(self):
        return to_cpu(self).tolist()

    def __array__(self, dtype=None, copy=None):
        arr = cpu_to_numpy(to_cpu(self))
        return arr if dtype is None else arr.astype(dtype)


def _restore(cpu: torch.Tensor, requires_grad: bool):
    """Files pickled before ``_serialization.restore`` existed."""
    return cpu.to(DEVICE).requires_grad_(requires_grad)


_DATA = torch._C.TensorBase.data
_dispatch = None  # bound by _dispatch.py (avoids an import cycle)
_multithreading_enabled = torch._C._is_multithreading_enabled
_set_multithreading = torch._C._set_multithreading_enabled


def contiguous_strides(shape) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def wrap(value: lc.Tensor, *, fresh: bool = False) -> LazyTensor:
    """A new base tensor owning ``value`` (``fresh``: a handle nobody else holds)."""
    if not fresh:
        value = lc.Tensor(value.node)  # the cell's writes must not alias other handles
    aval = value.node.aval
    return build(value, aval.shape, TO_TORCH[aval.dtype])


_META = torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)


def resize(t: LazyTensor, size) -> None:
    """``t.resize_(size)`` of a base tensor, in place: eager keeps the storage's leading
    elements (new ones are uninitialized: zeros here). The wrapper's sizes are set by
    ``set_``'s Meta kernel, which touches no data. ``native::arange``, ``range`` and
    the window functions fill a fresh ``empty(0)`` through ``out=`` this way."""
    if t._kind != FULL:
        raise NotImplementedError("lazy_torch: resizing a view (its storage is its base's) "
                                  "is not supported; resize a tensor that owns its storage")
    size = tuple(int(s) for s in size)
    n, flat = math.prod(size), lc.numeric.reshape(read(t), (-1,))
    kept = lc.ops.slice(flat, start_indices=(0,), limit_indices=(n,), strides=None) \
        if flat.shape[0] >= n else lc.numeric.concatenate(
        [flat, lc.numeric.zeros((n - flat.shape[0],), flat.dtype)])
    strides = torch._prims_common.make_contiguous_strides_for(size) if size else ()
    with torch._C._DisableTorchDispatch():
        torch.ops.aten.set_.source_Storage_storage_offset.redispatch(
            _META, t, t.untyped_storage(), 0, size, strides)
    fresh = wrap(lc.numeric.reshape(kept, size), fresh=True)
    t._cell, t._lc = fresh._cell, fresh._lc


_new_cell = object.__new__


def build(value: lc.Tensor, size: torch.Size, dtype: torch.dtype) -> LazyTensor:
    """``wrap(value, fresh=True)`` when the caller already knows the torch size and
    dtype of ``value`` (the operator plans): the per-op cost of every planned op."""
    t = _make(LazyTensor, size, dtype=dtype, device=DEVICE)
    cell = _new_cell(Cell)  # Cell(value) without a Python __init__ frame
    cell._value = value
    cell.version = 0
    cell.writes = None
    t._cell = cell
    t._lc = value
    return t  # _kind FULL and _ver 0: the class's defaults


def _make_view(src: LazyTensor, size, inference: bool | None = None, **layout) -> LazyTensor:
    """The wrapper of a view of ``src``: an inference tensor exactly when ``src`` is one
    (eager's rule, in and out of ``inference_mode``). A wrapper takes the current mode's
    kind: a view of an inference tensor let writes past eager's "Inplace update to
    inference tensor" check, and a normal tensor's view made in the mode failed."""
    inference = src.is_inference() if inference is None else inference
    if inference == _inference_enabled():
        return _make(LazyTensor, size, device=DEVICE, **layout)
    with _InferenceMode(inference):
        return _make(LazyTensor, size, device=DEVICE, **layout)


def make_view(src: LazyTensor, value: lc.Tensor | None, size, stride, offset,
              dtype: torch.dtype, kind: int | None = None, inference=None) -> LazyTensor:
    """A tensor sharing ``src``'s storage, laid out as (size, stride, offset) in ``dtype``'s
    items (``kind``: its ``layout_kind`` where the caller has it); ``value`` may be None
    where that says FULL (the whole storage); ``size`` and ``stride`` are tuples."""
    t = _make_view(src, size, inference, strides=stride, storage_offset=offset, dtype=dtype)
    t._math = src._math
    _attach(t, src._cell, value, size, stride, offset, dtype, kind)
    return t


def alias(src: LazyTensor, detach: bool = False) -> LazyTensor:
    """A view with ``src``'s own layout (``detach``, ``alias``): nothing to re-derive.
    Eager's ``detach`` of an inference tensor outside ``inference_mode`` is writable
    (it keeps a version counter): here a normal tensor, the only writable wrapper."""
    t = _make_view(src, src.shape, strides=src.stride(), storage_offset=src.storage_offset(),
                   dtype=src.dtype, inference=False if detach and not _inference_enabled() else None)
    t._lc = read(src)
    t._cell, t._kind, t._math = src._cell, src._kind, src._math
    t._ver = src._cell.version
    return t


def math_view(src: LazyTensor, conj: bool, neg: bool) -> LazyTensor:
    """``src._conj()`` / ``src._neg_view()``: eager's math-bit views as views whose value
    is the storage's conjugated / negated (re-derived on read, transformed back on
    write); the bits stay clear, so no PyTorch fallback transforms them twice."""
    c, n = src._math or (False, False)
    math = (c != conj, n != neg)
    t = _make_view(src, src.shape, strides=src.stride(), storage_offset=src.storage_offset(),
                   dtype=src.dtype)
    t._math = math if any(math) else None
    _attach(t, src._cell, apply_math(read(src), (conj, neg)), tuple(src.shape),
            src.stride(), src.storage_offset(), src.dtype)
    return t


def apply_math(value: lc.Tensor, math) -> lc.Tensor:
    conj, neg = math
    if conj and value.dtype.kind == "c":
        value = lc.ops.conj(value)
    return lc.ops.neg(value) if neg else value


_KINDS: dict = {}


def layout_kind(cell: Cell, size: tuple, stride: tuple, offset: int, dtype) -> int:
    """FULL (the whole storage in order), RESHAPE (all of it, contiguous), GENERAL, or
    REINTERPRET (a ``dtype`` other than the storage's)."""
    base = cell._value  # (writes held or not: the same shape and dtype)
    key = (size, stride, offset, base.shape, base.dtype, dtype)
    kind = _KINDS.get(key)
    if kind is None:
        contiguous = offset == 0 and stride == contiguous_strides(size)
        if TO_NP[dtype] != base.dtype:
            if (base.size * base.dtype.itemsize) % dtype.itemsize:
                raise NotImplementedError(  # e.g. view_as_complex of a part of 5 floats
                    f"lazy_torch: a {dtype} view of a storage of {base.size} {base.dtype} "
                    f"items (not a whole number of {dtype} items)")
            kind = REINTERPRET
        elif contiguous and size == base.shape:
            kind = FULL
        elif contiguous and math.prod(size) == math.prod(base.shape):
            kind = RESHAPE
        else:
            kind = GENERAL
        if len(_KINDS) > 4096:
            _KINDS.clear()
        _KINDS[key] = kind
    return kind


def _attach(t, cell: Cell, value, size, stride, offset, dtype, kind=None) -> None:
    t._cell = cell
    if t._math is not None:
        kind = MATH
    elif kind is None:
        kind = layout_kind(cell, size, stride, offset, dtype)
    t._kind = kind
    t._lc = cell._value if kind == FULL else value
    t._ver = cell.version


def relayout(t: LazyTensor, value: lc.Tensor) -> None:
    """After an in-place view op changed ``t``'s metadata, re-attach its value."""
    _attach(t, t._cell, value, tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.dtype)


def read(t: LazyTensor) -> lc.Tensor:
    """The current core value of ``t`` (re-derived from the base if it changed)."""
    kind = t._kind
    cell = t._cell
    if kind == FULL:
        if cell.writes is not None:
            cell.value  # noqa: B018 - apply the held element writes (t._lc is its handle)
        return t._lc
    if t._ver != cell.version:
        if kind == MATH:
            t._lc = apply_math(_derive(t, cell.value, _layout(t)), t._math)
        else:
            t._lc = _derive(t, cell.value, kind)
        t._ver = cell.version
    return t._lc


def _layout(t: LazyTensor) -> int:
    return layout_kind(t._cell, tuple(t.shape), t.stride(), t.storage_offset(), t.dtype)


def _derive(t: LazyTensor, base: lc.Tensor, kind: int) -> lc.Tensor:
    """``t``'s value read from the storage value ``base`` through its layout ``kind``."""
    if kind == FULL:
        return base
    if kind == RESHAPE:
        return lc.ops.reshape(base, new_sizes=tuple(t.shape))
    flat = as_flat(base, TO_NP[t.dtype]) if kind == REINTERPRET else \
        lc.ops.reshape(base, new_sizes=(base.size,))
    return lc.numeric.take(flat, positions(flat.size, tuple(t.shape), t.stride(),
                                           t.storage_offset()), 0)


def write(t: LazyTensor, value: lc.Tensor) -> None:
    """Store ``value`` (t's shape and dtype) into t's storage; views see it."""
    cell = t._cell
    kind = t._kind
    if kind == MATH:  # conj/neg are their own inverses
        _store(t, cell, apply_math(value, t._math), _layout(t))
        t._lc = value
    else:
        _store(t, cell, value, kind)
    cell.version += 1
    t._ver = cell.version


def _store(t: LazyTensor, cell: Cell, value: lc.Tensor, kind: int) -> None:
    if kind == FULL:  # the whole storage is replaced: held element writes too
        cell.writes = None
        cell._value.assign(value)  # t._lc is that handle
    elif kind == RESHAPE:
        cell.writes = None
        cell._value.assign(lc.ops.reshape(value, new_sizes=cell._value.shape))
        t._lc = value
    else:
        base = cell.value
        flat = as_flat(base, TO_NP[t.dtype]) if kind == REINTERPRET else base
        pos = positions(flat.size, tuple(t.shape), t.stride(), t.storage_offset())
        flat = lc.numeric.write_positions(flat, pos, value)
        base.assign(flat if kind != REINTERPRET else from_flat(flat, base))
        t._lc = value


def as_flat(base: lc.Tensor, dtype) -> lc.Tensor:
    """The storage ``base`` as a 1-D array of ``dtype`` items (its bytes reinterpreted)."""
    return lc.numeric.reinterpret(lc.ops.reshape(base, new_sizes=(base.size,)), dtype)


def from_flat(flat: lc.Tensor, base: lc.Tensor) -> lc.Tensor:
    """Inverse of ``as_flat``: ``flat``'s bytes as ``base``'s dtype and shape."""
    return lc.ops.reshape(lc.numeric.reinterpret(flat, base.dtype), new_sizes=base.shape)


_HOLD_LIMIT = 1 << 16  # element writes held before they become a scatter anyway
_SCRATCH: dict = {}  # torch dtype -> (a 0-d CPU tensor, the NumPy view of its element)


def hold_element(t: LazyTensor, key, value) -> bool:
    """``t[i, j, ...] = value`` (one int per axis, a Python scalar) held in the storage's
    element writes (``Cell.writes``): a dict entry, no graph node, so a Python loop
    setting cells costs what eager's does until the tensor is read; False (nothing
    done) for any other key. The value is converted by eager's own ``fill_`` of a CPU
    scalar (its casts, its overflow errors, before the index is checked: eager's
    order); the position follows ``t``'s layout, so a write through a view lands where
    the base and every alias read."""
    items = key if type(key) is tuple else (key,)
    size = t.shape
    if len(items) != len(size) or t._kind > GENERAL:
        return False
    for k in items:
        if type(k) is not int:
            return False
    scratch = _SCRATCH.get(t.dtype)
    if scratch is None:
        cpu = torch.empty((), dtype=t.dtype)
        scratch = _SCRATCH[t.dtype] = (cpu, cpu_to_numpy(cpu))
    scratch[0].fill_(value)
    pos = t.storage_offset()
    for d, (k, n, st) in enumerate(zip(items, size, t.stride(), strict=True)):
        i = k + n if k < 0 else k
        if not 0 <= i < n:
            raise IndexError(f"index {k} is out of bounds for dimension {d} with size {n}")
        pos += i * st
    cell = t._cell
    writes = cell.writes
    if writes is None:
        writes = cell.writes = {}
    writes[pos] = scratch[1][()]
    cell.version += 1
    if len(writes) >= _HOLD_LIMIT:
        cell.value  # noqa: B018 - apply them: the dict must not grow without bound
    return True


_POSITIONS: dict = {}


def positions(numel: int, size, stride, offset) -> lc.Tensor:
    """Storage positions covered by a (size, stride, offset) layout, as an index tensor."""
    key = (numel, size, tuple(stride), offset)
    pos = _POSITIONS.get(key)
    if pos is None:
        host = torch.as_strided(torch.arange(numel, dtype=torch.int64), size, stride, offset)
        pos = lc.numeric.host_index(host.numpy())
        if len(_POSITIONS) > 4096:
            _POSITIONS.clear()
        _POSITIONS[key] = pos
    return pos


def to_cpu(t: LazyTensor, cause: str = "host_transfer") -> torch.Tensor:
    """A CPU copy of ``t``'s value (syncs what it needs; ``cause`` names it in the sync
    log unless an observation around it -- print, ``bool()`` -- already did)."""
    from ._convert import numpy_to_cpu

    return numpy_to_cpu(lc.to_numpy(read(t), cause), owned=True)
