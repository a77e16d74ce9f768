"""``lnp.random``: a NumPy-``Generator``-like API on the core's counter-based RNG.

``lnp.random.default_rng(seed)`` returns a ``Generator`` whose draws are traced (the
seed and a draw counter are program parameters, so a loop that draws each step
compiles once). Streams are reproducible for a seed but are not NumPy's bit streams.
"""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._array import LazyArray
from ._convert import normalize_dtype, numpy_errors, tensor

num = lc.numeric
ops = lc.ops


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, int | np.integer):
        return (int(size),)
    return tuple(int(s) for s in size)


def _float_dtype(dtype):
    dt = normalize_dtype(dtype) or np.dtype(np.float64)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"Unsupported dtype {dt} for this distribution")
    return dt


class Generator:
    """A subset of ``numpy.random.Generator`` producing LazyArrays."""

    def __init__(self, seed=None):
        if seed is None:
            seed = int(np.random.SeedSequence().entropy & 0x7FFFFFFF)
        self._core = lc.random.Generator(int(seed))

    def __repr__(self) -> str:
        return f"lazy_numpy.random.Generator(seed={self._core.seed})"

    @numpy_errors
    def random(self, size=None, dtype=np.float64, out=None):
        dt = _float_dtype(dtype)
        return self._out(self._core.uniform(_shape(size), dt), out)

    @numpy_errors
    def uniform(self, low=0.0, high=1.0, size=None):
        shape = _shape(size) if size is not None else _bshape(low, high)
        u = LazyArray(self._core.uniform(shape, np.float64))
        return low + (high - low) * u if (low, high) != (0.0, 1.0) else u

    @numpy_errors
    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self._out(self._core.normal(_shape(size), _float_dtype(dtype)), out)

    @numpy_errors
    def normal(self, loc=0.0, scale=1.0, size=None):
        shape = _shape(size) if size is not None else _bshape(loc, scale)
        z = LazyArray(self._core.normal(shape, np.float64))
        return loc + scale * z

    @numpy_errors
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        if endpoint:
            high = high + 1
        if high <= low:
            raise ValueError("high <= 0" if low == 0 else "low >= high")
        dt = normalize_dtype(dtype)
        return LazyArray(self._core.integers(int(low), int(high), _shape(size), dt))

    @numpy_errors
    def exponential(self, scale=1.0, size=None):
        u = LazyArray(self._core.uniform(_shape(size), np.float64))
        return -scale * np.log1p(-u)

    @numpy_errors
    def permutation(self, x, axis=0):
        if isinstance(x, int | np.integer):
            return LazyArray(self._core.permutation(int(x)))
        t = tensor(x)
        perm = self._core.permutation(t.shape[axis])
        return LazyArray(num.take(t, perm, axis))

    @numpy_errors
    def shuffle(self, x, axis=0) -> None:
        if not isinstance(x, LazyArray):
            raise TypeError("lazy_numpy.random.shuffle shuffles LazyArrays in place")
        x._t = self.permutation(x, axis)._t

    @numpy_errors
    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        pool = LazyArray(tensor(np.arange(a) if isinstance(a, int | np.integer) else a))
        n = pool.shape[axis]
        shape = _shape(size)
        if p is not None:
            cdf = np.cumsum(LazyArray(tensor(p, np.float64)))
            u = LazyArray(self._core.uniform(shape, np.float64)) * cdf[-1]
            idx = np.searchsorted(cdf, u, side="right")
            idx = np.minimum(idx, n - 1)
            if not replace:
                raise NotImplementedError("choice(replace=False, p=...) is not lazy")
        elif replace:
            idx = LazyArray(self._core.integers(0, n, shape, np.int64))
        else:
            k = int(np.prod(shape))
            if k > n:
                raise ValueError("Cannot take a larger sample than population when "
                                 "replace is False")
            perm = self._core.permutation(n)
            idx = LazyArray(ops.reshape(ops.slice(perm, start_indices=(0,),
                                                  limit_indices=(k,)), new_sizes=shape))
        return np.take(pool, idx, axis=axis)

    @staticmethod
    def _out(t, out):
        if out is None:
            return LazyArray(t)
        out._t = num.cast(t, out.dtype)
        return out


def _bshape(*params):
    return np.broadcast_shapes(*[np.shape(p) for p in params])


def default_rng(seed=None) -> Generator:
    return Generator(seed)


_default = Generator(0)


def seed(value) -> None:
    _default._core.manual_seed(int(value))


def random(size=None):
    return _default.random(size)


def rand(*shape):
    return _default.random(shape)


def randn(*shape):
    return _default.standard_normal(shape)


def normal(loc=0.0, scale=1.0, size=None):
    return _default.normal(loc, scale, size)


def uniform(low=0.0, high=1.0, size=None):
    return _default.uniform(low, high, size)


def randint(low, high=None, size=None, dtype=np.int64):
    return _default.integers(low, high, size, dtype)
