"""Recording ops: run the shape rule, build the node, return handles.

This is the hot path of every frontend, so it stays small: no graph walks, one
lookup of the op's remembered shape rule result, one hash.
"""

from __future__ import annotations

from time import perf_counter

import numpy as np

from . import cursor, metrics
from .config import settings
from .dtypes import canonical
from .errors import LazyError, ShapeError
from .ir import Aval, Node, attrs_hash, freeze_attrs, leaf
from .tensor import Tensor, _discard, _live_add, _next_seq, _ref

_BAKED = (0, 1, -1)
_COMPLEX = (complex, np.complexfloating)
trace_time = metrics._trace_time  # [ops traced since reset, seconds]
pending_limit = metrics._pending_limit  # [trace_time[0] value at which to cut the trace]
_new_node = _new_tensor = object.__new__
_EPOCH, _join, _places, _record, _diverge = (cursor.EPOCH, cursor.join, cursor.places,
                                             cursor.record, cursor.diverge)
_gets, _record_many = cursor.gets, cursor.record_many


def call(op, *operands, **attrs):
    """``OpDef.__call__``: trace ``op`` on core ``Tensor`` operands -> Tensor (or tuple).

    The per-op cost of every frontend: a single-output op's node and handle are built
    here inline (``Node.__init__``'s hash, ``Tensor.__init__``'s registration; a call
    each would cost a Python frame apiece)."""
    start = perf_counter()
    arity = len(operands)
    try:
        if arity == 2:  # unrolled: comprehensions cost a call each on 3.11
            a, b = operands[0].node, operands[1].node
            nodes, avals, hashes = (a, b), (a.aval, b.aval), (a.hash, b.hash)
        elif arity == 1:
            a = operands[0].node
            nodes, avals, hashes = (a,), (a.aval,), (a.hash,)
        else:
            nodes = tuple([o.node for o in operands])
            avals = tuple([n.aval for n in nodes])
            hashes = tuple([n.hash for n in nodes])
    except AttributeError:
        bad = [type(o).__name__ for o in operands if not isinstance(o, Tensor)]
        raise TypeError(f"{op.name}: operands must be lazycore.Tensor, got {bad}") from None
    # (a star-unpacked key costs a list; most pointwise ops have no attributes at all)
    key = (op.name, avals, tuple(attrs.items())) if attrs else (op.name, avals)
    try:
        hit = _RULES.get(key)
    except TypeError:  # an unhashable attribute (a list, an array): frozen by _rule
        hit = key = None
    frozen, aval, ah = hit or _rule(op, avals, attrs, key)
    if op.multi_output:
        node = Node(op.name, nodes, frozen, aval)
        _record(node, _places(nodes))
        out = _outputs(node)
    elif nodes:
        name = op.name
        node = _new_node(Node)  # Node(name, nodes, frozen, aval), its hash as there
        node.op = name
        node.operands = nodes
        node.attrs = frozen
        node.aval = aval
        node.value = None
        node.hash = h = hash((name, ah, hashes))
        # the trace cursor (``cursor.record``, inline): operand places, the signature,
        # compared with the recording this epoch follows or recorded
        ep = _EPOCH
        base = ep.base
        if arity == 2:
            pa = a.idx - base
            if pa < 0:
                pa = _join(a)
            pb = b.idx - base
            if pb < 0:
                pb = _join(b)
            sig = (h, pa, pb)
        elif arity == 1:
            pa = a.idx - base
            if pa < 0:
                pa = _join(a)
            sig = (h, pa)
        else:
            sig = (h, *_places(nodes))
        cur = ep.nodes
        i = len(cur)
        node.idx = base + i
        cur.append(node)
        expected = ep.expected
        if expected is None:
            ep.sigs.append(sig)
        elif expected[i] != sig:
            _diverge(i, sig)
        out = _new_tensor(Tensor)  # Tensor(node)
        out.node = node
        out.seq = _next_seq()
        _live_add(_ref(out, _discard))
    else:
        node = Node(op.name, nodes, frozen, aval)
        _record(node, ())
        out = Tensor(node)
    trace_time[0] += 1
    trace_time[1] += perf_counter() - start
    if trace_time[0] >= pending_limit[0]:
        _cut_trace()
    return out


_RULES: dict = {}  # (op name, operand avals, *attribute items) -> (frozen attrs, aval, attr hash)


def _rule(op, avals: tuple, attrs: dict, key) -> tuple:
    """Freeze ``attrs``, run ``op``'s shape rule, hash the attributes: once per
    (op, avals, attributes), which a loop repeats every step (a stencil's slices).
    Attributes equal under ``==`` share an entry, as they share a node hash
    (``ir.attrs_hash``); a rule that fails is not remembered (it raises each call)."""
    frozen = freeze_attrs(attrs)
    try:
        aval = op.rule(*avals, **dict(frozen))
    except LazyError as e:
        if e.op is None:
            e.op = op.name
            e.args = (f"{op.name}: {e.args[0]}",) if e.args else e.args
        raise
    except (TypeError, ValueError, IndexError) as e:
        shapes = ", ".join(str(a) for a in avals)
        raise ShapeError(f"{e} (operands: {shapes})", op=op.name, shapes=avals) from e
    hit = (frozen, aval, attrs_hash(frozen))
    if key is not None:
        if len(_RULES) >= 1 << 14:
            _RULES.clear()
        _RULES[key] = hit
    return hit


def _outputs(node: Node) -> tuple:
    """One handle per output of a multi-output node: a ``tuple_get`` node each, built
    inline with the memoized hashes and signatures of ``cursor.gets`` (a sub-program
    call of a BERT step has ~100 outputs; this is its per-output cost)."""
    hashes, attrs, sigs = _gets(node)
    operands = (node,)
    idx = node.idx
    new, out = [], []
    for a, h, at in zip(node.aval, hashes, attrs, strict=True):  # Node and Tensor.__init__, inline
        idx += 1
        get = _new_node(Node)
        get.op, get.operands, get.attrs, get.aval = "tuple_get", operands, at, a
        get.value, get.hash, get.idx = None, h, idx
        new.append(get)
        t = _new_tensor(Tensor)
        t.node = get
        t.seq = _next_seq()
        _live_add(_ref(t, _discard))
        out.append(t)
    _record_many(new, sigs)
    return tuple(out)


def _cut_trace() -> None:
    """A trace that grows without a barrier is cut, so memory stays bounded."""
    from . import runtime

    runtime.sync(cause="trace_limit")


def scalar(value, dtype, *, bake: bool | None = None) -> Tensor:
    """A rank-0 value. 0 and +-1 are baked constants; other scalars are program
    parameters (so a changing learning rate does not recompile) unless baking is on."""
    return filled(value, dtype, (), bake)


_FILLS: dict = {}


def filled(value, dtype, shape: tuple, bake: bool | None = None) -> Tensor:
    """A Python scalar broadcast to ``shape``: ONE leaf, a *fill* (``ir``: a param or
    const whose aval has the shape and whose value is the scalar; the lowering
    broadcasts it). Every ``x * 0.5`` in every frontend takes this path, so the leaf's
    aval and hash are computed once per (dtype, shape)."""
    entry = _FILLS.get((dtype, shape))
    if entry is None:
        entry = _fill_entry(dtype, shape)
    aval, param_hash = entry
    arr = np.asarray(value, dtype=aval.dtype)
    if bake is None:
        bake = settings.bake_scalars or _is_baked(value)
    if bake:
        return Tensor(Node("const", (), (), aval, arr))
    return Tensor(leaf("param", aval, arr, param_hash))


def _fill_entry(dtype, shape: tuple):
    if len(_FILLS) > 4096:
        _FILLS.clear()
    aval = Aval(tuple([int(s) for s in shape]), canonical(dtype))
    entry = _FILLS[(dtype, shape)] = (aval, Node("param", (), (), aval).hash)
    return entry


def fill_of(x: Tensor, shape: tuple) -> Tensor | None:
    """``x`` broadcast to ``shape`` as one fill leaf, when ``x`` is a host scalar leaf
    (a rank-0 param or const, which stays what it was: a ``scalar(1.0, bake=False)``
    learning rate remains a parameter); None otherwise."""
    node = x.node
    if node.aval.shape or node.op not in ("param", "const"):
        return None
    dtype = node.aval.dtype
    shape = tuple(shape)
    aval, param_hash = _FILLS.get((dtype, shape)) or _fill_entry(dtype, shape)
    if node.op == "param":
        return Tensor(leaf("param", aval, node.value, param_hash))
    return Tensor(Node("const", (), (), aval, node.value))


def constant(value, dtype=None) -> Tensor:
    """A small host array baked into the program (hash covers its bytes)."""
    arr = np.asarray(value, dtype=None if dtype is None else canonical(dtype))
    return Tensor(Node("const", (), (), Aval(arr.shape, canonical(arr.dtype)), arr))


def _is_baked(value) -> bool:
    try:
        return bool(value in _BAKED) and not isinstance(value, _COMPLEX)
    except (TypeError, ValueError):
        return False

