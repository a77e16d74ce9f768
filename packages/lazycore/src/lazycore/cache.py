"""Compile cache: program key (+ donation, + sharding) -> compiled executable.

In memory it is an LRU of ``settings.cache_size`` entries. Across processes (turned on
by ``configure(persistent_cache_dir=...)`` or ``LAZYCORE_PERSISTENT_CACHE``) compiled
executables are serialized to disk under a stable program digest, so a new process
skips lowering and compiling; JAX's own compilation cache (keyed on HLO) sits behind it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import threading
import warnings
from collections import OrderedDict

import jax
import numpy as np
from jax.experimental import serialize_executable

from .config import settings

_entries: OrderedDict = OrderedDict()
_lock = threading.Lock()  # background compiles (lazycore.tiers) store from their thread
_donations: dict = {}  # program key -> donated-input tuples with an executable in _entries


def lookup(key):
    with _lock:
        entry = _entries.get(key)
        if entry is not None:
            _entries.move_to_end(key)
        return entry


def store(key, executable) -> None:
    with _lock:
        _entries[key] = executable
        _entries.move_to_end(key)
        if len(key) == 2:  # (program key, donated inputs): no placement
            _donations.setdefault(key[0], set()).add(key[1])
        while len(_entries) > max(settings.cache_size, 1):
            old, _ = _entries.popitem(last=False)
            if len(old) == 2 and old[0] in _donations:
                _donations[old[0]].discard(old[1])


def donations(program_key) -> list[tuple]:
    """The donated-input tuples this program has executables for (unplaced ones)."""
    with _lock:
        return list(_donations.get(program_key, ()))


def clear() -> None:
    with _lock:
        _entries.clear()
        _donations.clear()


def size() -> int:
    return len(_entries)


# -- persistent layer -----------------------------------------------------------------
# Executables are serialized under a digest of the program that is stable across
# processes (op names, attributes, operand positions, leaf avals, constants, donation,
# placement, jax version, backend), so a second process skips tracing-to-HLO *and* XLA
# compilation. The format version is in the file name: an upgrade never reads old files.
_FORMAT = "lazycore-exe-v3"  # v2: host scalars packed (ArgLayout); v3: fill leaves


def program_digest(program, donate, placement_key=None) -> str:
    h = hashlib.sha256()
    h.update(f"{_FORMAT}|{jax.__version__}|{jax.default_backend()}|{donate}|"
             f"{placement_key!r}|{program.output_positions}".encode())
    for node, refs in zip(program.nodes, program.operand_positions, strict=True):
        aval = node.aval
        if node.op in ("data", "param", "failed"):  # the op: params are passed packed
            h.update(f"{node.op}:{aval.shape}:{aval.dtype.str}|".encode())
        elif node.op == "const":
            value = np.asarray(node.value)
            h.update(f"const:{aval.shape}:{value.shape}:{value.dtype.str}:".encode()
                     + value.tobytes())
        else:
            h.update(f"{node.op}:{node.attrs!r}:{refs}|".encode())
    return h.hexdigest()


def _path(digest: str) -> str | None:
    root = settings.persistent_cache_dir
    return os.path.join(os.path.expanduser(root), f"{_FORMAT}-{digest}.bin") if root else None


def stored(digest: str) -> bool:
    """Whether the persistent cache holds an executable under ``digest``."""
    path = _path(digest)
    return path is not None and os.path.exists(path)


def load(digest: str, devices=None):
    """A deserialized executable, or None (missing; unreadable entries warn and go).

    ``devices``: the devices it runs on (one for an unsharded program). Left out, jax
    loads it onto every device of the backend, which a one-device executable refuses
    to run on a host with several."""
    path = _path(digest)
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            payload, in_tree, out_tree = pickle.load(f)
        return serialize_executable.deserialize_and_load(payload, in_tree, out_tree,
                                                         execution_devices=devices)
    except Exception as e:  # noqa: BLE001 - a bad entry must never stop the program
        warnings.warn(f"lazycore: ignoring unreadable compile-cache entry {path}: {e}",
                      RuntimeWarning, stacklevel=2)
        with contextlib.suppress(OSError):
            os.remove(path)
        return None


def save(digest: str, executable) -> None:
    path = _path(digest)
    if path is None:
        return
    try:
        payload = serialize_executable.serialize(executable)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(payload, f)
        os.replace(tmp, path)  # atomic: readers never see half a file
    except Exception as e:  # noqa: BLE001 - caching is best effort
        warnings.warn(f"lazycore: could not write compile-cache entry: {e}", RuntimeWarning,
                      stacklevel=2)


def enable_persistent_cache(path: str | None) -> None:
    if not path:
        jax.config.update("jax_compilation_cache_dir", None)
        return
    path = os.path.expanduser(path)
    os.makedirs(path, exist_ok=True)
    # JAX's own cache (keyed on HLO) backs ours up for programs we key differently
    jax.config.update("jax_compilation_cache_dir", os.path.join(path, "xla"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    try:  # jax only reads the directory when it first initialises the cache
        from jax._src import compilation_cache

        compilation_cache.reset_cache()
    except Exception:  # noqa: BLE001 - best effort across jax versions
        pass


if settings.persistent_cache_dir:
    enable_persistent_cache(settings.persistent_cache_dir)
