"""Idioms of published NumPy programs (classifiers counting labels, masks written as
Python lists, printed lists of scalars), lazily against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import lazy_numpy as lnp


def test_scalars_from_iteration_and_reductions_are_dict_keys():
    """``for label in y: counts[label] += 1`` and ``dict(zip(*np.unique(..., return_counts=
    True)))``: the 0-d values stand for NumPy scalars, which are hashable."""
    y = np.array([3, 1, 2, 3, 1, 3])

    def program(y):
        counts = {}
        for label in y:
            counts[label] = counts.get(label, 0) + 1
        table = dict(zip(*np.unique(y, return_counts=True), strict=True))
        return counts, table, {y.max(), y.min(), y[0]}

    for got, want in zip(program(lnp.asarray(y)), program(y), strict=True):
        assert got == want and repr(sorted(got)) == repr(sorted(want))
    with pytest.raises(TypeError, match="unhashable"):
        hash(lnp.asarray(y))
    assert hash(lnp.asarray(np.float64(0.5))) == hash(np.float64(0.5))


def test_printed_scalars_read_as_numpys():
    x = np.array([0.5, 1.5, 2.0])
    lx = lnp.asarray(x)
    assert repr([lx.sum(), lx.argmax(), lx[0] > 1]) == repr([x.sum(), x.argmax(), x[0] > 1])


@pytest.mark.parametrize("key", [[True, False, True], [True, False], [[True, False, True]],
                                 ([True, False, True], 1), [1, True], [], [2, 0, 2]])
def test_python_list_keys_read_and_write_as_numpy(key):
    """A list of Python bools is a mask (NumPy makes an array of it), not indices 1 and 0;
    a wrong length is NumPy's IndexError, not a silent gather of rows 1 and 0."""
    def outcome(a):
        try:
            read = np.asarray(a[key]).copy()
            a[key] = -1
            return read, np.asarray(a)
        except IndexError as e:
            return type(e)

    x = np.arange(6.0).reshape(3, 2)
    got, want = outcome(lnp.asarray(x)), outcome(x.copy())
    if isinstance(want, type):
        assert got is want
    else:
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.shape == w.shape


@pytest.mark.parametrize("convert", [int, float, complex, lambda v: [0, 1, 2][v],
                                     lambda v: range(v)])
def test_scalar_conversions_of_arrays_are_numpys(convert):
    """NumPy 2.4: only a 0-d array converts to a Python scalar or an index; an array of
    one element with ndim > 0 raises TypeError (it converted silently)."""
    for x in (np.array([[1]]), np.array([1]), np.array(1)):
        try:
            want = convert(x)
        except TypeError:
            with pytest.raises(TypeError):
                convert(lnp.asarray(x))
        else:
            assert convert(lnp.asarray(x)) == want


@pytest.mark.parametrize("dtype", [str, "U2", "S3", object, "datetime64[s]"])
def test_astype_to_non_numeric_dtypes_gives_numpys_array(dtype):
    """``labels.astype(str)``: NumPy's host array (counted as a fallback), not a TypeError."""
    x = np.array([0.0, 1.5, 2.0])
    got, want = lnp.asarray(x).astype(dtype), x.astype(dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_float_to_narrow_integer_casts_wrap_as_numpys():
    """``(img * 1.5).astype(np.uint8)`` without a clip: NumPy's C cast wraps (300.0 -> 44,
    -5.0 -> 251); XLA's convert saturates (255, 0). The same through setitem and ``out=``."""
    v = np.array([-200.0, -129.0, -5.0, -1.5, -0.7, 0.7, 127.9, 128.5, 255.5, 256.0, 300.0,
                  32768.0, 65541.0, 70000.0, 2.0**31 - 1])
    for src in (np.float64, np.float32):
        x = v.astype(src)
        for dt in (np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.int64):
            np.testing.assert_array_equal(lnp.asarray(x).astype(dt), x.astype(dt))
    img = np.arange(0, 250, 25, dtype=np.uint8)
    want, got = img.copy(), lnp.asarray(img)
    want[:] = img * 1.5
    got[:] = got * 1.5
    np.testing.assert_array_equal(got, want)
    np.multiply(img, 1.7, out=want, casting="unsafe")
    np.multiply(lnp.asarray(img), 1.7, out=got, casting="unsafe")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("casting", ["unsafe", "same_kind", "safe", "equiv", "no"])
def test_ufunc_out_follows_the_casting_rule(casting):
    """``np.multiply(x, 2, out=u8, casting="unsafe")`` is allowed (it raised, checked
    under same_kind whatever the rule); the other rules refuse what NumPy refuses."""
    for x, o in ((np.arange(3.0), np.zeros(3, np.uint8)), (np.arange(3), np.zeros(3)),
                 (np.arange(3.0), np.zeros(3, np.float32)), (np.arange(3.0), np.zeros(3))):
        def outcome(x, out):
            try:
                np.multiply(x, np.int64(2), out=out, casting=casting)
                return np.asarray(out).tolist()
            except TypeError:
                return TypeError

        assert outcome(lnp.asarray(x), lnp.asarray(o)) == outcome(x, o.copy())


HOST_DTYPE_CREATIONS = [
    lambda m: m.array(["cat", "dog"]), lambda m: m.asarray([1, "a"]),
    lambda m: m.array([[1, 2], [3]], dtype=object), lambda m: m.array([None, 1]),
    lambda m: m.zeros(3, dtype=object), lambda m: m.zeros(2, dtype="U5"),
    lambda m: m.empty(2, dtype="U5"), lambda m: m.ones(2, dtype="S2"),
    lambda m: m.full(2, "x"), lambda m: m.array(["2020-01-01"], dtype="datetime64[D]"),
    lambda m: m.array([1, 2], dtype=np.longdouble), lambda m: m.asanyarray([b"ab"]),
    lambda m: m.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),
    lambda m: m.zeros_like(m.arange(2), dtype=object), lambda m: m.full_like(m.arange(2), "ab", dtype="U2"),
]


@pytest.mark.parametrize("create", HOST_DTYPE_CREATIONS)
def test_creating_arrays_no_lazy_array_holds_gives_numpys(create):
    """A program run lazily that makes string labels or an object array (``np.array(['cat',
    'dog'])``, ``np.zeros(n, dtype=object)``) gets NumPy's own array, not a TypeError."""
    got, want = create(lnp), create(np)
    assert isinstance(got, np.ndarray) and (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def test_host_dtype_array_is_a_copy():
    labels = np.array(["a", "b"])
    got = lnp.array(labels)
    got[0] = "z"
    assert labels[0] == "a"


def test_functions_of_lazy_arrays_with_host_dtype_results_give_numpys():
    """``np.where(pred > 0.5, 'yes', 'no')`` on a lazy prediction, a date range: NumPy's
    string/date arrays (a counted fallback), not TypeError."""
    p = np.array([0.2, 0.7, 0.9])
    for fn in (lambda x: np.where(x > 0.5, "yes", "no"),
               lambda x: np.select([x > 0.8, x > 0.5], ["high", "mid"], "low")):
        got, want = fn(lnp.asarray(p)), fn(p)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    start, stop = np.datetime64("2020-01-01"), np.datetime64("2020-01-06")
    np.testing.assert_array_equal(lnp.arange(start, stop, 2), np.arange(start, stop, 2))


def test_import_lazy_numpy_as_np_runs_a_whole_program():
    """``import lazy_numpy as np`` in place of NumPy: creation and ``np.random`` are lazy
    (NumPy's draws), everything else is NumPy's own module attribute, dispatching here."""
    import lazy_numpy

    def program(np):
        np.random.seed(0)
        x = np.random.randn(20, 3).astype(np.float32)
        w = np.zeros(3, dtype=np.float32)
        for _ in range(3):
            w -= 0.1 * np.mean(x * (x @ w - 1.0)[:, np.newaxis], axis=0)
        return w, np.linalg.norm(x, axis=1), np.sum(x > 0), np.pi * np.ones(2)

    for got, want in zip(program(lazy_numpy), program(np), strict=True):
        assert isinstance(got, lnp.LazyArray) and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert lazy_numpy.random.__name__ == "lazy_numpy.random"


def test_partition_put_choose_methods():
    """``a.argpartition(k)[:k]`` (top-k), ``a.partition(k)`` in place (through a view too),
    ``a.put``, ``a.choose``: ndarray methods a program calls on its arrays."""
    def program(w):
        a = w(np.array([5, 1, 4, 2, 3]))
        smallest = np.sort(a[a.argpartition(2)[:2]])
        v = w(np.array([5, 1, 4, 2, 3]))
        v[::2].partition(1)
        c = w(np.zeros(4))
        c.put([0, 3], [7, 8])
        return smallest, v, c, w(np.array([0, 1, 1])).choose([w(np.arange(3)), w(np.arange(3) * 10)])

    for got, want in zip(program(lnp.asarray), program(np.asarray), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
