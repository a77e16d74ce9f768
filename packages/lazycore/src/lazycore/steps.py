"""The step model: what an observation of one value computes (``settings.observe``).

Computing only the observed value leaves loop state pending, so each iteration's graph
is longer than the last and every sync compiles anew. An observation is therefore a
step barrier (PyTorch/XLA's semantics): the observed values and the live pending values
around them run as one program, and the next iteration traces from data.

``"auto"`` (default) computes a live pending value with the observed ones when
- it shares pending work with them (left pending, that work would run twice), or
- it carries pending work across a barrier: part of its graph was left pending by the
  previous observation (a counter or other loop state no observation reads).
A value that is neither (a temporary nobody reads before dropping it) stays pending:
computing it would cost work the old policy never did (measured: a dropped 800x800
matmul per step made a loop 40x slower), and if it lives on, the next observation
computes it. ``"live"`` computes every live pending value; ``"value"`` only what the
observed values need.

A step that repeats a recorded one (``lazycore.cursor``) reuses the answer its first
observation found, by the places of the observed and live values: no graph walk.
"""

from __future__ import annotations

import weakref

from . import cursor
from .ir import LEAF_OPS

# roots of values the previous observation left pending (weak: a dropped value is gone)
_left_pending: weakref.WeakSet = weakref.WeakSet()


def observation_targets(observed: list, live_pending: list, policy: str) -> tuple[list, bool]:
    """``(targets, whole)``: the handles to compute, and whether that is every live
    pending value (then inputs no live handle holds may be donated, as in a full sync)."""
    if policy == "value":
        return observed, False
    if policy == "live":
        return live_pending, True
    return _connected(observed, live_pending)


def _connected(observed: list, live_pending: list) -> tuple[list, bool]:
    if len(live_pending) <= len(observed):  # nothing else pending: no walk
        observed_ids = {id(t) for t in observed}
        if all(id(t) in observed_ids for t in live_pending):
            _left_pending.clear()
            return observed, True
    key = cursor.observation_key(observed, live_pending)
    if key is not None:
        places = cursor.observation(key)
        if places is not None:  # the same observation of a step recorded alike: no walk
            return _recorded(observed, live_pending, places)
    targets, whole = _walked(observed, live_pending)
    if key is not None:
        base = cursor.EPOCH.base
        cursor.keep_observation(key, frozenset([t.node.idx - base for t in targets]))
    return targets, whole


def _recorded(observed: list, live_pending: list, places: frozenset) -> tuple[list, bool]:
    """``_walked``'s answer from the places it computed last time (O(live values))."""
    base = cursor.EPOCH.base
    observed_ids = {id(t) for t in observed}
    targets = list(observed)
    left: list = []
    for t in live_pending:
        if id(t) in observed_ids:
            continue
        if t.node.idx - base in places:
            targets.append(t)
        else:
            left.append(t.node)
    _left_pending.clear()
    _left_pending.update(left)
    return targets, not left


def _walked(observed: list, live_pending: list) -> tuple[list, bool]:
    included: set = set()  # nodes with operands under the observed values (identity hashing)
    add, stack = included.add, [t.node for t in observed]
    pop, extend = stack.pop, stack.extend
    while stack:  # the hot loop of an observation: leaves (no operands) are never added
        node = pop()
        if node not in included and node.operands:
            add(node)
            extend(node.operands)
    carried = _left_pending
    excluded: set = set()  # pending nodes known to reach neither
    targets = list(observed)
    observed_ids = {id(t) for t in observed}
    left: list = []
    for t in live_pending:
        if id(t) in observed_ids:
            continue
        root = t.node
        if root in included:
            targets.append(t)
            continue
        visited: list = []
        seen: set = set()
        stack = [root]
        found = False
        while stack:
            node = stack.pop()
            if node in seen or node.op in LEAF_OPS or node in excluded:
                continue
            if node in included or node in carried:
                found = True
                break
            seen.add(node)
            visited.append(node)
            stack.extend(node.operands)
        if found:
            included.update(visited)
            targets.append(t)
        else:
            excluded.update(visited)
            left.append(root)
    _left_pending.clear()
    _left_pending.update(left)
    return targets, not left
