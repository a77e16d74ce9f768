"""The IR: nodes with an abstract value and a structural hash built at creation.

A ``Node`` is immutable. Leaves are device data (``"data"``, a ``jax.Array``),
Python scalars passed as program parameters (``"param"``), baked constants
(``"const"``) and values whose computation failed (``"failed"``, holding the error).
A param or const may be a *fill*: one scalar value under a shaped aval (``x * 0.5``
records one leaf, not a scalar and a broadcast); lowering broadcasts it. Interior
nodes name a registered op, their operands and static attributes. The structural
hash covers the op, the attributes and the operands' hashes (leaves hash by aval,
constants by value) -- never object ids -- so the same program traced twice hashes
the same. Which leaves are shared is not part of a
node's hash; ``runtime.linearize`` adds that when it builds a cache key.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

LEAF_OPS = frozenset({"data", "param", "const", "failed"})


class Aval(NamedTuple):
    """Abstract value: what a shape rule computes."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"


class Node:
    """One traced operation (or leaf). ``aval`` is a tuple of Avals for multi-output ops."""

    # ``idx``: the node's place in the trace cursor's current epoch (``lazycore.cursor``);
    # below the epoch's base (-1 at creation) when it is not part of it
    __slots__ = ("op", "operands", "attrs", "aval", "hash", "value", "idx", "__weakref__")

    def __init__(self, op: str, operands: tuple, attrs: tuple, aval, value=None):
        # ``trace.call`` builds interior nodes inline with this same hash (hot path)
        self.idx = -1
        self.op = op
        self.operands = operands
        self.attrs = attrs
        self.aval = aval
        self.value = value
        if operands:
            n = len(operands)  # unrolled: a comprehension costs a call on 3.11
            if n == 2:
                hashes = (operands[0].hash, operands[1].hash)
            elif n == 1:
                hashes = (operands[0].hash,)
            else:
                hashes = tuple([o.hash for o in operands])
            self.hash = hash((op, attrs_hash(attrs), hashes))
        elif op == "const":
            self.hash = hash((op, aval, attrs_hash(attrs), _value_key(value)))
        elif op in LEAF_OPS:
            self.hash = hash((op, aval))
        else:  # nullary op (iota, ...)
            self.hash = hash((op, attrs_hash(attrs), ()))

    @property
    def is_leaf(self) -> bool:
        return self.op in LEAF_OPS

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.aval})"


_new_node = object.__new__


def leaf(op: str, aval: Aval, value, node_hash: int) -> Node:
    """A leaf whose hash the caller computed once for its (op, aval) (hot path)."""
    node = _new_node(Node)
    node.op = op
    node.operands = ()
    node.attrs = ()
    node.aval = aval
    node.value = value
    node.hash = node_hash
    node.idx = -1
    return node


def host_value(node: Node) -> np.ndarray:
    """A param/const leaf's value at its aval's shape (a fill broadcast)."""
    value = np.asarray(node.value)
    if value.shape != node.aval.shape:
        return np.full(node.aval.shape, value, dtype=node.aval.dtype)
    return value


_ATTR_HASHES: dict = {(): 0}
_MAX_ATTR_HASHES = 1 << 14


def attrs_hash(attrs: tuple) -> int:
    """A node's attributes as they enter its hash, telling apart what Python's ``hash``
    does not: ``hash(-1) == hash(-2)``, so ``pad(x, lo=-1)`` and ``pad(x, lo=-2)`` hashed
    alike and a later sync ran the other's program (a silent wrong result). Numbers
    enter by type and ``repr``; other values by their own hash. Memoized per attribute
    tuple, so the hot path pays one dict lookup (tuples equal under ``==``, such as 0.0
    and -0.0, share an entry, as they shared the dict keys before)."""
    h = _ATTR_HASHES.get(attrs)
    if h is None:
        if len(_ATTR_HASHES) >= _MAX_ATTR_HASHES:
            _ATTR_HASHES.clear()
            _ATTR_HASHES[()] = 0
        h = _ATTR_HASHES[attrs] = hash(_exact(attrs))
    return h


_NUMBERS = (int, float, bool, complex)


def _exact(value):
    kind = type(value)
    if kind in _NUMBERS:
        return (kind, repr(value))
    if kind is tuple or kind is Frozen:
        return tuple([_exact(v) for v in value])
    return value


def _value_key(value) -> tuple:
    arr = np.asarray(value)
    return (arr.dtype.str, arr.shape, arr.tobytes())


_PLAIN = frozenset({int, float, str, bool, type(None)})


class Frozen(tuple):
    """A tuple already frozen and hashed once. Used for values with hundreds of nested
    parts that would otherwise be walked and re-hashed every step: a program's cache
    key, and a ``vjp`` node's sub-program attribute (``freeze`` passes it through)."""

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            self._hash = tuple.__hash__(self)
            return self._hash

    def __reduce__(self):  # the cached hash is per process (str hashes are salted)
        return (Frozen, (tuple(self),))


def freeze(value):
    """Make an attribute value hashable (lists -> tuples, dtype-likes kept).

    Runs for every traced op with attributes: plain values and flat tuples of plain
    values (the common case: shapes, axes) return at once."""
    kind = type(value)
    if kind in _PLAIN or kind is Frozen:
        return value
    if kind is tuple:
        for v in value:
            if type(v) not in _PLAIN:
                return tuple([freeze(v) for v in value])
        return value
    if isinstance(value, list | tuple):
        return tuple([freeze(v) for v in value])
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return tuple(freeze(v) for v in value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    return float(value) if isinstance(value, np.floating) else value


def freeze_attrs(attrs: dict) -> tuple:
    if len(attrs) == 1:
        ((k, v),) = attrs.items()
        return ((k, freeze(v)),)
    return tuple(sorted([(k, freeze(v)) for k, v in attrs.items()]))


def independent_of(roots, holders) -> frozenset:
    """Ids of the nodes reached from ``roots`` that do not depend on ``holders``: a loop
    body's values made outside it (weights read, values made before the loop: operands
    of the loop node), or the values a sync can compute past failed leaves."""
    inside = {id(n): True for n in holders}
    stack = list(roots)
    while stack:
        node = stack[-1]
        if id(node) in inside:
            stack.pop()
            continue
        pending = [o for o in node.operands if id(o) not in inside]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        inside[id(node)] = any(inside[id(o)] for o in node.operands)
    return frozenset(k for k, v in inside.items() if not v)
