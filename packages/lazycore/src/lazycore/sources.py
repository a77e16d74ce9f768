"""Where each op was recorded: the user's ``file:line``, kept while it is useful.

Naming the line that recorded an op costs a frame walk (a few microseconds per op),
so it is only done when something will read it: ``settings.debug``,
``settings.verify`` (``lc.verify()`` names the line of the op that differs) or
``settings.sources`` (``LAZYCORE_SOURCES=1``). ``update()`` then swaps the op call
(``OpDef.__call__``) for a recording one; otherwise the plain ``trace.call`` runs and
tracing pays nothing.
"""

from __future__ import annotations

import weakref

from . import trace
from .config import settings
from .ops import registry

_sites: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Node -> "file:line"
_plain_call = trace.call


def _recording_call(op, *operands, **attrs):
    out = _plain_call(op, *operands, **attrs)
    from .runtime import _call_site

    site = _call_site()
    for t in out if isinstance(out, tuple) else (out,):
        node = t.node
        _sites[node] = site
        if node.op == "tuple_get":  # a multi-output op: its node too
            _sites[node.operands[0]] = site
    return out


def enabled() -> bool:
    return bool(settings.sources or settings.debug or settings.verify)


def update() -> None:
    """Record sources iff a setting needs them (called by ``configure`` and ``verify``)."""
    registry.OpDef.__call__ = _recording_call if enabled() else _plain_call


def site_of(node) -> str | None:
    """The user's ``file:line`` that recorded ``node`` (None when not recorded)."""
    try:
        return _sites.get(node)
    except TypeError:  # not weak-referenceable
        return None


update()
