"""Runtime settings, read once from the environment and changeable from Python."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("", "0", "false", "no", "off")


#: Settings that take one of a few words: the allowed words, the default first.
CHOICES = {"observe": ("auto", "live", "value"), "tier": ("auto", "compile", "interpret"),
           "cpu_dispatch": ("async", "sync")}


def _choice(env: str, name: str) -> str:
    value = os.environ.get(env, "").strip().lower() or CHOICES[name][0]
    if value not in CHOICES[name]:
        raise ValueError(f"{env}={value!r}: expected one of {', '.join(CHOICES[name])}")
    return value


@dataclass
class Settings:
    """``bake_scalars``: put every Python scalar into the graph as a constant (recompiles
    when it changes) instead of passing those other than 0 and +-1 as parameters.
    ``cache_size``: compiled programs kept in memory (LRU).
    ``persistent_cache_dir``: when set, compiled programs are also stored on disk
    (JAX's compilation cache) and reused by later processes.
    ``donate``: let programs reuse the buffers of values they overwrite.
    ``debug``: log each sync (cause, call site, graph hash, hit or compile) to stderr.
    ``max_pending_ops``: a trace that grows by this many ops without a full sync is cut
    (synced) automatically, so a loop that never calls ``sync()`` stays bounded.
    ``verify``: run every program also op by op eagerly and report the first op that
    differs (``lazycore.verify``). ``dump_dir``: write every compiled graph's IR and HLO
    there. ``sources``: record each op's user ``file:line`` (on with debug or verify).
    ``observe``: what observing one value (``.item()``, print, ``bool()``, a host copy)
    computes (``lazycore.steps``): ``"auto"`` (default) the observed value and the live
    pending values that share work with it or carry pending work across a barrier, so
    loop state restarts from data and each iteration hits the compile cache; ``"live"``
    every live pending value; ``"value"`` only what the observed value needs (loop
    state stays pending; the graph grows until a ``sync()`` or ``max_pending_ops``).
    ``tier``: how a program runs (``lazycore.tiers``): ``"auto"`` (default) interprets a
    program the first time it is seen and compiles it in a background thread when it
    repeats; ``"compile"`` compiles before the first run; ``"interpret"`` never compiles.
    ``interpret_wait_ms``: in ``"auto"``, a program whose two interpreted runs both took
    longer than this waits for its compile, at most as long as the faster took, before
    it is interpreted again (the interpreter pays per op and competes with the compile for
    the GIL; a compile can take seconds, and no run may cost more than twice its
    interpreted time).
    ``cpu_dispatch``: how JAX's CPU client runs a program (process-wide, read when the
    client is created, so lazycore sets it at import when ``LAZYCORE_CPU_DISPATCH`` is set
    and ``JAX_CPU_ENABLE_ASYNC_DISPATCH`` is not): ``"async"`` (default) handed to PJRT's worker thread, which overlaps tracing
    with execution but waits for that thread to be scheduled at every read (2-5 ms per
    sync on a loaded machine, measured); ``"sync"`` on the calling thread.
    """

    bake_scalars: bool = field(default_factory=lambda: _env_flag("LAZYCORE_BAKE_SCALARS"))
    cache_size: int = field(default_factory=lambda: int(os.environ.get("LAZYCORE_CACHE_SIZE", "1024")))
    persistent_cache_dir: str | None = field(
        default_factory=lambda: os.environ.get("LAZYCORE_PERSISTENT_CACHE") or None)
    donate: bool = field(default_factory=lambda: _env_flag("LAZYCORE_DONATE", True))
    debug: bool = field(default_factory=lambda: _env_flag("LAZYCORE_DEBUG"))
    max_pending_ops: int = field(
        default_factory=lambda: int(os.environ.get("LAZYCORE_MAX_PENDING_OPS", "10000")))
    verify: bool = field(default_factory=lambda: _env_flag("LAZYCORE_VERIFY"))
    dump_dir: str | None = field(default_factory=lambda: os.environ.get("LAZYCORE_DUMP_DIR") or None)
    sources: bool = field(default_factory=lambda: _env_flag("LAZYCORE_SOURCES"))
    observe: str = field(default_factory=lambda: _choice("LAZYCORE_OBSERVE", "observe"))
    tier: str = field(default_factory=lambda: _choice("LAZYCORE_TIER", "tier"))
    interpret_wait_ms: float = field(
        default_factory=lambda: float(os.environ.get("LAZYCORE_INTERPRET_WAIT_MS", "50")))
    cpu_dispatch: str = field(default_factory=lambda: _choice("LAZYCORE_CPU_DISPATCH",
                                                              "cpu_dispatch"))


settings = Settings()
