"""Storage shared by an array and its views, and the lenses that read and write a view.

Eager APIs with view semantics (NumPy: ``b = a[2:5]; b[:] = 0`` changes ``a``) need a
write through one array to show in every array sharing its memory, while the core's
values stay immutable. A ``Storage`` holds the value of the array that owns the memory
and a version bumped by every write; a view is a chain of ``Lens`` steps from that
value. Reading a view whose storage changed re-derives it (``derive``: slices,
transposes, reshapes -- no gathers for the common views); writing through a view puts
the new value back along the chain (``put``: ``dynamic_update_slice`` for block
slices, the inverse transpose/reshape, a scatter only where nothing simpler exists).
The frontend decides which results are views (NumPy's own rules); this module only
moves values.
"""

from __future__ import annotations

import numpy as np

from . import ops
from .composites import indexing
from .composites.broadcasting import cast

_PENDING_LIMIT = 1 << 16  # element writes held before they become a scatter anyway


class Storage:
    """The memory of an owner array and its views: one core value and a version.

    Element writes (``a[i, j] = 3.0`` with host ints and a host scalar) are held here as
    ``{flat position: value}`` -- a dict update, no graph node -- and become one scatter
    (``indexing.write_elements``) when the value is next read, so a Python loop setting
    cells one by one costs what NumPy's does until the array is used. Writing a whole
    new value drops the writes it replaces. Every write bumps the version, so each view
    re-derives (reading, hence applying the writes) on its next read."""

    __slots__ = ("_value", "_writes", "version", "__weakref__")

    def __init__(self, value):
        self._value = value
        self._writes = None
        self.version = 0

    @property
    def value(self):
        if self._writes:
            writes, self._writes = self._writes, None
            self._value = indexing.write_elements(self._value, writes)
        return self._value

    @value.setter
    def value(self, value) -> None:
        self._writes = None  # the whole memory is replaced: pending element writes too
        self._value = value

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    def write_element(self, position: int, value) -> None:
        """Record ``memory[position] = value`` (a flat C-order position in the owner's
        value, already in range; ``value`` a host scalar already in its dtype)."""
        writes = self._writes
        if writes is None:
            writes = self._writes = {}
        writes[position] = value
        self.version += 1
        if len(writes) >= _PENDING_LIMIT:
            self.value  # noqa: B018 - apply them: the dict must not grow without bound


class Lens:
    """One step from a parent value to a view of it: ``get(parent) -> child`` and
    ``put(parent, child) -> parent`` (default: scatter the child into the parent at the
    positions ``get`` picks, which is right for every view since a view only moves
    elements)."""

    __slots__ = ("get", "_put")

    def __init__(self, get, put=None):
        self.get = get
        self._put = put

    def put(self, parent, child):
        if self._put is not None:
            return self._put(parent, child)
        return scatter_put(self.get, parent, child)


def scatter_put(get, parent, child):
    """``parent`` with ``child`` written where ``get`` reads from: ``get`` applied to the
    parent's flat positions says where each child element lives."""
    positions = ops.reshape(ops.iota(dtype=np.int64, shape=(parent.size,), dimension=0),
                            new_sizes=parent.shape)
    picked = get(positions)
    flat = ops.reshape(parent, new_sizes=(parent.size,))
    return ops.reshape(ops.scatter(
        flat, ops.reshape(picked, new_sizes=(picked.size, 1)),
        ops.reshape(cast(child, parent.dtype), new_sizes=(child.size,)), update_window_dims=(),
        inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), mode="fill"),
        new_sizes=parent.shape)


def derive(value, chain):
    """The view at the end of ``chain`` read from the storage ``value``."""
    for lens in chain:
        value = lens.get(value)
    return value


def put(value, chain, child):
    """The storage ``value`` after writing ``child`` through ``chain``."""
    parents = [value]
    for lens in chain[:-1]:
        parents.append(lens.get(parents[-1]))
    for lens, parent in zip(reversed(chain), reversed(parents), strict=True):
        child = lens.put(parent, child)
    return child


# -- the common lenses ---------------------------------------------------------------------

def is_basic_key(key) -> bool:
    """Ints, slices, ``None`` and ``...`` only: NumPy's basic indexing (a view)."""
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, slice) or indexing.is_int(k)
               for k in items)


_INDEX_LENSES: dict = {}


def index_lens(key, parent_ndim: int) -> Lens:
    """``parent[key]`` for a basic key; the put drops the key's new axes and assigns.
    Lenses of int/slice keys are kept per (key, rank): a loop's slices reuse theirs."""
    sig = indexing.basic_signature(key)
    if sig is None:
        return _index_lens(key, parent_ndim)
    lens = _INDEX_LENSES.get((sig, parent_ndim))
    if lens is None:
        if len(_INDEX_LENSES) > 4096:
            _INDEX_LENSES.clear()
        lens = _INDEX_LENSES[(sig, parent_ndim)] = _index_lens(key, parent_ndim)
    return lens


def _index_lens(key, parent_ndim: int) -> Lens:
    items = key if isinstance(key, tuple) else (key,)
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    new_axes, out_dim = [], 0
    expanded = []
    for k in items:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (parent_ndim - consumed))
        else:
            expanded.append(k)
    for k in expanded:
        if k is None:
            new_axes.append(out_dim)
            out_dim += 1
        elif isinstance(k, slice):
            out_dim += 1
    plain = tuple(k for k in expanded if k is not None)

    def get(parent):
        return indexing.getitem(parent, key)

    def put_(parent, child):
        if new_axes:
            shape = tuple(s for i, s in enumerate(child.shape) if i not in new_axes)
            child = ops.reshape(child, new_sizes=shape)
        return indexing.setitem(parent, plain, child)
    return Lens(get, put_)


def transpose_lens(perm) -> Lens:
    perm = tuple(int(p) for p in perm)
    inverse = tuple(int(i) for i in np.argsort(perm))
    return Lens(lambda p: ops.transpose(p, permutation=perm),
                lambda p, c: ops.transpose(c, permutation=inverse))


def reshape_lens(shape) -> Lens:
    shape = tuple(int(s) for s in shape)
    return Lens(lambda p: ops.reshape(p, new_sizes=shape),
                lambda p, c: ops.reshape(c, new_sizes=p.shape))


_HOST = (np.ndarray, np.generic, bool, int, float, complex)


def same_value(a, b, depth: int = 8) -> bool:
    """Whether two tensors certainly hold the same value: the same node, or the same op
    on operands that are (host constants and parameters compared by value). ``False``
    only means "not proven" -- ``x[x > 0] = x[x > 0] ** 2`` builds its mask twice."""
    return _same_node(a.node, b.node, depth)


def _same_node(m, n, depth: int) -> bool:
    if m is n:
        return True
    if depth == 0 or m.op != n.op or m.attrs != n.attrs or m.aval != n.aval:
        return False
    if m.op in ("const", "param"):
        u, v = m.value, n.value
        if not (isinstance(u, _HOST) and isinstance(v, _HOST)):
            return False  # device data: compared by identity only
        return bool(np.array_equal(u, v))
    if not m.operands or len(m.operands) != len(n.operands):
        return False
    return all(_same_node(p, q, depth - 1)
               for p, q in zip(m.operands, n.operands, strict=True))
