"""The planned Python operators (``_operators``): every result, dtype, shape and error
matches NumPy on the first call of a signature (the general path) and on later ones
(the plan), and the plan records exactly the nodes the general path records."""

from __future__ import annotations

import enum
import operator

import numpy as np
import pytest
from lnp_testing import assert_same, check, check_many

import lazy_numpy as lnp
from lazy_numpy import _array

RNG = np.random.default_rng(1)
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]
SCALARS = [True, False, 0, 3, -2, 300, 2**40, 2**70, 0.5, -2.5, 1e300, 1j, 2 - 3j]
BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.lshift, operator.rshift, operator.and_, operator.xor,
          operator.or_]
COMPARISONS = [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]
UNARY = [operator.neg, operator.pos, operator.abs, operator.invert]


def sample(dtype, shape=(4,)):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return RNG.random(shape) > 0.5
    if dt.kind in "iu":
        return RNG.integers(0 if dt.kind == "u" else -4, 5, size=shape).astype(dt)
    vals = RNG.standard_normal(shape) * 3
    vals = vals + 1j * RNG.standard_normal(shape) if dt.kind == "c" else vals
    return np.asarray(vals).astype(dt)  # 0-d stays an array, not a NumPy scalar


def twice(op):
    """Both calls of a signature: the first learns the plan, the second replays it."""
    return lambda *args: (op(*args), op(*args))


@pytest.mark.parametrize("op", BINARY + COMPARISONS, ids=lambda op: op.__name__)
def test_python_scalars_of_each_type(op):
    """NEP 50: weak bool/int/float/complex on either side, overflow errors included."""
    cases = []
    for dtype in DTYPES:
        x = sample(dtype)
        for s in SCALARS:
            if not general_path_gap(op, dtype, s):
                cases += [(x, s), (s, x)]
    check_many(twice(op), cases)


def general_path_gap(op, dtype, scalar) -> bool:
    """Cases where ``np.<ufunc>`` on a LazyArray already differs from NumPy (not the
    plans): a bool array against an int beyond int64 (NumPy raises OverflowError, lazy
    compares exactly); bool / 0 (0/0 gives 0, not nan, after the core's lowering) and
    complex / 0 (nan+nanj where NumPy has infinities)."""
    if op in COMPARISONS:
        return dtype == "bool" and type(scalar) is int and abs(scalar) >= 2**63
    divides = op in (operator.truediv, operator.floordiv, operator.mod)
    return divides and dtype in ("bool", "complex64", "complex128") and scalar == 0


@pytest.mark.parametrize("op", BINARY + COMPARISONS, ids=lambda op: op.__name__)
def test_array_pairs(op):
    """Strong dtypes on both sides: promotion, int / int -> float64, bool results."""
    pairs = [("float32", "float32"), ("int8", "uint8"), ("int64", "float32"),
             ("float16", "float16"), ("int32", "int32"), ("bool", "bool"),
             ("uint64", "int64"), ("complex64", "float64"), ("int16", "float16")]
    cases = [(sample(a), sample(b)) for a, b in pairs] + \
        [(sample(b), sample(a)) for a, b in pairs]
    check_many(twice(op), cases)


@pytest.mark.parametrize("op", UNARY, ids=lambda op: op.__name__)
def test_unary(op):
    check_many(twice(op), [(sample(d),) for d in DTYPES])


def test_plans_keep_dtypes_and_shapes_apart():
    """Interleaved signatures of one operator never reuse each other's plan."""
    cases = [(sample("float32"), sample("float32")), (sample("float64"), sample("float32")),
             (sample("float32", (3, 4)), sample("float32")),
             (sample("float32", (3, 1)), sample("float32", (1, 4))),
             (sample("float32", ()), sample("float32", (2,))),
             (sample("int8"), 2), (sample("int8", (2, 2)), 2.0), (sample("float32", ()), 2),
             (sample("float32"), True), (sample("float32"), 1j),
             (sample("float32"), sample("float32", (3,)))]  # mismatch: ValueError
    for _ in range(3):
        check_many(operator.mul, cases)
        check_many(lambda a, b: b * a, cases)


def test_one_array_with_alternating_operands():
    """The latest-hit shortcut compares both signatures: x's aval stays the same object
    while the other operand's type or dtype changes from call to call."""
    x = sample("int8")
    others = [sample("int8"), 2, 2.0, True, sample("float32"), 1j, sample("uint8")]
    for _ in range(3):
        check_many(operator.mul, [(x, o) for o in others])
        check_many(lambda a, b: operator.isub(a.copy(), b), [(x, o) for o in others])


def test_overflowing_python_ints_after_a_plan():
    """The plan is per type: a later out-of-range value still raises like NumPy, and
    comparisons with it stay exact."""
    x = lnp.asarray(np.array([1, 2], np.int8))
    assert_same(x + 3, np.array([4, 5], np.int8))
    assert_same(x < 5, np.array([True, True]))
    with pytest.raises(OverflowError):
        x + 300
    with pytest.raises(OverflowError):
        300 + x
    assert_same(x < 300, np.array([True, True]))
    assert_same(x + 3, np.array([4, 5], np.int8))


def test_inplace_operators():
    """Same-dtype, same-shape results replace ``_t``; others take the general path."""
    for _ in range(2):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        a = lnp.asarray(x)
        alias = a
        a += 1
        a *= lnp.asarray(np.full((2, 3), 2, np.float32))
        a -= lnp.asarray(np.ones(3, np.float32))  # broadcast into a
        a /= 2
        x += 1
        x *= 2
        x -= 1
        x /= 2
        assert alias is a
        assert_same(a, x)


def test_inplace_errors_repeat():
    i = lnp.asarray(np.arange(3, dtype=np.int8))
    for _ in range(2):
        i += 1
        with pytest.raises(TypeError):
            i += 1.5
        with pytest.raises(TypeError):
            i /= 2
        with pytest.raises(OverflowError):
            i += 300
        with pytest.raises(ValueError):
            i += lnp.asarray(np.ones((2, 3), np.int8))
    assert_same(i, np.arange(3, dtype=np.int8) + 2)


def test_nodes_match_the_general_path():
    """The plan replays ``_ufuncs.call``: same nodes (structural hashes) as ``np.*``."""
    f32, f16 = lnp.asarray(sample("float32")), lnp.asarray(sample("float16"))
    i64, row = lnp.asarray(sample("int64")), lnp.asarray(sample("float32", (3, 1)))
    cases = [(operator.mul, f32, f32, np.multiply), (operator.add, f32, 0.5, np.add),
             (operator.truediv, i64, i64, np.true_divide), (operator.sub, 2, f16, np.subtract),
             (operator.lt, i64, 2.5, np.less), (operator.add, row, f32, np.add),
             (operator.mul, f16, f16, np.multiply)]
    for op, a, b, ufunc in cases:
        for _ in range(2):
            assert op(a, b)._t.node.hash == ufunc(a, b)._t.node.hash, (op, a, b)
    assert (-i64)._t.node.hash == np.negative(i64)._t.node.hash


def test_planned_calls_skip_ufunc_dispatch(monkeypatch):
    x, y = lnp.asarray(sample("float32")), lnp.asarray(sample("float32"))
    x * y, x + 0.5, 0.5 - x, -x  # learn
    calls = []
    general = _array._dispatch["ufunc"]
    monkeypatch.setitem(_array._dispatch, "ufunc",
                        lambda *args: calls.append(args[0]) or general(*args))
    x * y, x + 0.5, 0.5 - x, -x
    assert calls == []
    x * np.float32(2)  # NumPy scalars are strong: the general path
    assert calls == [np.multiply]


def test_other_operand_types_take_the_general_path():
    x = sample("float32")
    check(lambda a: a + np.arange(4.0), x)
    check(lambda a: np.arange(4.0) + a, x)
    check(lambda a: a * np.float64(1.5), x)  # strong NumPy scalar: float64
    check(lambda a: a * np.int64(3), sample("int8"))
    check(lambda a: a + [1, 2, 3, 4], x)

    class Color(enum.IntEnum):
        RED = 2

    check(lambda a: a * Color.RED, sample("int8"))


def test_array_ufunc_none_defers():
    """An operand that opts out of ufuncs still gets its reflected method called."""
    class Opaque:
        __array_ufunc__ = None

        def __radd__(self, other):
            return "radd"

        def __rmul__(self, other):
            return "rmul"

    x = lnp.asarray(sample("float32"))
    for _ in range(2):
        assert x + Opaque() == "radd"
        assert x * Opaque() == "rmul"


def test_subclass_keeps_its_array_ufunc():
    class Tagged(lnp.LazyArray):
        __slots__ = ()

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return ufunc.__name__

    t = Tagged(lnp.asarray(sample("float32"))._t)
    for _ in range(2):
        assert t * 2.0 == "multiply"
        assert 2.0 + t == "add"
        assert -t == "negative"


POWERS = [0, 1, 2, 3, -1, -2, 64, 65, 300, 0.5, -1.5, True]


def test_power_operator_plans():
    """``x ** n``: Python ints planned per (aval, n) as integer_pow, other exponents
    planned like any operator; NumPy's errors (int ** -1, int8 ** 300) every call and
    its ``bool ** 2`` (``np.square``: int8). Negative *array* exponents of ints raise in
    NumPy depending on the data, and complex overflow gives inf for NumPy's nan: not
    tested (differences of the general path)."""
    cases = []
    for dtype in ("bool", "int8", "uint8", "int64", "float16", "float32", "float64"):
        x = sample(dtype)
        e = np.abs(x) if dtype != "bool" else x  # int ** negative array: NumPy raises
        cases += [(x, n) for n in POWERS] + [(n, e) for n in (2, 0.5, -2.0)] + [(x, e)]
    check_many(twice(operator.pow), cases, rtol=1e-6)
    check_many(twice(lambda a, b: operator.ipow(a.copy(), b)),
               [(sample("float32"), 2), (sample("float64"), 0.5), (sample("int8"), 2.5)])


def test_complex_zero_base_to_a_positive_real_part_is_zero():
    """``0 ** z`` (complex) is 0 where ``Re z > 0`` in NumPy (and C's ``cpow``, PyTorch,
    TF); XLA's ``pow`` gave nan for a non-real ``z``. ``0 ** 0`` stays 1, ``Re z <= 0``
    nan, as in NumPy."""
    base = np.array([0j, 0j, 0j, 0j, 0j, 0j, 1 + 2j])
    exps = np.array([1 + 1j, 0.5 - 3j, 2, 0, 1j, -1 + 1j, 3 - 2j])
    check_many(operator.pow, [(base, exps), (base.astype(np.complex64), exps.astype(np.complex64)),
                              (base, 2.5 + 1j)])


def test_power_nodes_match_the_general_path():
    x, i = lnp.asarray(sample("float32")), lnp.asarray(sample("int8"))
    for _ in range(2):
        assert (x ** 2)._t.node.op == "integer_pow"
        assert (x ** 2)._t.node.hash == np.power(x, 2)._t.node.hash
        assert (i ** 3)._t.node.hash == np.power(i, 3)._t.node.hash
        assert (x ** -1.5)._t.node.hash == np.power(x, -1.5)._t.node.hash
        assert (2.0 ** x)._t.node.hash == np.power(2.0, x)._t.node.hash


UFUNC_CALLS = [np.sqrt, np.exp, np.negative, np.logical_not, np.isnan, np.maximum, np.add,
               np.arctan2, np.hypot, np.less, np.divmod, np.modf, np.matmul]


@pytest.mark.parametrize("ufunc", UFUNC_CALLS, ids=lambda u: u.__name__)
def test_ufunc_calls_replay_plans(ufunc):
    """``np.<ufunc>(x[, y])`` with no keywords replays a plan from its second call on:
    values, dtypes, errors as NumPy, interleaved signatures kept apart."""
    arrays = [sample(d) for d in ("int8", "float32", "float64", "bool")]
    if ufunc.nin == 1:
        cases = [(a,) for a in arrays]
    else:
        cases = [(a, s) for a in arrays for s in (0, 2, -1, 0.5, 300, True)]
        cases += [(s, a) for a in arrays for s in (0, 2.5)] + [(arrays[0], arrays[1])]
        cases += [(sample("float32", (4, 4)), sample("float32", (4, 4)))]
    check_many(twice(ufunc), cases, rtol=1e-6)


def test_ufunc_calls_with_keywords_stay_general():
    x = sample("float32")
    check(lambda a: np.add(a, 1, dtype=np.float64), x)
    check(lambda a: np.sqrt(a, where=a > 0, out=np.zeros_like(a)), np.abs(x))
    check(lambda a: np.add.reduce(a), x)
    check(lambda a: np.add(a, np.float32(2)), x)


def test_half_integer_powers_round_once():
    """float16 ** n computes in float32 and rounds once, as NumPy's half loops (repeated
    float16 multiplications are off by an ulp on most of these, more for large n)."""
    x = np.linspace(1, 4, 200).astype(np.float16)
    a = lnp.asarray(x)
    for n in (3, 5, 7, 2):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(a ** n), x ** n)
            np.testing.assert_array_equal(np.asarray(np.power(a, n)), np.power(x, n))
