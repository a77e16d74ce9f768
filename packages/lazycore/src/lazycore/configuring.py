"""``configure()``: change settings, then tell the layers that act on a change.

``config.py`` holds the values at the bottom of the core (every layer reads them); this
module sits above the runtime, the source recorder and the compile cache, which it
updates, so reading a setting never imports back up.
"""

from __future__ import annotations

from . import cache, leaks, runtime
from .config import CHOICES, Settings, settings


def configure(**changes) -> Settings:
    """Change settings, e.g. ``configure(persistent_cache_dir="~/.cache/lazycore")``."""
    for key, value in changes.items():
        if not hasattr(settings, key):
            raise TypeError(f"unknown setting {key!r}")
        if key in CHOICES and value not in CHOICES[key]:
            raise ValueError(f"{key}={value!r}: expected one of {', '.join(CHOICES[key])}")
        if key == "cpu_dispatch":  # raises if JAX's CPU client already runs the other way
            runtime.set_cpu_dispatch(value, chosen=True)
        setattr(settings, key, value)
    if "max_pending_ops" in changes:
        runtime._reset_trace_limit()
    if changes.keys() & {"debug", "verify", "sources"}:
        leaks.select_op_call()
    if "persistent_cache_dir" in changes:
        cache.enable_persistent_cache(settings.persistent_cache_dir)
    return settings
