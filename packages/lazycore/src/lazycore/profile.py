"""``lc.profile("trace.json")``: a Chrome trace-event file of where a lazy program's time goes.

Open the file in Perfetto (ui.perfetto.dev) or chrome://tracing. Track
"phases" shows one span per phase:

- ``trace``: the Python program running and recording ops since the previous sync
  (``args.ops`` ops recorded, ``args.in_ops_ms`` spent inside the recorder itself);
- ``lower`` / ``compile``: a cache miss (graph -> StableHLO -> XLA executable);
- ``execute``: dispatching the compiled program (asynchronous: the device may still
  be running when it ends);
- ``host_wait``: copying a value to the host, which waits for the device.

Track "background" shows phases run by other threads (a background compile);
track "loader" shows a ``DeviceLoader``'s host-to-device copies (``h2d batch <i>``),
made by its background thread while the steps run.

Each sync is an instant event naming its cause, call site and cache hit/miss;
track "steps" shows one span per step, cut at every full explicit ``lc.sync()`` (or a
frontend's ``mark_step()``). A step ends when its barrier's sync ends (after its
lower, compile and execute), so a step's span holds its own compile, never the
previous step's.
The spans come from the same timers that ``lc.metrics`` reports, so profiling adds
no timing code to the hot path.
"""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import contextmanager

from . import diagnostics, metrics

_PHASE_NAMES = {"lower": "lower", "compile": "compile", "execute": "execute",
                "transfer": "host_wait"}
_PHASES_TID, _STEPS_TID, _SYNCS_TID, _LOADER_TID, _BACKGROUND_TID = 1, 2, 3, 4, 5
_active: list = []


class Profile:
    """The events of one ``profile`` block (``.events`` is the Chrome ``traceEvents`` list)."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = path
        self.pid = os.getpid()
        self.t0 = time.perf_counter()
        self.events: list[dict] = []
        self.steps = 0
        self._lower: float | None = None  # a lower time waiting for its compile
        self._mark = self.t0          # end of the last device phase: start of tracing
        self._step_start = self.t0
        self._step_end: float | None = None  # a step barrier is running: its latest end
        self._thread = threading.get_ident()  # the program's thread (others: background)
        self._ops0 = metrics._trace_time[0]
        self._op_time0 = metrics._trace_time[1]
        for tid, name in ((_PHASES_TID, "phases"), (_STEPS_TID, "steps"),
                          (_SYNCS_TID, "syncs"), (_LOADER_TID, "loader"),
                          (_BACKGROUND_TID, "background")):
            self.events.append({"ph": "M", "name": "thread_name", "pid": self.pid, "tid": tid,
                                "args": {"name": name}})
        self.events.append({"ph": "M", "name": "process_name", "pid": self.pid,
                            "args": {"name": "lazycore"}})

    def _us(self, t: float) -> float:
        return round((t - self.t0) * 1e6, 3)

    def _span(self, name: str, start: float, end: float, tid: int = _PHASES_TID,
              args: dict | None = None) -> None:
        event = {"name": name, "cat": "lazycore", "ph": "X", "ts": self._us(start),
                 "dur": round(max(end - start, 0.0) * 1e6, 3), "pid": self.pid, "tid": tid}
        if args:
            event["args"] = args
        self.events.append(event)

    # -- listeners ---------------------------------------------------------------------
    def on_phase(self, name: str, seconds: float) -> None:
        """``metrics.add_time`` hook: a phase of ``seconds`` just ended."""
        phase = _PHASE_NAMES.get(name)
        if phase is None:
            return
        end = time.perf_counter()
        if threading.get_ident() != self._thread:  # e.g. a background compile (tiers)
            self._span(phase, end - seconds, end, _BACKGROUND_TID)
            return
        if self._step_end is not None and phase != "host_wait":
            self._step_end = end  # the barrier's own lower/compile/execute
        if phase == "lower":  # the runtime reports lower and compile together, after both
            self._lower = seconds
            return
        self._span(phase, end - seconds, end)
        if self._lower is not None:
            start = end - seconds
            if phase == "compile":
                self._span("lower", start - self._lower, start)
            self._lower = None
        self._mark = end
        if phase == "execute" and self._step_end is not None:
            self._close_step()  # the barrier's program is dispatched: the step ends here

    def _close_step(self) -> None:
        end = self._step_end
        self._step_end = None
        self.steps += 1
        self._span(f"step {self.steps}", self._step_start, end, _STEPS_TID)
        self._step_start = end

    def on_event(self, event: str, **info) -> None:
        """``diagnostics`` hook: a sync starts, or a program was looked up."""
        now = time.perf_counter()
        if event == "sync":
            self._end_trace(now)
            if self._step_end is not None:  # the previous barrier ran no program
                self._close_step()
            if info["full"] and info["cause"] in diagnostics.STEP_CAUSES:
                self._step_end = now
        elif event == "program":
            r = info["record"]
            self.events.append({
                "name": f"sync ({r.cause})", "cat": "lazycore", "ph": "i", "s": "t",
                "ts": self._us(now), "pid": self.pid, "tid": _SYNCS_TID,
                "args": {"cause": r.cause, "site": r.site, "ops": r.ops,
                         "cache": "hit" if r.hit else "miss", "reason": r.reason or ""}})

    def record_loader(self, name: str, start: float, end: float) -> None:
        """A ``DeviceLoader`` copy (its background thread): the ``loader`` track."""
        self._span(name, start, end, _LOADER_TID)

    def _end_trace(self, now: float) -> None:
        ops, op_time = metrics._trace_time
        if now > self._mark:
            self._span("trace", self._mark, now, args={
                "ops": ops - self._ops0, "in_ops_ms": round((op_time - self._op_time0) * 1e3, 3)})
        self._ops0, self._op_time0 = ops, op_time
        self._mark = now

    def finish(self) -> None:
        now = time.perf_counter()
        self._end_trace(now)
        if self._step_end is not None:
            self._close_step()
        if now > self._step_start and self.steps:
            self._span(f"step {self.steps + 1} (unfinished)", self._step_start, now, _STEPS_TID)

    def to_json(self) -> dict:
        return {"traceEvents": self.events, "displayTimeUnit": "ms"}

    def spans(self, name: str | None = None) -> list[dict]:
        """Complete events (optionally only those called ``name``)."""
        return [e for e in self.events if e["ph"] == "X" and (name is None or e["name"] == name)]


@contextmanager
def profile(path: str | os.PathLike | None = "lazycore_trace.json"):
    """Record a Chrome trace of the block; written to ``path`` on exit (``None``: not
    written, inspect the yielded ``Profile``).

    >>> import numpy as np, lazycore as lc
    >>> with lc.profile(None) as prof:
    ...     y = lc.ops.exp(lc.asarray(np.ones(3)))
    ...     lc.sync()
    >>> sorted({e["name"] for e in prof.spans()} & {"trace", "execute", "step 1"})
    ['execute', 'step 1', 'trace']
    """
    if _active:
        raise RuntimeError("lc.profile() blocks cannot be nested")
    prof = Profile(path)
    _active.append(prof)
    metrics._span_hooks.append(prof.on_phase)
    diagnostics._listeners.append(prof.on_event)
    try:
        yield prof
    finally:
        diagnostics._listeners.remove(prof.on_event)
        metrics._span_hooks.remove(prof.on_phase)
        _active.remove(prof)
        prof.finish()
        if path is not None:
            with open(path, "w") as f:
                json.dump(prof.to_json(), f)
