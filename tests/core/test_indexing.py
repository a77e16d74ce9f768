"""NumPy indexing semantics of ``numeric.getitem`` / ``setitem`` against NumPy itself."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazycore as lc
from lazycore import numeric as nm

X = np.arange(60.0).reshape(3, 4, 5)
KEYS = [
    1, -1, (1, 2), (slice(None), 2), (Ellipsis, 1), (None, 1), (slice(1, None), None, slice(0, 4, 2)),
    (slice(None, None, -1),), (slice(3, 0, -2), slice(None), -1), (Ellipsis,), (),
    [0, 2], (slice(None), [3, 0, 3]), ([0, 2], [1, 3]), ([[0], [2]], [1, 3]),
    (slice(None), [0, 1], [2, 4]), ([0, 1], slice(None), [2, 4]), (1, slice(None), [0, 4]),
    (np.array([True, False, True]),), (slice(None), np.array([True, False, True, False])),
    (X[..., 0] > 20,), (X > 30,), (None, [1, 0], Ellipsis, None), (np.int64(2), slice(1, 3)),
    (np.array([-1, 0]), Ellipsis), (slice(None), None, [1, 2]), (True,), (False, 0),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_getitem_matches_numpy(key):
    got = lc.to_numpy(nm.getitem(lc.asarray(X), key))
    want = X[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_setitem_matches_numpy(key):
    want = X.copy()
    value = -np.arange(np.asarray(X[key]).size, dtype=np.float64).reshape(np.shape(X[key]))
    want[key] = value
    got = lc.to_numpy(nm.setitem(lc.asarray(X), key, lc.asarray(value)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("value", [2.0, -2.0])
def test_zero_d_mask_indexing(value):
    x = np.float64(value)
    got = nm.getitem(lc.asarray(x), nm.elementwise("gt", lc.asarray(x), 0.0))
    np.testing.assert_array_equal(lc.to_numpy(got), np.asarray(x)[np.asarray(x) > 0])


def test_setitem_broadcasts_scalar_and_accumulates():
    want = X.copy()
    want[:, 1] = 7
    np.testing.assert_array_equal(
        lc.to_numpy(nm.setitem(lc.asarray(X), (slice(None), 1), lc.scalar(7.0, np.float64))),
        want)
    acc = X.copy()
    np.add.at(acc, ([0, 0, 1],), 1.0)
    got = nm.setitem(lc.asarray(X), (np.array([0, 0, 1]),), lc.scalar(1.0, np.float64), mode="add")
    np.testing.assert_array_equal(lc.to_numpy(got), acc)


def test_lazy_integer_and_mask_indices():
    idx = lc.asarray(np.array([2, 0]))
    np.testing.assert_array_equal(lc.to_numpy(nm.getitem(lc.asarray(X), (slice(None), idx))),
                                  X[:, [2, 0]])
    mask = nm.elementwise("gt", lc.asarray(X), 40.0)
    got = nm.getitem(lc.asarray(X), mask)
    np.testing.assert_array_equal(lc.to_numpy(got), X[X > 40])
    assert lc.metrics.counters()["sync::data_dependent"] == 1


@pytest.mark.parametrize("key, exc", [
    (3, IndexError), ((0, 0, 0, 0), IndexError), ((slice(None), 9), IndexError),
    ([5], IndexError), (1.5, IndexError), ((Ellipsis, Ellipsis), IndexError),
    (np.array([1.0]), IndexError),
])
def test_bad_keys_raise_index_error(key, exc):
    with pytest.raises(exc):
        X[key]
    with pytest.raises(exc):
        nm.getitem(lc.asarray(X), key)


@given(st.data())
@settings(max_examples=40, deadline=None)
def test_random_basic_slices(data):
    key = tuple(
        data.draw(st.one_of(
            st.integers(-size, size - 1),
            st.builds(slice, st.none() | st.integers(-6, 6), st.none() | st.integers(-6, 6),
                      st.none() | st.sampled_from([1, 2, -1, -2, 3])))
        ) for size in X.shape[: data.draw(st.integers(0, 3))])
    want = X[key]
    got = lc.to_numpy(nm.getitem(lc.asarray(X), key))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_integer_index_is_a_parameter_unless_the_trace_bakes_scalars():
    """``x[i]`` reads at a program parameter (a per-sample loop is one program); while
    scalars are baked (a captured ``tf.function`` trace) it is a constant that XLA
    folds into a static slice."""
    from lazycore.lowering import linearize

    def params(key):
        out = nm.getitem(lc.asarray(X), key)
        got = [n for n in linearize([out.node]).inputs if n.op == "param"]
        np.testing.assert_array_equal(lc.to_numpy(out), X[key])
        return len(got)

    assert params((slice(None), 2)) == 1
    lc.configure(bake_scalars=True)
    try:
        assert params((slice(None), 2)) == 0
    finally:
        lc.configure(bake_scalars=False)
