"""Every ufunc in the kernel table against NumPy: values, dtypes, NEP 50 promotion,
``out=``/``where=``, and the ``reduce``/``accumulate``/``outer``/``at`` methods."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from lnp_testing import assert_same, check, check_many, lazify

import lazy_numpy as lnp
from lazy_numpy._kernels import KERNELS

RNG = np.random.default_rng(0)

UFUNCS = sorted(name for name in KERNELS if isinstance(getattr(np, name, None), np.ufunc))
# aliases (np.abs is np.absolute ...) are tested once under their canonical name
UNARY = [n for n in UFUNCS if getattr(np, n).nin == 1 and getattr(np, n).__name__ == n]
BINARY = [n for n in UFUNCS if getattr(np, n).nin == 2 and getattr(np, n).__name__ == n
          and n not in ("matmul", "vecdot", "matvec", "vecmat")]

DTYPES = ["bool", "int8", "int64", "uint8", "float16", "float32", "float64", "complex64",
          "complex128"]


def sample(dtype, shape=(7,), positive=False):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return RNG.random(shape) > 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" or positive else -5
        return RNG.integers(lo, 6, size=shape).astype(dt)
    vals = RNG.standard_normal(shape) * 3
    if positive:
        vals = np.abs(vals) + 0.1
    if dt.kind == "c":
        vals = vals + 1j * RNG.standard_normal(shape)
    return vals.astype(dt)


# tolerances for transcendental kernels that are not bit-exact with NumPy's libm
LOOSE = {"float16": (5e-3, 5e-3), "float32": (5e-5, 1e-5), "complex64": (5e-5, 1e-5)}


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    """One compile per ufunc: every dtype's case is synced together."""
    ufunc = getattr(np, name)
    positive = name in ("log", "log2", "log10", "sqrt", "arccosh", "acosh", "log1p",
                        "reciprocal")
    cases = []
    for dtype in DTYPES:
        x = sample(dtype, positive=positive)
        if name == "spacing" and (x.dtype.kind in "biu" or dtype == "float16"):
            continue  # NumPy's float16 spacing has its own sign convention (documented)
        if name == "reciprocal" and x.dtype.kind in "iu":
            x = x + 1  # integer 1/0 is platform garbage in NumPy
        if name in ("arcsin", "arccos", "arctanh") and x.dtype.kind == "f":
            x = (x / 10).astype(x.dtype)
        if name in ("exp", "exp2", "expm1", "sinh", "cosh", "tan") and dtype == "float16":
            x = (x / 4).astype(x.dtype)
        rtol, atol = LOOSE.get(dtype, (None, None))
        cases.append(((x,), {"rtol": rtol, "atol": atol}))
    check_many(ufunc, cases)


BINARY_DTYPES = ["bool", "int8", "int64", "uint8", "float32", "float64", "complex128"]


@pytest.mark.parametrize("name", BINARY)
def test_binary(name):
    ufunc = getattr(np, name)
    positive = name in ("power", "float_power", "left_shift", "right_shift", "ldexp", "gcd",
                        "lcm")
    cases = []
    for dtype in BINARY_DTYPES:
        if name in ("divide", "true_divide") and dtype == "bool":
            continue  # XLA rewrites convert(bool)/y as select: 0/0 gives 0 (documented)
        x, y = sample(dtype, (3, 4), positive), sample(dtype, (4,), positive)
        if name == "power" and x.dtype.kind in "iu":
            y = (y % 4).astype(y.dtype)
        if name == "ldexp" and x.dtype.kind == "f":
            y = RNG.integers(-3, 4, size=(4,))
        rtol, atol = LOOSE.get(dtype, (None, None))
        cases.append(((x, y), {"rtol": rtol, "atol": atol}))
    check_many(ufunc, cases)


# -- NEP 50 promotion with Python scalars and mixed dtypes --------------------------------

@pytest.mark.parametrize("op", ["add", "multiply", "true_divide", "greater", "maximum"])
def test_python_scalar_promotion(op):
    """NEP 50: Python scalars are weak (int8 + 2 is int8, int8 + 2.5 is float64)."""
    cases = []
    for dtype in ["int8", "uint8", "int32", "float16", "float32", "float64"]:
        for scalar in [2, -3, 2.5, True, 1j, 300, 2**40]:
            if isinstance(scalar, complex) and op in ("greater", "maximum"):
                continue
            x = sample(dtype, (5,), positive=True)
            cases += [(x, scalar), (scalar, x)]
    check_many(getattr(np, op), cases)


def test_overflowing_python_int_raises_like_numpy():
    x = lnp.asarray(np.array([1, 2], np.int8))
    with pytest.raises(OverflowError):
        x + 300
    with pytest.raises(OverflowError):
        lnp.asarray(np.array([1], np.uint8)) + (-1)
    # comparisons with out-of-range Python ints are exact in NumPy 2
    assert_same(x > 300, np.array([1, 2], np.int8) > 300)
    assert_same(x < -1000, np.array([1, 2], np.int8) < -1000)


@pytest.mark.parametrize("a,b", [("int8", "uint8"), ("int64", "uint64"), ("int32", "float32"),
                                 ("float16", "int16"), ("float32", "complex64"),
                                 ("bool", "int8"), ("uint32", "int64"), ("int64", "float32")])
def test_array_array_promotion(a, b):
    x = np.ones(3, a)
    y = np.full(3, 2, b)
    check(np.add, x, y)
    check(np.multiply, y, x)


def test_numpy_scalars_are_strong():
    x = np.arange(3, dtype=np.float32)
    check(lambda a: a + np.float64(1.5), x)
    check(lambda a: a * np.int64(3), np.arange(3, dtype=np.int8))
    check(lambda a: np.float32(2) ** a, x)


def test_default_float64():
    a = lnp.arange(4) / 2
    assert a.dtype == np.float64
    assert lnp.zeros(3).dtype == np.float64
    assert (lnp.arange(3) + 1.5).dtype == np.float64


def test_float64_is_real_64_bit():
    x = np.array([1.0 + 1e-12, 2**53 + 1], dtype=np.float64)
    got = np.asarray(lnp.asarray(x) * 1.0 - 1.0)
    np.testing.assert_array_equal(got, x * 1.0 - 1.0)
    i = np.array([2**62 + 7], dtype=np.int64)
    assert np.asarray(lnp.asarray(i) + 1)[0] == 2**62 + 8


# -- integer/float division and power semantics ---------------------------------------------

INT_PAIRS = (np.array([7, -7, 7, -7, 0, 5, -5, 3]), np.array([2, 2, -2, -2, 3, 0, 0, 1]))
FLOAT_PAIRS = (np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 5.0, np.inf, np.nan, 1.0, -3.0]),
               np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, 1.0, np.inf, np.inf]))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "divmod",
                                  "true_divide"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float32", "float64"])
def test_division_semantics(name, dtype):
    pairs = INT_PAIRS if np.dtype(dtype).kind in "iu" else FLOAT_PAIRS
    x, y = (p.astype(dtype) if np.dtype(dtype).kind != "u" else np.abs(p).astype(dtype)
            for p in pairs)
    check(getattr(np, name), x, y)
    check(getattr(np, name), x, 3)
    check(getattr(np, name), x, -2.5)


def test_signed_zero_results():
    x = np.array([-0.0, 0.0, -1.0, 1.0])
    got = np.asarray(np.remainder(lnp.asarray(x), -2.0))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.remainder(x, -2.0)))
    got = np.asarray(np.floor_divide(lnp.asarray(x), 3.0))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.floor_divide(x, 3.0)))


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "float32", "float64"])
def test_power_semantics(dtype):
    base = np.array([0, 1, 2, 3, 5, 7], dtype)
    exps = np.array([0, 3, 2, 5, 1, 2], dtype)
    check(np.power, base, exps)
    check(np.power, base, 2)
    check(np.power, 2, exps)
    check(np.float_power, base, exps)


def test_inplace_operators_use_out():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    a = lnp.asarray(x)
    a += 1
    a *= np.arange(3)
    a -= lnp.asarray(np.ones(3))
    x += 1
    x *= np.arange(3)
    x -= np.ones(3)
    assert_same(a, x)


def test_inplace_casting_error():
    a = lnp.asarray(np.arange(3))
    with pytest.raises(TypeError):
        a += 1.5
    b = lnp.asarray(np.arange(3.0))
    b += 1  # int into float is fine
    assert_same(b, np.arange(3.0) + 1)


def test_out_and_where():
    x, y = np.arange(6.0).reshape(2, 3), np.full(3, 10.0)
    mask = np.array([True, False, True])
    out_np = np.full((2, 3), -1.0)
    np.add(x, y, out=out_np, where=mask)
    out_lz = lnp.asarray(np.full((2, 3), -1.0))
    res = np.add(lnp.asarray(x), lnp.asarray(y), out=out_lz, where=lnp.asarray(mask))
    assert res is out_lz
    assert_same(out_lz, out_np)
    # an ndarray out receives the values
    host = np.zeros((2, 3))
    np.multiply(lnp.asarray(x), 2, out=host)
    np.testing.assert_array_equal(host, x * 2)


def test_out_shape_mismatch_raises():
    with pytest.raises(ValueError):
        np.add(lnp.asarray(np.ones(3)), 1, out=lnp.asarray(np.ones(4)))


def test_dtype_argument():
    check(lambda a: np.add(a, a, dtype=np.float32), np.arange(4, dtype=np.int16))
    check(lambda a: np.sqrt(a, dtype=np.float32), np.arange(4.0))


def test_two_output_ufuncs():
    x = np.array([-2.5, -0.5, 0.0, 1.5, np.inf, -np.inf])
    check(np.modf, x)
    check(np.divmod, x, 0.75)


def test_broadcast_mismatch_is_valueerror():
    with pytest.raises(ValueError):
        lnp.asarray(np.ones(3)) + lnp.asarray(np.ones(4))
    with pytest.raises(TypeError):
        np.subtract(lnp.asarray(np.ones(2, bool)), lnp.asarray(np.ones(2, bool)))
    with pytest.raises(TypeError):
        np.bitwise_and(lnp.asarray(np.ones(2)), 1)


def test_nan_propagation():
    x = np.array([1.0, np.nan, 3.0, np.nan])
    y = np.array([np.nan, 2.0, 1.0, np.nan])
    for f in (np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp, np.hypot, np.heaviside):
        check(f, x, y)


def test_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 1e300, -2.0])
    for f in (np.isnan, np.isinf, np.isfinite, np.signbit, np.spacing, np.sign, np.rint,
              np.trunc, np.floor, np.ceil, np.fabs, np.exp, np.square):
        check(f, x)
    check(np.copysign, x, -1.0)
    check(np.nextafter, x, 0.0)
    check(np.logaddexp, x, x)


def test_matmul_ufunc():
    a, b = sample("float64", (2, 3, 4)), sample("float64", (4, 5))
    check(np.matmul, a, b)
    check(lambda x, y: x @ y, a, b)
    check(np.matmul, sample("int32", (3, 4)), sample("int32", (4,)))
    check(np.matmul, sample("bool", (3, 4)), sample("bool", (4, 2)))
    check(np.matmul, sample("float32", (3, 4)), sample("float32", (5, 2)))  # ValueError
    check(np.vecdot, sample("complex128", (3, 4)), sample("complex128", (4,)))
    check(np.matvec, sample("float64", (2, 3, 4)), sample("float64", (4,)))
    check(np.vecmat, sample("float64", (3,)), sample("float64", (3, 4)))


# -- methods ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_and",
                                  "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8", "float32", "float64"])
def test_reduce(name, dtype):
    ufunc = getattr(np, name)
    x = sample(dtype, (3, 4, 5))
    check(lambda a: ufunc.reduce(a), x)
    check(lambda a: ufunc.reduce(a, axis=(0, 2), keepdims=True), x)
    check(lambda a: ufunc.reduce(a, axis=None), x)
    check(lambda a: ufunc.reduce(a, axis=-1, initial=1), x)
    check(lambda a: ufunc.reduce(a, axis=1, where=np.array([True, False, True, True]),
                                 initial=2), x)


def test_reduce_errors():
    check(lambda a: np.maximum.reduce(a, axis=0), np.ones((0, 3)))
    check(lambda a: np.maximum.reduce(a, axis=0, initial=5.0), np.ones((0, 3)))
    check(lambda a: np.add.reduce(a, axis=3), np.ones((2, 3)))
    check(lambda a: np.add.reduce(a, axis=(0, 0)), np.ones((2, 3)))


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logaddexp"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float64"])
def test_accumulate(name, dtype):
    if name == "logaddexp" and dtype != "float64":
        pytest.skip("float only")
    x = sample(dtype, (3, 4))
    check(lambda a: getattr(np, name).accumulate(a), x)
    check(lambda a: getattr(np, name).accumulate(a, axis=1), x)
    check(lambda a: getattr(np, name).accumulate(a, axis=1, dtype=np.float64), x)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "power", "greater", "arctan2",
                                  "logaddexp"])
def test_outer(name):
    check(lambda a, b: getattr(np, name).outer(a, b), sample("float64", (3,), True),
          sample("float64", (2, 2), True))


def test_at():
    x = np.zeros(5)
    idx = np.array([0, 1, 1, 4, 1])
    a = lnp.asarray(x)
    np.add.at(a, idx, 2.0)
    np.add.at(x, idx, 2.0)
    assert_same(a, x)
    np.subtract.at(a, [0, 0], 1.0)
    np.subtract.at(x, [0, 0], 1.0)
    assert_same(a, x)
    np.multiply.at(a, idx, 3.0)  # falls back to NumPy, still in place
    np.multiply.at(x, idx, 3.0)
    assert_same(a, x)


@pytest.mark.parametrize("bad", [[1, 7], [1, -7]])
def test_at_out_of_range_raises_like_numpy(bad):
    """``np.add.at`` with a computed index array out of range raises NumPy's IndexError at
    the next barrier (XLA's scatter clamped it into the last row); other values read."""
    with pytest.raises(IndexError):
        np.add.at(np.zeros(5), np.array(bad), 1.0)
    a, other = lnp.asarray(np.zeros(5)), lnp.asarray(np.ones(2)) * 3
    np.add.at(a, lnp.asarray(np.array(bad)) * 1, 1.0)
    with pytest.raises(IndexError, match="checked in the compiled program"):
        np.asarray(a)
    assert_same(other, np.ones(2) * 3)


def test_unimplemented_ufunc_falls_back(counters):
    x = np.array([12, 18, 7])
    check(np.gcd, x, 6)
    check(np.frexp, np.array([1.5, 8.0, -3.0]))
    assert counters()["fallback::numpy.gcd"] >= 1


# -- hypothesis: shapes and dtypes -----------------------------------------------------------

HYP_DTYPES = st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64])
HYP_OPS = st.sampled_from([np.add, np.subtract, np.multiply, np.true_divide, np.maximum,
                           np.less_equal, np.floor_divide, np.remainder])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), op=HYP_OPS, d1=HYP_DTYPES, d2=HYP_DTYPES,
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
def test_hypothesis_binary(data, op, d1, d2, shapes):
    x = data.draw(hnp.arrays(d1, shapes.input_shapes[0],
                             elements=st.integers(-20, 20) if np.dtype(d1).kind == "i" else
                             st.integers(0, 20) if np.dtype(d1).kind == "u" else
                             st.floats(-100, 100, width=32)))
    y = data.draw(hnp.arrays(d2, shapes.input_shapes[1],
                             elements=st.integers(1, 20) if np.dtype(d2).kind in "iu" else
                             st.floats(0.5, 100, width=32)))
    check(op, x, y, rtol=1e-5 if np.float32 in (d1, d2) else None)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64]),
                    hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
                    elements=st.floats(-50, 50, width=32, allow_subnormal=False)),
       op=st.sampled_from([np.exp, np.tanh, np.abs, np.negative, np.square, np.sign,
                           np.floor, np.rint, np.cbrt]))
def test_hypothesis_unary(x, op):
    check(op, x, rtol=5e-5 if x.dtype == np.float32 else 1e-12, atol=1e-6)


def test_lazify_helper_roundtrip():
    assert isinstance(lazify(np.ones(2)), lnp.LazyArray)


def test_unimplemented_ufunc_methods_fall_back(counters):
    x = np.arange(10.0)
    check(lambda a: np.add.reduceat(a, [0, 4, 7]), x)
    check(lambda a: np.subtract.reduce(a), x)
    check(lambda a: np.maximum.accumulate(a), np.array([1.0, np.nan, 3.0, 2.0]) + 0j)
    c = counters()
    assert c["fallback::numpy.add.reduceat"] == 1
    assert c["fallback::numpy.subtract.reduce"] == 1
    assert c["fallback::numpy.maximum.accumulate"] == 1


def test_running_extremes_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 2.0, 5.0, np.nan]])
    for f in (np.maximum.accumulate, np.minimum.accumulate):
        check(f, x)
        check(lambda a, f=f: f(a, axis=1), x)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_array_to_negative_array_power_raises_at_the_next_barrier(dtype):
    """NumPy's integer power loop refuses a negative exponent element; XLA would return
    0/1 silently. The exponent is data, so the error comes at the next barrier."""
    base, exponent = np.array([2, 3, 1], dtype), np.array([1, -2, 3], dtype)
    with pytest.raises(ValueError):
        np.power(base, exponent)
    result = np.power(lnp.asarray(base), lnp.asarray(exponent))
    with pytest.raises(ValueError, match="negative integer powers"):
        np.asarray(result)
    check(lambda a, b: a ** b, base, np.abs(exponent))
    check(lambda a, b: a ** b, base, np.abs(exponent).astype(np.uint8))
