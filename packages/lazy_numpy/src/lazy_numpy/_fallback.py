"""Fallback to real NumPy on materialized data, through the core (counted by name).

Anything lazy_numpy does not implement lazily still gives NumPy's exact answer:
the LazyArrays among the arguments are synced and copied to the host, NumPy runs,
and array results come back as LazyArrays. ``lazycore.metrics.counters()`` shows
each use as ``fallback::numpy.<name>`` so a user can see what is not compiled.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._array import LazyArray


class NotLazy(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by an implementation for arguments it cannot trace; the dispatcher
    then falls back to NumPy."""


class _Box:
    """Keeps NumPy results opaque to the core's result conversion."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _collect(obj, found: list):
    if isinstance(obj, LazyArray):
        found.append(obj)
    elif isinstance(obj, list | tuple):
        for v in obj:
            _collect(v, found)
    elif isinstance(obj, dict):
        for v in obj.values():
            _collect(v, found)


def _substitute(obj, table: dict):
    if isinstance(obj, LazyArray):
        return table[id(obj)]
    if isinstance(obj, list):
        return [_substitute(v, table) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_substitute(v, table) for v in obj)
    if isinstance(obj, dict):
        return {k: _substitute(v, table) for k, v in obj.items()}
    return obj


def run(name: str, func, args, kwargs, outs=()):
    """``func(*args, **kwargs)`` on host copies; ``outs`` are LazyArrays NumPy writes into."""
    lazies: list[LazyArray] = []
    _collect((args, kwargs), lazies)
    unique = list({id(x): x for x in lazies}.values())

    def on_host(*hosts):
        table = {id(x): h for x, h in zip(unique, hosts, strict=True)}
        result = func(*_substitute(args, table), **_substitute(kwargs, table))
        return _Box((result, table))

    box = lc.fallback(f"numpy.{name}", on_host, [x._t for x in unique])
    result, table = box.value
    back = {id(table[id(x)]): x for x in unique}  # NumPy handed an argument back: that array
    for out in outs:  # NumPy wrote into the host copies: point the LazyArrays at them
        if isinstance(out, LazyArray):
            out._t = lc.asarray(table[id(out)])
    return _to_lazy(result, back)


def _to_lazy(value, back: dict):
    if id(value) in back:
        return back[id(value)]
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        value = np.asarray(value)  # 0-d results stay arrays, as the lazy paths return
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc" and \
            value.dtype != np.longdouble and value.dtype != np.clongdouble:
        return LazyArray(lc.asarray(value))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_lazy(v, back) for v in value)
    if isinstance(value, list):
        return [_to_lazy(v, back) for v in value]
    if isinstance(value, tuple):  # named tuples (e.g. linalg results)
        return type(value)(*[_to_lazy(v, back) for v in value])
    return value
