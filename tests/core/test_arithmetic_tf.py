"""Core additions made for lazy_tf: floor division/modulo composites, stop_gradient."""

import numpy as np
import pytest

import lazycore as lc


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.float64])
def test_floor_divide_and_mod_match_numpy(dtype):
    a = np.array([7, -7, 7, -7, 0, 5], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 5], dtype=np.int64)
    if np.dtype(dtype).kind == "u":
        a, b = np.abs(a), np.abs(b)
    a, b = a.astype(dtype), b.astype(dtype)
    if np.dtype(dtype).kind == "f":
        a = a + np.array(0.5, dtype)
    x, y = lc.asarray(a), lc.asarray(b)
    np.testing.assert_array_equal(lc.to_numpy(lc.numeric.floor_divide(x, y)), np.floor_divide(a, b))
    np.testing.assert_allclose(lc.to_numpy(lc.numeric.floor_mod(x, y)), np.mod(a, b), rtol=1e-6)


def test_stop_gradient_is_identity_with_zero_derivative():
    x = lc.asarray(np.array([1.0, 2.0], np.float32))
    y = lc.ops.mul(x, lc.ops.stop_gradient(x))
    np.testing.assert_array_equal(lc.to_numpy(lc.ops.stop_gradient(x)), [1.0, 2.0])
    (g,) = lc.grad([lc.numeric.sum(y)], [x])
    np.testing.assert_array_equal(lc.to_numpy(g), [1.0, 2.0])  # d(x*c)/dx = c, not 2x


def test_grad_constants_stop_gradients_at_given_values():
    x = lc.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    y = lc.ops.mul(x, x)                  # y = x^2, declared constant below
    z = lc.numeric.sum(lc.ops.mul(y, x))  # z = y * x
    (free,) = lc.grad([z], [x])
    (cut,) = lc.grad([z], [x], constants=[y])
    np.testing.assert_allclose(lc.to_numpy(free), 3 * np.array([1.0, 4.0, 9.0]))
    np.testing.assert_allclose(lc.to_numpy(cut), [1.0, 4.0, 9.0])  # dz/dx with y fixed
    (only_const,) = lc.grad([lc.numeric.sum(y)], [x], constants=[y])
    assert only_const is None
