"""Tiered execution: nobody waits for a compile (``settings.tier``).

``"auto"`` (default): a program without a compiled executable runs in the interpreter
(``lazycore.interpreter``: NumPy kernels / eager ``jax.lax`` on the program's buffers).
When the same program (same cache key) runs again, it is compiled in a background
thread while the interpreter keeps the user's program moving; the runs after the
compile finishes use the executable. A program loaded from the persistent cache, or
placed on a device mesh, runs compiled at once. ``"compile"``: compile before the first
run (the cold start of a tight loop pays once, deterministic counters). ``"interpret"``:
never compile. With a persistent cache (``persistent_cache_dir``), ``"auto"`` queues the
background compile at a program's first run, so a later process finds it on disk.

Visible in ``metrics`` (``interpreted_executions``, ``background_compiles``; a
background compile counts in ``compiles`` too) and, with ``debug`` on, in the log.
``wait_compiles()`` blocks until every background compile has finished (tests use it
to make the switch deterministic).
"""

from __future__ import annotations

import atexit
import queue
import sys
import threading
import time

from . import cache, diagnostics, metrics
from .config import settings
from .lowering import Program, lower

_MAX_SEEN = 4096
_seen: dict = {}          # executable cache key -> runs interpreted so far
_in_flight: set = set()   # keys queued or compiling
_failed: dict = {}        # key -> the compile's exception (such a program stays interpreted)
_interpreted_s: dict = {}  # key -> seconds its last interpreted run took
_jobs: queue.Queue = queue.Queue()
_done = threading.Condition()
_worker: list = []        # the background thread, started on first use


def interpret_now(program: Program, key, donate: tuple, placement, site: str = "") -> bool:
    """Whether this run of ``program`` goes to the interpreter; in ``"auto"`` it also
    queues the background compile of a program seen before."""
    tier = settings.tier
    if tier == "compile" or placement is not None or settings.verify:
        return False  # lc.verify() checks the compiled program against op-by-op eager
    if tier == "auto":
        if cache.lookup(key) is not None:
            return False
        if settings.persistent_cache_dir and cache.stored(
                cache.program_digest(program, donate)):
            return False  # loading is cheap: the runtime loads it
    runs = _seen.get(key, 0)
    if runs == 0 and len(_seen) >= _MAX_SEEN:
        _seen.clear()
    _seen[key] = runs + 1
    # with a persistent cache a first run is compiled too: the next process loads it
    repeats = runs >= 1 or bool(settings.persistent_cache_dir)
    if tier == "auto" and repeats and key not in _failed:
        if key not in _in_flight:
            _submit(program, key, donate, site)
        last = _interpreted_s.get(key, 0.0)
        if runs >= 2 and last * 1e3 > settings.interpret_wait_ms:
            # slow interpreted (the faster of two runs: a process's first run of any
            # program is slowed by cold code): wait for the executable, but no longer
            # than one more interpreted run takes (a run costs at most twice that: a
            # compile can take seconds on a loaded machine; waiting for all of it
            # stalled first runs 13 s)
            metrics.inc("compile_waits")
            _debug(f"waiting up to {last * 1e3:.0f} ms (its interpreted run) for the"
                   f" background compile of {_describe(program)}")
            _wait_for(key, last)
            if cache.lookup(key) is not None:
                _seen[key] = runs  # this run is compiled, not interpreted
                return False
    return True


def record_interpreted(key, seconds: float) -> None:
    """How long the interpreted run of ``key`` took; the fastest run is kept
    (``interpret_now`` weighs it)."""
    if len(_interpreted_s) >= _MAX_SEEN:
        _interpreted_s.clear()
    _interpreted_s[key] = min(seconds, _interpreted_s.get(key, seconds))


def _wait_for(key, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    with _done:
        while key in _in_flight and (left := deadline - time.monotonic()) > 0:
            _done.wait(left)


def donation(program: Program, donate: tuple, site: str = "") -> tuple:
    """The donation this run uses. In ``"auto"``, a program compiled only for fewer
    donated inputs (its first compiled runs had more inputs still held) runs such an
    executable now, donating a subset (never donating is always safe), while the
    variant for ``donate`` compiles in the background: a change in which buffers are
    free to reuse never makes the user wait for a compile."""
    if not donate or settings.tier != "auto":
        return donate
    key = (program.key, donate)
    if cache.lookup(key) is not None:
        return donate
    wanted = set(donate)
    subsets = [d for d in cache.donations(program.key) if set(d) <= wanted]
    if not subsets:
        return donate
    if key not in _in_flight and key not in _failed:
        _submit(program, key, donate, site)
    return max(subsets, key=len)


def runs(key) -> int:
    """How many times the program under this executable cache key was interpreted."""
    return _seen.get(key, 0)


def _submit(program: Program, key, donate: tuple, site: str) -> None:
    with _done:
        _in_flight.add(key)
    _jobs.put((program, key, donate, site))
    metrics.inc("background_compiles_queued")
    if not _worker:
        thread = threading.Thread(target=_work, name="lazycore-compile", daemon=True)
        _worker.append(thread)
        thread.start()
    _debug(f"background compile queued: {_describe(program)}")


def _work() -> None:
    while True:
        job = _jobs.get()
        if job is None:
            return
        program, key, donate, site = job
        try:
            _compile(program, key, donate, site)
        finally:
            del program, job
            with _done:
                _in_flight.discard(key)
                _done.notify_all()


def _compile(program: Program, key, donate: tuple, site: str) -> None:
    digest = cache.program_digest(program, donate) if settings.persistent_cache_dir else None
    try:
        # site: the line whose sync queued the compile
        seconds = compile_now(program, key, donate, site or "<background compile>", digest)[1]
    except Exception as e:  # noqa: BLE001 - the interpreter keeps running the program
        _failed[key] = e
        metrics.inc("background_compile_failures")
        _debug(f"background compile failed ({type(e).__name__}: {e}); stays interpreted")
        return
    metrics.inc("background_compiles")
    _debug(f"background compile done in {seconds * 1e3:.1f} ms: {_describe(program)};"
           " its next run uses the executable")


def compile_now(program: Program, key, donate: tuple, site: str, digest=None,
                shardings=None) -> tuple:
    """Lower and compile ``program``, count it, keep it under ``key`` (and on disk under
    ``digest``): (executable, seconds). The runtime's foreground compiles use it too."""
    start = time.perf_counter()
    lowered = lower(program, donate, shardings)
    lowered_at = time.perf_counter()
    executable = lowered.compile()
    done = time.perf_counter()
    metrics.add_time("lower", lowered_at - start)
    metrics.add_time("compile", done - lowered_at)
    metrics.inc("compiles")
    diagnostics.on_compile(program, lowered, executable, site)  # LAZYCORE_DUMP_DIR
    cache.store(key, executable)
    if digest is not None:
        cache.save(digest, executable)
    return executable, done - start


def wait_compiles(timeout: float | None = None) -> bool:
    """Block until no background compile is queued or running; False on timeout."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _done:
        while _in_flight:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            _done.wait(left)
    return True


def threads() -> int:
    """Threads this module runs (the runtime's donation check does not count them)."""
    return sum(1 for t in _worker if t.is_alive())


def reset() -> None:
    """Forget which programs were seen (the next run of each is a first run)."""
    wait_compiles()
    _seen.clear()
    _failed.clear()
    _interpreted_s.clear()


def _describe(program: Program) -> str:
    from .lowering import graph_id

    ops = program.size - len(program.inputs)
    return f"graph={graph_id(program):08x} ops={ops}"


def _debug(message: str) -> None:
    if settings.debug:
        print(f"[lazycore] tier: {message}", file=sys.stderr)


def _stop() -> None:
    """At exit: drop queued compiles and wait for a running one (a process that ends
    while XLA compiles on another thread aborts)."""
    if not _worker:
        return
    while True:
        try:
            _jobs.get_nowait()
        except queue.Empty:
            break
    with _done:
        _in_flight.clear()
    _jobs.put(None)
    _worker[0].join()


atexit.register(_stop)
