"""Every bug the differential fuzzers found, pinned (eager is the oracle)."""

import numpy as np
import pytest


def _same_outcome(eager, lazy, to_numpy=np.asarray):
    try:
        want = eager()
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            lazy()
        return
    got = lazy()
    np.testing.assert_allclose(to_numpy(got), np.asarray(want), rtol=1e-6)
    assert np.shape(to_numpy(got)) == np.shape(want)


def test_torch_cat_of_zero_d_raises_runtime_error():
    torch = pytest.importorskip("torch")
    lazy_torch = pytest.importorskip("lazy_torch")
    a = torch.tensor(1.5)
    _same_outcome(lambda: torch.cat([a, a], 0),
                  lambda: torch.cat([a.to(lazy_torch.device())] * 2, 0))


@pytest.mark.parametrize("call", [
    lambda tf, x: tf.reduce_sum(x, 0),
    lambda tf, x: tf.nn.softmax(x),
    lambda tf, x: tf.matmul(tf.abs(x), tf.abs(x)),  # one pending value synced twice
])
def test_tf_zero_d_and_twice_synced(call):
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    for value in (np.float32(2.0), np.ones((3, 4), np.float32)):
        _same_outcome(lambda v=value: call(tf, tf.constant(v)),
                      lambda v=value: call(tf, ltf.convert_to_tensor(v)),
                      lambda t: t.numpy())


@pytest.mark.parametrize("call", [
    lambda x: np.flip(x, 0),
    lambda x: np.cumsum(x, 0),
    lambda x: np.cumsum(x),
    lambda x: x[x > 0],
    lambda x: np.mean(x, -1),
    lambda x: np.argmax(x, -1),
])
def test_numpy_zero_d_rules(call):
    lnp = pytest.importorskip("lazy_numpy")
    _same_outcome(lambda: call(np.float64(2.0)), lambda: call(lnp.asarray(np.float64(2.0))))


def test_numpy_output_casting_is_checked_before_broadcasting():
    lnp = pytest.importorskip("lazy_numpy")

    def run(mod_asarray):
        a = mod_asarray(np.arange(3))
        a += mod_asarray(np.ones((3, 4)))
        return a

    _same_outcome(lambda: run(np.asarray), lambda: run(lnp.asarray))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64"])
@pytest.mark.parametrize("bounds", [(-1, 1), (-1, 300), (-(2 ** 70), 2), (300, 400), (None, -1),
                                    (2, 5)])
def test_numpy_clip_python_int_bounds_beyond_the_dtype(dtype, bounds):
    """NumPy 2 drops a Python-int bound beyond an integer array's range (and raises
    OverflowError for one on the wrong side); found by test_fuzz_extremes."""
    lnp = pytest.importorskip("lazy_numpy")
    x = np.array([0, 1, 2, 100, 127], dtype)
    _same_outcome(lambda: np.clip(x, *bounds), lambda: np.clip(lnp.asarray(x), *bounds))
    got, want = np.clip(lnp.asarray(x), -1, 1), np.clip(x, -1, 1)
    assert np.asarray(got).dtype == want.dtype
