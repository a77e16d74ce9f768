"""THE table: TensorFlow API name -> lazy implementation (core op or composite).

Every supported TF API is one ``Entry``. The family modules (``_api_*.py``) declare
entries; ``_dispatch`` installs TensorFlow dispatchers from this table and the docs'
supported-API list is generated from it. An implementation receives the TF call's
own arguments (same parameter names and defaults) and returns core handles.

* ``unary`` / ``binary``: elementwise APIs reached through TF's unary/binary
  elementwise dispatchers; ``target`` names the core op when it is one op. A binary
  entry's ``kernel`` (when it has one) is its computation on two operands already
  converted and broadcast by ``_convert.broadcast``; the entry's implementation
  prepares the operands from a plan per operand signature (``_plans``), which the
  operator fast path (``_fastpath``) uses too.
* ``api``: everything else, through ``tf.experimental.dispatch_for_api``; ``tensors``
  names the parameters that may hold a lazy tensor, ``lists`` those holding lists.
* ``patch``: APIs TensorFlow offers no dispatch hook for (``tf.einsum``, ``tf.map_fn``,
  ``tf.signal.rfft``, ...): the exported symbol is replaced by a wrapper that takes the
  lazy path when an argument is lazy and calls TF's function otherwise.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import tensorflow as tf

import lazycore as lc


@dataclass(frozen=True)
class Entry:
    name: str             # canonical TF name without "tf.", e.g. "math.reduce_sum"
    kind: str             # "unary" | "binary" | "api" | "patch"
    impl: Callable
    lowers_to: str        # core op(s) / composite(s), for the docs
    tensors: tuple = ()
    lists: tuple = ()
    kernel: Callable | None = None   # binary: f(a, b) on broadcast core operands


API: dict[str, Entry] = {}


def _add(entry: Entry) -> Entry:
    if entry.name in API:
        raise ValueError(f"TF API {entry.name!r} is already in the table")
    API[entry.name] = entry
    return entry


def resolve(name: str):
    """``"math.add"`` -> ``tf.math.add`` (or the tf.compat.v1 symbol)."""
    for root in (tf, tf.compat.v1):
        obj = root
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    return None


def unary(name: str, op: str | None = None, *, dtypes: Callable | None = None,
          lowers_to: str | None = None):
    """Declare a unary elementwise API: a core op name, or decorate a composite."""
    def register(fn: Callable | None = None):
        _add(Entry(name, "unary", fn if fn is not None else _unary_op(name, op, dtypes),
                   lowers_to or op or fn.__name__.strip("_")))
        return fn
    if op is not None:
        register()
        return None
    return register


def binary(name: str, op: str | None = None, *, dtypes: Callable | None = None,
           lowers_to: str | None = None, kernel: bool = False):
    """Declare a binary elementwise API: a core op name, or decorate a composite. With
    ``kernel=True`` the decorated function is a kernel: it takes the two operands
    already converted and broadcast (core tensors of one dtype and shape)."""
    def register(fn: Callable | None = None):
        if fn is None:
            core = op_kernel(op, dtypes)
        else:
            core = fn if kernel else None
        _add(Entry(name, "binary", _broadcasting(name, core) if core is not None else fn,
                   lowers_to or op or fn.__name__.strip("_"), kernel=core))
        return fn
    if op is not None:
        register()
        return None
    return register


def api(name: str, lowers_to: str, tensors=(), lists=(), kernel: bool = False):
    """Declare any other API; ``kernel=True`` as for ``binary`` (a two-operand API
    whose operands TF converts and broadcasts, e.g. ``__operators__.add``)."""
    def register(fn: Callable):
        _add(Entry(name, "api", _broadcasting(name, fn) if kernel else fn, lowers_to,
                   tuple(tensors), tuple(lists), kernel=fn if kernel else None))
        return fn
    return register


def patch(name: str, lowers_to: str):
    """Declare an API without a TF dispatch hook (see ``patch`` kind above)."""
    def register(fn: Callable):
        _add(Entry(name, "patch", fn, lowers_to))
        return fn
    return register


def require(t: lc.Tensor, check: Callable | None, what: str = "") -> lc.Tensor:
    """TF's per-op dtype lists (``Value for attr 'T' ... not in the list``)."""
    if check is not None and not check(t.dtype):
        raise lc.DTypeError(f"{what} does not accept dtype {t.dtype}")
    return t


def in_range(index: lc.Tensor, size: int, result: lc.Tensor, op: str,
             message: str = "") -> lc.Tensor:
    """``result``, with the range check of TF's CPU kernels on ``index`` (every value in
    ``[0, size)``, else ``InvalidArgumentError``): at the call for host-known indices,
    else at the next barrier (naming ``op`` and the user's line)."""
    lc.checks.index_in_range(index, size, lambda m: tf.errors.InvalidArgumentError(None, None, m),
                             message or f"indices are not in [0, {size})", op=op,
                             negative=False, guards=(result,))
    return result


def _operands(name: str, n: int):
    """Pick the ``n`` operands out of a call, by position or by TF's parameter names."""
    sig = []

    def pick(args, kwargs):
        if len(args) == n and not kwargs:
            return args
        if not sig:
            sig.append(inspect.signature(resolve(name)))
        bound = sig[0].bind(*args, **kwargs).arguments
        return tuple(bound[p] for p in list(sig[0].parameters)[:n])
    return pick


def _unary_op(name: str, op: str, dtypes):
    from ._convert import to_core

    core, pick = lc.ops.get(op), _operands(name, 1)

    def impl(*args, **kwargs):
        (x,) = pick(args, kwargs)
        return core(require(to_core(x), dtypes, op))
    return impl


def op_kernel(op: str, dtypes):
    """The kernel of a binary API that is one core op (after TF's dtype check)."""
    core = lc.ops.get(op)
    if dtypes is None:
        return core

    def kernel(a, b):
        return core(require(a, dtypes, op), b)
    kernel.core_op = core  # the check depends on the dtype only: plans check it once
    return kernel


def _broadcasting(name: str, kernel: Callable):
    """The TF API from its kernel: convert and broadcast the two operands first (from
    the kernel's per-signature plans, ``_plans``)."""
    from ._plans import binary

    pick, run = _operands(name, 2), binary(kernel)

    def impl(*args, **kwargs):
        return run(*pick(args, kwargs))
    return impl


# dtype classes as TensorFlow's kernels register them
FLOAT = lc.dtypes.is_floating
INEXACT = lc.dtypes.is_inexact
INT = lc.dtypes.is_integer
BOOL = lc.dtypes.is_bool
NUMERIC = lambda d: not lc.dtypes.is_bool(d)
REAL = lambda d: not lc.dtypes.is_bool(d) and not lc.dtypes.is_complex(d)
