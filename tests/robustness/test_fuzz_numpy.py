"""Differential fuzzing of lazy_numpy against NumPy."""

import numpy as np
import pytest
from fuzz import FUZZ_SETTINGS, Frontend, Reducer, programs, run_program
from hypothesis import given

lnp = pytest.importorskip("lazy_numpy")


def _writable(d):
    # NumPy reductions give immutable scalars where lazy_numpy gives 0-d arrays: only
    # mutate real arrays (both sides raise the same error otherwise, skipping the step)
    if np.ndim(d) == 0:
        raise ValueError("in-place target is 0-d")


def _iadd(d, s):
    _writable(d)
    d += s


def _imul(d, s):
    _writable(d)
    d *= s


def _set_row(d, s):
    _writable(d)
    d[0] = s.sum()


def _set_mask(d, s):
    _writable(d)
    d[d > 0] = 0


def _mask_iadd(d, s):
    _writable(d)
    d[d < 0] += 1.5 if d.dtype.kind == "f" else 1


def _set_tail(d, s):
    _writable(d)
    d[1:] = s.mean()


def _flat_set(d, s):
    _writable(d)
    d.flat[::2] = s.sum()


def _window(x):
    """A strided view (gathered, scattered back) with ``x``'s shape."""
    if np.ndim(x) == 0:
        return x[...]
    return np.lib.stride_tricks.sliding_window_view(x, 1, axis=0, writeable=True)[..., 0]


def _bits(x):
    """Integers: the same bytes as unsigned (a view: writes wrap into the signed values).
    Floats keep their dtype (their bits differ by the ulps the tolerance allows)."""
    if x.dtype.kind == "i":
        return x.view(f"u{x.dtype.itemsize}")
    return x.view(x.dtype)


def _strided_t(x):
    return np.lib.stride_tricks.as_strided(x, shape=np.shape(x)[::-1], strides=x.strides[::-1])


NUMPY = Frontend(
    name="numpy",
    to_eager=lambda a: a,
    to_lazy=lnp.asarray,
    to_numpy=np.asarray,
    sync=lnp.sync,
    unary={
        "neg": np.negative, "abs": np.abs, "exp": np.exp, "tanh": np.tanh,
        "sqrt_abs": lambda x: np.sqrt(np.abs(x)), "log1p_abs": lambda x: np.log1p(np.abs(x)),
        "sin": np.sin, "floor": np.floor, "scale": lambda x: x * 2.5, "shift": lambda x: x + 1,
        "rsub": lambda x: 3 - x, "sum0": lambda x: x.sum(0), "mean_last": lambda x: x.mean(-1),
        "cumsum": lambda x: np.cumsum(x, 0),
        "clip": lambda x: np.clip(x, -0.5, 0.5), "max_last": lambda x: np.max(x, -1),
        "sort": lambda x: np.sort(x, -1), "mask": lambda x: x[x > 0],
        "astype_i": lambda x: x.astype(np.int32), "square": np.square,
        "std": lambda x: x.std(),
        "argmax": lambda x: np.argmax(x, -1), "floordiv": lambda x: x // 2,
        "mod": lambda x: x % 3,
    },
    binary={
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "maximum": np.maximum, "minimum": np.minimum, "matmul": np.matmul,
        "where": lambda a, b: np.where(a > b, a, b), "arctan2": np.arctan2,
        "concat": lambda a, b: np.concatenate([a, b], 0), "less": np.less,
        "hypot": np.hypot, "stack": lambda a, b: np.stack([a, b]),
    },
    inplace={"flat_set": _flat_set, "iadd": _iadd, "imul": _imul, "set_row": _set_row, "set_mask": _set_mask,
             "mask_iadd": _mask_iadd, "set_tail": _set_tail},
    # NumPy views: a later in-place op on one name must show through the others
    views={"window": _window, "bits": _bits, "strided_T": _strided_t, "T": lambda x: x.T, "tail": lambda x: x[1:], "strided": lambda x: x[::2],
           "ravel": np.ravel, "row": lambda x: x[0] if np.ndim(x) > 1 else x[::-1],
           "flip": lambda x: np.flip(x, 0), "expand": lambda x: x[None, ..., None],
           "swap": lambda x: np.swapaxes(x, 0, -1), "split": lambda x: np.split(x, 1)[0]},
    truth=bool,
    reduce_for_if=Reducer(lambda x: x.sum() > 0, lambda x: x.sum()),
    dtypes=(np.float64, np.float64, np.float32, np.int64),
    rtol=1e-6, atol=1e-6,
)


@given(programs(NUMPY))
@FUZZ_SETTINGS
def test_random_programs_match_numpy(program):
    with np.errstate(all="ignore"):
        run_program(NUMPY, program)
