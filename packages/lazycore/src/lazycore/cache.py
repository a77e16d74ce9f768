"""Compile cache: program key (+ donation, + sharding) -> compiled executable.

In memory it is an LRU of ``settings.cache_size`` entries. Across processes, JAX's
persistent compilation cache (keyed on the HLO, jaxlib version and flags) is turned
on by ``configure(persistent_cache_dir=...)`` or ``LAZYCORE_PERSISTENT_CACHE``.
"""

from __future__ import annotations

import os
from collections import OrderedDict

import jax

from .config import settings

_entries: OrderedDict = OrderedDict()


def lookup(key):
    entry = _entries.get(key)
    if entry is not None:
        _entries.move_to_end(key)
    return entry


def store(key, executable) -> None:
    _entries[key] = executable
    _entries.move_to_end(key)
    while len(_entries) > max(settings.cache_size, 1):
        _entries.popitem(last=False)


def clear() -> None:
    _entries.clear()


def size() -> int:
    return len(_entries)


def enable_persistent_cache(path: str | None) -> None:
    if not path:
        jax.config.update("jax_compilation_cache_dir", None)
        return
    path = os.path.expanduser(path)
    os.makedirs(path, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    try:  # jax only reads the directory when it first initialises the cache
        from jax._src import compilation_cache

        compilation_cache.reset_cache()
    except Exception:  # noqa: BLE001 - best effort across jax versions
        pass


if settings.persistent_cache_dir:
    enable_persistent_cache(settings.persistent_cache_dir)
