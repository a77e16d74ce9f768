"""Device meshes and sharding annotations: SPMD through XLA's partitioner.

A ``Mesh`` names the axes of a grid of devices; ``mark_sharding(t, mesh, spec)``
says how each dimension of ``t`` is split over those axes (PyTorch/XLA's
convention: one entry per dimension, an axis name, a tuple of names, or ``None``
for replicated). Nothing here partitions anything: XLA's SPMD partitioner does, and
its sharding propagation decides every value nobody annotated.

- A pending value gets a ``sharding_constraint`` node, so the annotation is part of
  the IR and of the graph hash; it lowers to ``jax.lax.with_sharding_constraint``.
- Device data is placed at once as a sharded ``jax.Array`` (``jax.device_put``).
- At a sync, ``plan`` finds the mesh a program runs on, replicates single-device
  inputs onto it (PyTorch/XLA's rule for unannotated tensors), and returns the input
  shardings: the runtime adds their canonical form to the compile-cache key and the
  lowering passes them to ``jax.jit``. Outputs keep whatever sharding XLA gave them.

>>> import numpy as np, lazycore as lc
>>> mesh = lc.Mesh((1,), ("data",))                    # 1 device is a mesh too
>>> x = lc.mark_sharding(lc.asarray(np.ones((4, 2))), mesh, ("data", None))
>>> lc.to_numpy(lc.ops.mul(x, x)).sum()                # materializing gathers
np.float64(8.0)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from .errors import LazyError, ShapeError
from .ir import host_value
from .ops.registry import defop

_active = [False]  # set by the first annotation: until then every sync skips ``plan``


class Mesh:
    """A named grid of devices: ``Mesh((4, 2), ("data", "model"))`` over ``jax.devices()``.

    ``devices`` (jax devices or device ids) defaults to the first ``prod(shape)`` of
    ``jax.devices()``, so a smaller mesh on a bigger host is fine. One entry of
    ``shape`` may be -1 (use the remaining devices). Wraps ``jax.sharding.Mesh``
    (``.jax_mesh``); equal meshes compare and hash equal.
    """

    __slots__ = ("shape", "axis_names", "device_ids", "jax_mesh", "_key")

    def __init__(self, shape, axis_names, devices=None):
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(shape) != len(axis_names):
            raise ShapeError(f"mesh shape {shape} and axis names {axis_names} differ in length",
                             op="Mesh")
        if len(set(axis_names)) != len(axis_names) or not all(
                isinstance(a, str) for a in axis_names):
            raise ShapeError(f"mesh axis names must be distinct strings, got {axis_names}",
                             op="Mesh")
        pool = _devices(devices)
        if shape.count(-1) == 1:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(len(pool) // max(known, 1) if s == -1 else s for s in shape)
        size = math.prod(shape)
        if size < 1 or any(s < 1 for s in shape):
            raise ShapeError(f"invalid mesh shape {shape}", op="Mesh")
        if size > len(pool) or (devices is not None and size != len(pool)):
            raise ShapeError(f"mesh shape {shape} needs {size} devices, "
                             f"{len(pool)} {'given' if devices is not None else 'available'}",
                             op="Mesh")
        grid = np.empty(size, dtype=object)
        grid[:] = pool[:size]
        self.shape = shape
        self.axis_names = axis_names
        self.device_ids = tuple(d.id for d in grid)
        self.jax_mesh = jax.sharding.Mesh(grid.reshape(shape), axis_names)
        self._key = (shape, axis_names, self.device_ids)
        _active[0] = True

    @classmethod
    def from_jax(cls, mesh: jax.sharding.Mesh) -> Mesh:
        return cls(mesh.devices.shape, mesh.axis_names, list(mesh.devices.flat))

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def devices(self) -> np.ndarray:
        return self.jax_mesh.devices

    def axis_size(self, name: str) -> int:
        return self.shape[self.axis_names.index(name)]

    def sharding(self, spec=()) -> NamedSharding:
        """The ``jax.sharding.NamedSharding`` for a normalized spec."""
        return NamedSharding(self.jax_mesh, PartitionSpec(*spec))

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        axes = ", ".join(f"{n}={s}" for n, s in zip(self.axis_names, self.shape, strict=True))
        if self.device_ids != tuple(range(self.size)):  # why: repr is part of graph digests
            axes += f", devices={list(self.device_ids)}"
        return f"Mesh({axes})"


def _devices(devices) -> list:
    all_devices = jax.devices()
    if devices is None:
        return list(all_devices)
    by_id = {d.id: d for d in all_devices}
    out = []
    for d in np.asarray(devices, dtype=object).flat:
        if isinstance(d, int | np.integer):
            if int(d) not in by_id:
                raise ShapeError(f"no device with id {d}", op="Mesh")
            d = by_id[int(d)]
        out.append(d)
    return out


def normalize_spec(mesh: Mesh, spec, shape) -> tuple:
    """One entry per dimension: ``None`` or a tuple of mesh axis names.

    Entries may be names, mesh axis indices, tuples of them, or ``None``; a shorter
    spec leaves trailing dimensions replicated. Raises ``ShapeError`` (a ValueError)
    for unknown or reused axes and for dimensions the axes do not divide."""
    if spec is None:
        spec = ()
    if isinstance(spec, str | int) or not isinstance(spec, tuple | list | PartitionSpec):
        spec = (spec,)
    spec = tuple(spec)
    if len(spec) > len(shape):
        raise ShapeError(f"partition spec {spec} has {len(spec)} entries for a "
                         f"{len(shape)}-d value of shape {tuple(shape)}", op="mark_sharding")
    out, used = [], set()
    for dim, entry in enumerate(spec + (None,) * (len(shape) - len(spec))):
        if entry is None:
            out.append(None)
            continue
        names = tuple(_axis_name(mesh, a) for a in (entry if isinstance(entry, tuple | list)
                                                    else (entry,)))
        if used & set(names) or len(set(names)) != len(names):
            raise ShapeError(f"partition spec {spec} uses a mesh axis twice", op="mark_sharding")
        used |= set(names)
        parts = math.prod(mesh.axis_size(n) for n in names)
        if shape[dim] % parts:
            raise ShapeError(f"dimension {dim} of size {shape[dim]} cannot be split {parts} ways "
                             f"over mesh axes {names}", op="mark_sharding")
        out.append(names or None)
    return tuple(out)


def _axis_name(mesh: Mesh, axis) -> str:
    if isinstance(axis, int | np.integer) and not isinstance(axis, bool):
        if not 0 <= axis < len(mesh.axis_names):
            raise ShapeError(f"mesh axis index {axis} out of range for {mesh}", op="mark_sharding")
        return mesh.axis_names[axis]
    if axis not in mesh.axis_names:
        raise ShapeError(f"{mesh} has no axis named {axis!r}", op="mark_sharding")
    return axis


# -- the annotation op -----------------------------------------------------------------

def _constraint_rule(x, *, mesh, spec):
    return x


def _constraint_lower(x, *, mesh, spec):
    return jax.lax.with_sharding_constraint(x, mesh.sharding(spec))


sharding_constraint = defop("sharding_constraint", "sharding", _constraint_rule,
                            _constraint_lower)


def activate() -> None:
    """Make every sync consult ``plan`` (called when sharded data enters by other routes)."""
    _active[0] = True


# -- placement at a sync -----------------------------------------------------------------

class Plan(NamedTuple):
    """Where a program's inputs live: ``args`` to pass, their ``shardings`` for the
    lowering, and ``key`` (a canonical form of the shardings) for the compile cache."""

    args: list
    shardings: list
    key: tuple


def plan(program) -> Plan | None:
    """``None`` when the program runs on one device (the fast path); otherwise the
    mesh it runs on, with single-device inputs replicated onto it."""
    if not _active[0]:
        return None
    meshes = _constraint_meshes(program.nodes)
    for node in program.inputs:
        if node.op == "data":
            mesh = _facts(node.value.sharding)[1]
            if mesh is not None:
                meshes.append(mesh)
    if not meshes:
        return None
    mesh = meshes[0]
    devices, replicated = _facts(_replicated(mesh))[0], _replicated(mesh)
    for other in meshes[1:]:
        if other is not mesh and _facts(_replicated(other))[0] != devices:
            raise LazyError(f"one program combines values on different device sets "
                            f"({sorted(d.id for d in devices)} and "
                            f"{sorted(d.id for d in other.devices.flat)})", op="sync")
    args, shardings, key = [], [], []
    for node in program.inputs:
        value = node.value
        if node.op == "data":
            s = value.sharding
            if _facts(s)[0] is not devices and _facts(s)[0] != devices:
                # why: a jit cannot mix one-device and mesh arrays; the move is kept
                value = node.value = jax.device_put(value, replicated)
                s = replicated
        else:
            value = host_value(node)  # a fill: its broadcast, since nothing is packed here
            s = replicated
        args.append(value)
        shardings.append(s)
        key.append(_canonical(s, node.aval.ndim))
    return Plan(args, shardings, tuple(key))


_facts_cache: dict = {}
_replicated_cache: dict = {}


def _facts(sharding) -> tuple:
    """(device set, the mesh it spans or None on one device), cached per sharding."""
    facts = _facts_cache.get(sharding)
    if facts is None:
        devices = frozenset(sharding.device_set)
        mesh = None
        if len(devices) > 1:
            mesh = sharding.mesh if isinstance(sharding, NamedSharding) else _device_mesh(sharding)
        if len(_facts_cache) > 4096:
            _facts_cache.clear()
        facts = _facts_cache[sharding] = (devices, mesh)
    return facts


def _replicated(mesh) -> NamedSharding:
    s = _replicated_cache.get(mesh)
    if s is None:
        s = _replicated_cache[mesh] = NamedSharding(mesh, PartitionSpec())
    return s


def explain_change(previous, program) -> str | None:
    """Why a call site recompiled when only where its inputs live changed (else None)."""
    if previous.key != program.key:
        return None
    old = getattr(previous, "placement", None)
    new = getattr(program, "placement", None)
    old_keys = old.key if old else (None,) * len(program.inputs)
    new_keys = new.key if new else (None,) * len(program.inputs)
    changes = [f"input {i} sharding {_key_text(a)} -> {_key_text(b)}"
               for i, (a, b) in enumerate(zip(old_keys, new_keys, strict=True)) if a != b]
    return "; ".join(changes[:4]) + (" ..." if len(changes) > 4 else "") if changes else None


def _key_text(key) -> str:
    if key is None:
        return "one device"
    if key[0] == "named":
        names, shape = key[1], key[2]
        mesh = ", ".join(f"{n}={s}" for n, s in zip(names, shape, strict=True))
        return f"Mesh({mesh}) spec={key[4]}"
    return str(key[2])


def _constraint_meshes(nodes) -> list:
    """Meshes named by constraint nodes, also inside ``vjp`` sub-programs."""
    found = []
    for node in nodes:
        if node.op == "sharding_constraint":
            found.append(node.attrs[0][1].jax_mesh)
        elif node.op == "vjp":
            for op, attrs, _ in dict(node.attrs)["program"]:
                if op == "sharding_constraint":
                    found.append(dict(attrs)["mesh"].jax_mesh)
    return found


def _device_mesh(sharding) -> jax.sharding.Mesh:
    return jax.sharding.Mesh(np.array(sorted(sharding.device_set, key=lambda d: d.id),
                                      dtype=object), ("devices",))


_canonical_cache: dict = {}


def _canonical(sharding, ndim: int):
    """A hashable form equal for equivalent shardings (``P()`` == ``P(None, None)``)."""
    cached = _canonical_cache.get((sharding, ndim))
    if cached is not None:
        return cached
    if isinstance(sharding, NamedSharding):
        spec = tuple(sharding.spec) + (None,) * (ndim - len(sharding.spec))
        spec = tuple(e if e is None or isinstance(e, tuple) else (e,) for e in spec)
        spec = tuple(None if e == () else e for e in spec)
        mesh = sharding.mesh
        key = ("named", mesh.axis_names, mesh.devices.shape,
               tuple(d.id for d in mesh.devices.flat), spec)
    else:
        key = ("hlo", tuple(sorted(d.id for d in sharding.device_set)),
               str(sharding._to_xla_hlo_sharding(ndim)))
    if len(_canonical_cache) > 4096:
        _canonical_cache.clear()
    _canonical_cache[(sharding, ndim)] = key
    return key
