"""Counters and timers, and a report a person can read.

Counter names are part of the public contract: ``traced_ops``, ``syncs``,
``cache_hits``, ``cache_misses``, ``compiles``, ``executions``, ``host_transfers``,
``fallbacks``, per-op ``fallback::<name>`` and per-cause ``sync::<cause>``; with the
execution tiers ``interpreted_executions``, ``background_compiles`` (also
``background_compiles_queued``, ``background_compile_failures``, ``compile_waits``
when they happen); ``graph_leaks`` (syncs whose program held ops recorded in an
``lc.data_loading()``/``lc.logging_region()`` region, per region: ``lazycore.leaks``).
Timers (seconds): ``trace``, ``lower``, ``compile``, ``execute``, ``transfer``.
"""

from __future__ import annotations

from collections import Counter, deque

_BASE_COUNTERS = ("traced_ops", "syncs", "cache_hits", "cache_misses", "compiles",
                  "executions", "host_transfers", "fallbacks",
                  # execution tiers (lazycore.tiers): a background compile also counts in
                  # ``compiles``, an interpreted run in ``executions``
                  "interpreted_executions", "background_compiles")

_counters: Counter = Counter()
_timers: dict[str, list[float]] = {}
_recompiles: deque = deque(maxlen=50)
_trace_time = [0, 0.0]  # (ops, seconds) accumulated on the hot path without a dict lookup
_pending_limit = [10**18]  # set by the runtime: traced-op count at which the trace is cut


def inc(name: str, amount: int = 1) -> None:
    _counters[name] += amount


_span_hooks: list = []  # lc.profile listeners: fn(name, seconds), called as a phase ends


def add_time(name: str, seconds: float) -> None:
    for hook in _span_hooks:
        hook(name, seconds)
    entry = _timers.get(name)
    if entry is None:
        _timers[name] = [1, seconds, seconds]
    else:
        entry[0] += 1
        entry[1] += seconds
        entry[2] = max(entry[2], seconds)


def note_recompile(site: str, reason: str) -> None:
    _recompiles.append((site, reason))


def counters() -> dict[str, int]:
    """All counters, the base ones always present (zero when untouched)."""
    out = {name: 0 for name in _BASE_COUNTERS}
    out.update(_counters)
    out["traced_ops"] = _trace_time[0]
    return out


def timers() -> dict[str, dict[str, float]]:
    """``{name: {"count", "total_s", "max_s"}}``."""
    out = {k: {"count": v[0], "total_s": v[1], "max_s": v[2]} for k, v in _timers.items()}
    if _trace_time[0]:
        out["trace"] = {"count": _trace_time[0], "total_s": _trace_time[1], "max_s": float("nan")}
    return out


def recompile_reasons() -> list[tuple[str, str]]:
    """``(call site, what changed)`` for each compile of a site that compiled before."""
    return list(_recompiles)


def reset() -> None:
    _counters.clear()
    _timers.clear()
    _recompiles.clear()
    _pending_limit[0] -= _trace_time[0]
    _trace_time[0], _trace_time[1] = 0, 0.0


def report() -> str:
    lines = ["lazycore metrics", "  counters:"]
    for name, value in sorted(counters().items()):
        lines.append(f"    {name:<28} {value}")
    all_timers = timers()
    if all_timers:
        lines.append("  timers:              count     total        max")
        for name, t in sorted(all_timers.items()):
            lines.append(f"    {name:<16} {t['count']:>8} {_ms(t['total_s'])} {_ms(t['max_s'])}")
    if _recompiles:
        lines.append("  recompiles (site: what changed):")
        for site, reason in _recompiles:
            lines.append(f"    {site}: {reason}")
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    """A timer column; a value that is not measured (the per-op maximum of ``trace``,
    which the hot path does not track) prints as ``-``."""
    return f"{'-':>11}" if seconds != seconds else f"{seconds * 1e3:>9.3f}ms"  # NaN


def short_report() -> str:
    c = counters()
    return (f"traced_ops={c['traced_ops']} syncs={c['syncs']} compiles={c['compiles']} "
            f"cache_hits={c['cache_hits']} executions={c['executions']} "
            f"fallbacks={c['fallbacks']}")
