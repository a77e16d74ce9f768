"""Where each op was recorded: the user's ``file:line``, kept while it is useful.

Naming the line that recorded an op costs a frame walk (a few microseconds per op),
so it is only done when something will read it: ``settings.debug``,
``settings.verify`` (``lc.verify()`` names the line of the op that differs) or
``settings.sources`` (``LAZYCORE_SOURCES=1``). ``leaks.select_op_call()`` (the one
place that knows every op call: plain, recording, marking) then swaps the op call
(``OpDef.__call__``) for ``_recording_call``; otherwise the plain ``trace.call`` runs
and tracing pays nothing.
"""

from __future__ import annotations

import sys
import weakref

from . import callsite, trace
from .config import settings

_sites: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Node -> (file, line)
_plain_call = trace.call
_internal: dict = {}       # code object -> recorded inside lazycore or a frontend?
_paths_seen = [0]          # len(callsite._internal_paths) when _internal was filled


def _user_frame():
    """(file, line) of the first frame outside the internal paths (``callsite._call_site``
    with a per-code-object memo: a few hundred ns instead of a string scan per frame)."""
    paths = callsite._internal_paths
    if len(paths) != _paths_seen[0]:  # a frontend registered its path since
        _internal.clear()
        _paths_seen[0] = len(paths)
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        inside = _internal.get(code)
        if inside is None:
            inside = _internal[code] = any(code.co_filename.startswith(p) for p in paths)
        if not inside:
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def _recording_call(op, *operands, **attrs):
    out = _plain_call(op, *operands, **attrs)
    site = _user_frame()
    for t in out if isinstance(out, tuple) else (out,):
        node = t.node
        _sites[node] = site
        if node.op == "tuple_get":  # a multi-output op: its node too
            _sites[node.operands[0]] = site
    return out


def enabled() -> bool:
    return bool(settings.sources or settings.debug or settings.verify)


def site_of(node) -> str | None:
    """The user's ``file:line`` that recorded ``node`` (None when not recorded)."""
    try:
        site = _sites.get(node)
    except TypeError:  # not weak-referenceable
        return None
    return None if site is None else f"{site[0]}:{site[1]}"

