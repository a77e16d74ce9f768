"""Placing values on a mesh and asking where they are: the user's side of sharding.

``sharding.py`` holds what a sync needs (meshes, specs, the constraint op, the
placement ``plan``) below the runtime; these functions observe or move values, so they
sit above it (``mark_sharding`` places device data at once, ``sharding_of`` compiles a
pending value's graph to ask XLA).
"""

from __future__ import annotations

import jax
from jax.sharding import NamedSharding

from . import runtime
from .lowering import linearize, lower
from .sharding import Mesh, activate, normalize_spec, plan, sharding_constraint
from .tensor import Tensor


def mark_sharding(t, mesh: Mesh, spec):
    """Annotate ``t`` (a ``lazycore.Tensor``) in place with how it is split over ``mesh``.

    Device data moves to its shards now; a pending value gets a constraint node that
    XLA honours when the graph is compiled. Returns ``t``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_sharding expects a lazycore.Tensor, got {type(t).__name__}")
    if isinstance(mesh, jax.sharding.Mesh):
        mesh = Mesh.from_jax(mesh)
    if not isinstance(mesh, Mesh):
        raise TypeError(f"mark_sharding expects a lazycore.Mesh, got {type(mesh).__name__}")
    spec = normalize_spec(mesh, spec, t.shape)
    activate()
    if t.is_pending:
        t.node = sharding_constraint(t, mesh=mesh, spec=spec).node
    else:
        array = jax.device_put(runtime.materialize(t), mesh.sharding(spec))
        t.node = runtime.data_node(array)
    return t


# -- observation -------------------------------------------------------------------------

def sharding_of(t):
    """The ``jax.sharding.Sharding`` ``t`` has (device data) or will have (pending:
    compiles its graph, without running it, and asks XLA what it chose)."""
    node = t.node
    if node.op == "data":
        return node.value.sharding
    if node.op in ("param", "const"):
        return None
    if node.op == "failed":
        raise node.value
    program = linearize([node])
    placement = plan(program)
    compiled = lower(program, (), placement.shardings if placement else None).compile()
    return compiled.output_shardings[0]


def sharding_text(t) -> str:
    """How ``t`` is laid out: the sharding, the per-device shard shape, each device's slice.

    For a pending value this is what XLA's propagation chose (see ``sharding_of``)."""
    s = sharding_of(t)
    head = f"{t.aval} ({'pending' if t.is_pending else 'data'})"
    if s is None:
        return f"{head}: host constant, not placed on a device"
    devices = sorted(s.device_set, key=lambda d: d.id)
    if isinstance(s, NamedSharding):
        where = f"{Mesh.from_jax(s.mesh)} spec={_spec_text(s.spec, t.ndim)}"
    else:
        where = type(s).__name__
    shard = s.shard_shape(t.shape)
    lines = [f"{head} on {len(devices)} device(s): {where}",
             f"  per-device shape {tuple(shard)}"
             f"{' (replicated)' if s.is_fully_replicated else ''}"]
    index_map = s.devices_indices_map(t.shape)
    for d in devices:
        index = ", ".join(_slice_text(i) for i in index_map[d])
        lines.append(f"  {d}: [{index}]")
    return "\n".join(lines)


def _spec_text(spec, ndim: int) -> str:
    entries = tuple(spec) + (None,) * (ndim - len(spec))
    return "(" + ", ".join(repr(e) for e in entries) + ("," if ndim == 1 else "") + ")"


def _slice_text(s: slice) -> str:
    if s.start is None and s.stop is None:
        return ":"
    return f"{s.start or 0}:{'' if s.stop is None else s.stop}"
