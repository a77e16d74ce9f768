"""``lnp.random``: NumPy's own random streams, drawn as LazyArrays.

``lnp.random.default_rng(seed)`` wraps ``numpy.random.default_rng(seed)`` (PCG64) and the
module-level functions (``seed``, ``rand``, ``randn``, ``randint``, ``choice`` ...) are
``numpy.random``'s (its global ``RandomState``), so a program draws the same numbers
lazily as eagerly. A draw is made on the host and enters the trace as data: a loop that
draws each step compiles once. ``permutation``, ``shuffle`` and ``choice`` of a LazyArray
draw only the indices (NumPy draws the same ones for an array as for its length) and
take them lazily; ``shuffle`` writes through views as NumPy's does.
"""

from __future__ import annotations

import functools

import numpy as np

from ._array import LazyArray
from ._creation import asarray


def _drawing(fn):
    @functools.wraps(fn)
    def draw(*args, **kwargs):
        out = fn(*args, **kwargs)
        return asarray(out) if isinstance(out, np.ndarray) else out  # scalars stay NumPy's

    return draw


class Generator:
    """NumPy's ``Generator`` (or ``RandomState``, ``source=``) whose arrays are LazyArrays."""

    def __init__(self, seed=None, *, source=None):
        self._np = np.random.default_rng(seed) if source is None else source

    def __repr__(self) -> str:
        return f"lazy_numpy.random.Generator({self._np!r})"

    def __getattr__(self, name):
        return _drawing(getattr(self._np, name))

    def permutation(self, x, axis=0):
        axes = {"axis": axis} if axis else {}  # RandomState's methods take no axis=
        if not (isinstance(x, LazyArray) and x.ndim):
            return _drawing(self._np.permutation)(x, **axes)
        return np.take(x, asarray(self._np.permutation(x.shape[axis])), axis)

    def shuffle(self, x, axis=0) -> None:
        if not isinstance(x, LazyArray):
            return self._np.shuffle(x, **({"axis": axis} if axis else {}))
        x[...] = self.permutation(x, axis)

    def choice(self, a, size=None, replace=True, p=None, **kw):  # kw: axis=, shuffle=
        if not isinstance(a, LazyArray):
            return _drawing(self._np.choice)(a, size, replace, p, **kw)
        axis = kw.pop("axis", 0)
        return np.take(a, asarray(self._np.choice(a.shape[axis], size, replace, p, **kw)), axis)


def default_rng(seed=None) -> Generator:
    return Generator(seed)


def RandomState(seed=None) -> Generator:  # noqa: N802  (NumPy's name)
    return Generator(source=np.random.RandomState(seed))


_global = Generator(source=np.random)  # numpy.random's module-level functions, one state


def __getattr__(name):
    if name.startswith("__"):  # module protocol (``__all__``, ``__path__``): not a draw
        raise AttributeError(f"module 'lazy_numpy.random' has no attribute {name!r}")
    return getattr(_global, name)
