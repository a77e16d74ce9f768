"""``DeviceLoader``: host batches moved to the device while the previous step runs.

PyTorch/XLA's ``MpDeviceLoader`` equivalent, shared by every frontend. A background
thread pulls batches from any iterable (a ``torch.utils.data.DataLoader``, a
``tf.data.Dataset``, a generator of NumPy arrays), converts each array leaf to host
memory, starts its host-to-device transfer (``jax.device_put``) and waits for it
there, and queues the batch (``prefetch`` batches ahead). The training loop gets
device-resident lazy values, so a step never waits for its input's copy, and the
loader calls the frontend's barrier every ``batches_per_execution`` batches (before
handing out the next one), so one program runs per that many batches.

Under ``lc.profile`` the copies appear on the ``loader`` track (``h2d batch <i>``)
next to the steps they overlap. While the thread runs, syncs donate no buffers
(another thread is alive: see ``runtime``); it ends when the source is exhausted or
the loader is closed.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import jax
import numpy as np

from . import profile as _profile
from .runtime import asarray, default_device, sync
from .tensor import Tensor

_DONE = object()


class _Failure:
    def __init__(self, error: BaseException):
        self.error = error


def _default_to_host(leaf):
    return np.asarray(leaf) if isinstance(leaf, np.ndarray | np.generic) else None  # else as is


class DeviceLoader:
    """Iterate ``source``'s batches as device-resident lazy values.

    ``batches_per_execution``: the barrier (``barrier``, default ``lc.sync``) runs
    before every ``batches_per_execution``-th batch after the first and when the
    iteration ends, so each program covers that many steps (1: one step per batch).
    ``prefetch``: batches transferred ahead of the one the loop is using.
    ``to_host(leaf)``: a leaf as a NumPy array, or None to pass it through unchanged
    (a label string, a Python int); ``wrap(core_tensor)``: the frontend's tensor.
    Batches may be arrays or nests of tuples, lists and dicts of them.

    >>> import numpy as np, lazycore as lc
    >>> batches = [np.full(3, i, np.float32) for i in range(4)]
    >>> [float(lc.to_numpy(b).sum()) for b in lc.DeviceLoader(batches, batches_per_execution=2)]
    [0.0, 3.0, 6.0, 9.0]
    """

    def __init__(self, source: Iterable, *, batches_per_execution: int = 1, prefetch: int = 2,
                 to_host: Callable[[Any], np.ndarray | None] = _default_to_host,
                 wrap: Callable[[Tensor], Any] = lambda t: t,
                 barrier: Callable[[], None] | None = None):
        if int(batches_per_execution) < 1:
            raise ValueError(f"batches_per_execution must be >= 1, got {batches_per_execution}")
        if int(prefetch) < 1:
            raise ValueError(f"prefetch must be >= 1, got {prefetch}")
        self.source = source
        self.batches_per_execution = int(batches_per_execution)
        self.prefetch = int(prefetch)
        self._to_host = to_host
        self._wrap = wrap
        self._barrier = barrier if barrier is not None else (lambda: sync(cause="explicit"))
        self._stop: threading.Event | None = None

    def __len__(self) -> int:
        return len(self.source)  # TypeError for a source without a length, as len() gives

    def __iter__(self):
        self.close()
        stop = self._stop = threading.Event()
        ready: queue.Queue = queue.Queue(maxsize=self.prefetch)
        thread = threading.Thread(target=self._produce, args=(ready, stop),
                                  name="lazycore-device-loader", daemon=True)
        thread.start()
        try:
            count = 0
            while True:
                item = ready.get()
                if item is _DONE:
                    break
                if isinstance(item, _Failure):
                    raise item.error
                if count and count % self.batches_per_execution == 0:
                    self._barrier()
                count += 1
                yield self._unflatten(item)
            if count:
                self._barrier()
        finally:
            stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full queue
                try:
                    ready.get_nowait()
                except queue.Empty:
                    thread.join(0.01)

    def close(self) -> None:
        """Stop the background transfers of an iteration left early."""
        if self._stop is not None:
            self._stop.set()

    # -- the background thread ------------------------------------------------------------
    def _produce(self, ready: queue.Queue, stop: threading.Event) -> None:
        device = default_device()
        try:
            source = iter(self.source)
            index = 0
            while not stop.is_set():  # checked before pulling: no batch read after close
                try:
                    batch = next(source)
                except StopIteration:
                    break
                start = time.perf_counter()
                flat = _flatten(batch)
                arrays = [self._transfer(leaf, device) for leaf in flat[1]]
                jax.block_until_ready([a for a in arrays if isinstance(a, jax.Array)])
                _record(f"h2d batch {index}", start, time.perf_counter())
                if not _put(ready, (flat[0], arrays), stop):
                    return
                index += 1
        except BaseException as error:  # noqa: BLE001 - re-raised in the loop's thread
            _put(ready, _Failure(error), stop)
            return
        _put(ready, _DONE, stop)

    def _transfer(self, leaf, device):
        host = self._to_host(leaf)
        if host is None:
            return leaf
        return jax.device_put(np.asarray(host, order="C"), device)

    def _unflatten(self, item):
        structure, arrays = item
        return _unflatten(structure, iter([self._wrap(asarray(a)) if isinstance(a, jax.Array) else a
                                           for a in arrays]))


def _put(ready: queue.Queue, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            ready.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def _record(name: str, start: float, end: float) -> None:
    for prof in list(_profile._active):
        prof.record_loader(name, start, end)


# -- nests of tuples / lists / dicts (namedtuples keep their type) -------------------------

def _flatten(batch):
    leaves: list = []

    def walk(x):
        if isinstance(x, dict):
            return ("dict", type(x), [(k, walk(v)) for k, v in x.items()])
        if isinstance(x, tuple | list):
            return ("seq", type(x), [walk(v) for v in x])
        leaves.append(x)
        return ("leaf",)

    return walk(batch), leaves


def _unflatten(structure, leaves):
    kind = structure[0]
    if kind == "leaf":
        return next(leaves)
    if kind == "dict":
        return structure[1]((k, _unflatten(s, leaves)) for k, s in structure[2])
    items = [_unflatten(s, leaves) for s in structure[2]]
    cls = structure[1]
    if cls is list:
        return items
    if cls is tuple:
        return tuple(items)
    return cls(*items) if hasattr(cls, "_fields") else cls(items)
