"""lazycore: the shared LazyTensor core (IR, ops, lowering to XLA, cache, runtime).

>>> import numpy as np, lazycore as lc
>>> x = lc.asarray(np.arange(3.0))
>>> y = lc.ops.mul(x, x)          # recorded, not run
>>> lc.to_numpy(y).tolist()       # observing a value syncs
[0.0, 1.0, 4.0]
"""

from __future__ import annotations

import jax as _jax

# Every frontend needs real 64-bit types (NumPy float64, PyTorch int64 indices).
_jax.config.update("jax_enable_x64", True)

# Debugging tools: sync log / recompile summary / allow_sync guard, Chrome trace.
from . import (  # noqa: E402
    autodiff,
    cache,
    debug,
    diagnostics,  # noqa: E402
    dtypes,
    errors,
    interop,
    leaks,
    metrics,
    numeric,
    ops,
    plans,
    random,
    runtime,
    sharding,  # noqa: E402
    sources,
    subprogram,
)
from .autodiff import grad  # noqa: E402
from .config import settings  # noqa: E402
from .configuring import configure  # noqa: E402
from .diagnostics import allow_sync  # noqa: E402
from .errors import (  # noqa: E402
    AxisError,
    DTypeError,
    ExecutionError,
    ImplicitSyncError,  # noqa: E402
    LazyError,
    ShapeError,
    VerifyError,
)
from .ir import Aval, Node  # noqa: E402
from .leaks import GraphLeakWarning, data_loading, logging_region, mark_region  # noqa: E402
from .loader import DeviceLoader  # noqa: E402
from .profile import profile  # noqa: E402  (the function; the module is lazycore.profile)
from .runtime import (  # noqa: E402
    asarray,
    fallback,
    mark_step,
    materialize,
    register_internal_path,
    sync,
    to_numpy,
    to_numpy_many,
    wait,
)
from .sharded import mark_sharding  # noqa: E402
from .sharding import Mesh  # noqa: E402
from .tensor import Tensor  # noqa: E402
from .trace import constant, scalar  # noqa: E402
from .verify import verify  # noqa: E402  (the context manager; the module is lazycore.verify)

__all__ = [
    "Aval", "AxisError", "DTypeError", "ExecutionError", "LazyError", "Node", "ShapeError", "Tensor", "asarray",
    "autodiff", "cache", "configure", "constant", "debug", "dtypes", "errors", "fallback",
    "grad", "interop", "mark_step", "materialize", "metrics", "numeric", "ops", "random",
    "register_internal_path", "runtime", "scalar", "settings", "sync", "to_numpy",
    "to_numpy_many", "wait",
]
__all__ += ["ImplicitSyncError", "allow_sync", "diagnostics", "profile"]
__all__ += ["Mesh", "mark_sharding", "sharding"]
__all__ += ["DeviceLoader", "VerifyError", "sources", "verify"]
__all__ += ["GraphLeakWarning", "data_loading", "leaks", "logging_region", "mark_region"]
__version__ = "0.1.0"
