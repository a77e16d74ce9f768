"""The ``np`` a program sees when it runs lazily.

A user who runs a published program lazily writes ``import lazy_numpy as np`` (or
wraps the inputs with ``lnp.asarray``). lazy_numpy is not a whole NumPy module: NumPy's
own functions and methods already dispatch to it for lazy arrays
(``__array_function__``/``__array_ufunc__``), but array *creation* in the program
(``np.zeros``, ``np.linspace`` ...) and its draws from ``np.random`` would make plain
NumPy arrays. ``LAZY_NP`` is NumPy with exactly those taken from lazy_numpy: creation
functions are lazy_numpy's, and ``np.random``'s module-level draws come from NumPy's own
generator (the same numbers as the eager run, so results compare exactly) wrapped by
``lnp.asarray``. Everything else is NumPy's.
"""

from __future__ import annotations

import types

import numpy

CREATION = ("array", "asarray", "asanyarray", "zeros", "ones", "empty", "full", "arange",
            "linspace", "logspace", "geomspace", "eye", "identity", "tri", "indices",
            "fromfunction", "zeros_like", "ones_like", "empty_like", "full_like")
# numpy.random's module-level functions that return arrays (seed/get_state pass through).
DRAWS = ("rand", "randn", "randint", "random", "random_sample", "choice", "permutation",
         "normal", "uniform", "standard_normal")


def _wrapping(fn, lnp):
    def draw(*args, **kwargs):
        out = fn(*args, **kwargs)
        return lnp.asarray(out) if isinstance(out, numpy.ndarray) else out

    draw.__name__ = fn.__name__
    return draw


def _random(lnp) -> types.ModuleType:
    mod = types.ModuleType("numpy.random (lazy draws)")
    for name in dir(numpy.random):
        if not name.startswith("_"):
            setattr(mod, name, getattr(numpy.random, name))
    for name in DRAWS:
        setattr(mod, name, _wrapping(getattr(numpy.random, name), lnp))
    mod.default_rng = lnp.random.default_rng  # NumPy's generator, drawing LazyArrays
    return mod


def lazy_numpy_namespace() -> types.ModuleType:
    import lazy_numpy as lnp

    mod = types.ModuleType("numpy (lazy creation)")
    mod.__dict__.update({k: v for k, v in vars(numpy).items() if not k.startswith("__")})
    for name in CREATION:
        if hasattr(lnp, name):
            setattr(mod, name, getattr(lnp, name))
    mod.random = _random(lnp)
    return mod
