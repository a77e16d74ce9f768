"""ltf.Variable, observation (each one syncs), fallback counting, dtype rules."""

import io
import sys

import numpy as np
import pytest
import tensorflow as tf
from tf_helpers import lazy

import lazy_tf as ltf
import lazycore as lc


def test_variable_interface():
    v = ltf.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.trainable and v.dtype == tf.float32 and v.shape == (2,)
    v.assign([3.0, 4.0])
    v.assign_add(tf.constant([1.0, 1.0]))
    v.assign_sub(ltf.convert_to_tensor([0.5, 0.5]))
    assert v.is_pending  # recorded, not computed
    r = v.read_value()
    v.assign([0.0, 0.0])
    np.testing.assert_array_equal(r.numpy(), [3.5, 4.5])  # a snapshot
    np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
    assert ltf.Variable(np.int32(3), trainable=False).dtype == tf.int32


def test_variable_in_tf_apis_reads_current_value():
    v = ltf.Variable(tf.ones([2, 2]))
    y = tf.matmul(v, v)
    v.assign(tf.zeros([2, 2]))
    np.testing.assert_array_equal(y.numpy(), 2 * np.ones((2, 2)))
    np.testing.assert_array_equal((v + 1.0).numpy(), np.ones((2, 2)))


def test_ops_record_until_observed(metrics):
    x = lazy(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = tf.reduce_sum(tf.exp(x) * 2.0, axis=1)
    assert y.is_pending and lc.metrics.counters()["executions"] == 0
    assert y.shape == (2,) and y.dtype == tf.float32  # static info without a sync
    ltf.sync()
    assert not y.is_pending and lc.metrics.counters()["executions"] == 1


@pytest.mark.parametrize("observe", [
    lambda t: t.numpy(), lambda t: np.asarray(t), lambda t: tf.constant(t),
    lambda t: float(t), lambda t: int(t), lambda t: bool(t), lambda t: str(t),
    lambda t: repr(t), lambda t: tf.print(t, output_stream=sys.stdout),
], ids=["numpy", "asarray", "constant", "float", "int", "bool", "str", "repr",
        "tf.print"])
def test_observation_syncs(observe, metrics):
    t = tf.reduce_sum(lazy(np.array([1.5, 2.5], np.float32)) * 2.0)
    assert t.is_pending
    observe(t)
    assert lc.metrics.counters()["executions"] == 1
    assert ltf.fallback_counts() == {}


def test_observed_values():
    t = tf.reduce_sum(lazy(np.array([1.5, 2.5], np.float32)))
    assert float(t) == 4.0 and int(t) == 4 and bool(t)
    e = tf.constant(t)
    assert isinstance(e, tf.Tensor) and e.dtype == tf.float32 and float(e) == 4.0
    assert isinstance(t.numpy(), np.float32)
    assert str(t) == str(tf.constant(4.0))
    out = io.StringIO()
    sys_stdout = sys.stdout
    try:
        sys.stdout = out
        print(t)
    finally:
        sys.stdout = sys_stdout
    assert "4.0" in out.getvalue()
    assert [float(v) for v in lazy(np.array([1.0, 2.0], np.float32))] == [1.0, 2.0]
    assert len(lazy(np.zeros((3, 2), np.float32))) == 3


def test_fallback_runs_eagerly_counted_by_name(metrics):
    x = lazy(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    y = tf.signal.fft2d(tf.cast(x, tf.complex64))   # no lazy handler
    assert ltf.is_lazy(y)
    np.testing.assert_allclose(y.numpy(), np.fft.fft2(x.numpy().astype(np.complex64)), rtol=1e-6)
    assert ltf.fallback_counts() == {"signal.fft2d": 1}
    assert lc.metrics.counters()["fallback::signal.fft2d"] == 1
    z = tf.math.segment_sum(x, [0, 0])
    assert ltf.fallback_counts()["math.segment_sum"] == 1
    np.testing.assert_allclose(z.numpy(), [[4.0, 6.0]])


def test_dtype_rules():
    f, i = lazy(np.float32([1.0])), lazy(np.int32([2]))
    assert (f + 1).dtype == tf.float32 and (i + 1).dtype == tf.int32
    assert (f * 2.5).dtype == tf.float32
    assert ltf.convert_to_tensor(1.0).dtype == tf.float32
    assert ltf.convert_to_tensor(1).dtype == tf.int32
    assert (i / i).dtype == tf.float64  # TF's truediv table
    with pytest.raises(tf.errors.InvalidArgumentError):
        f + lazy(np.float64([1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        i + 1.5
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.add(f, i)


def test_random_is_seeded_and_lazy(metrics):
    # (threefry programs take seconds to compile on CPU: keep the number of graphs small)
    ltf.random.set_seed(7)
    a = ltf.random.normal([1000], mean=1.0, stddev=2.0)
    a_host = a.numpy()
    ltf.random.set_seed(7)
    np.testing.assert_array_equal(ltf.random.normal([1000], mean=1.0, stddev=2.0).numpy(), a_host)
    assert lc.metrics.counters()["cache_hits"] == 1  # same program, new seed/counter params
    b = ltf.random.uniform([1000], minval=-1.0, maxval=3.0, seed=3)
    t = ltf.random.truncated_normal([1000])
    k = ltf.random.uniform([100], maxval=5, dtype=tf.int32)
    assert all(ltf.is_lazy(v) for v in (a, b, t, k))
    ltf.sync()
    assert abs(a_host.mean() - 1.0) < 0.2 and abs(a_host.std() - 2.0) < 0.2
    assert -1.0 <= b.numpy().min() and b.numpy().max() <= 3.0 and b.numpy().std() > 0.5
    assert np.abs(t.numpy()).max() <= 2.0 and 0.6 < t.numpy().std() < 1.0
    assert set(np.unique(k.numpy())) <= set(range(5))
    s = tf.random.shuffle(lazy(np.arange(10, dtype=np.int32)), seed=1)
    assert ltf.is_lazy(s) and sorted(s.numpy().tolist()) == list(range(10))


def test_dropout():
    ltf.random.set_seed(0)
    x = lazy(np.ones((100, 100), np.float32))
    y = tf.nn.dropout(x, rate=0.25, seed=1).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert ltf.fallback_counts() == {}


def test_non_dispatchable_api_converts_through_tf_tensor(metrics):
    x = lazy(np.ones((2, 3), np.float32))
    y = tf.signal.rfft2d(x * 2.0)  # not dispatchable, not wrapped: __tf_tensor__ syncs x * 2
    assert isinstance(y, tf.Tensor)
    np.testing.assert_allclose(y.numpy(), np.fft.rfft2(2 * np.ones((2, 3))), rtol=1e-6)
    assert ltf.fallback_counts() == {"_rfft": 1}  # TF's function that converted it


def test_fallback_with_non_numeric_result_stays_eager():
    s = tf.strings.as_string(lazy(np.array([1, 2], np.int32)))
    assert isinstance(s, tf.Tensor) and s.dtype == tf.string
    assert s.numpy().tolist() == [b"1", b"2"]


def test_pure_eager_tf_is_untouched(metrics):
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    outs = [tf.add([1, 2], [3, 4]), tf.concat([t, t], 0), tf.matmul(t, t), tf.exp(t), t + 1,
            tf.reduce_sum(t), tf.nn.softmax(t), tf.signal.fft(tf.cast(t, tf.complex64))]
    assert all(type(o).__name__ == "EagerTensor" for o in outs)
    assert lc.metrics.counters()["traced_ops"] == 0 and ltf.fallback_counts() == {}


def test_recompile_reasons_name_the_user_line(metrics):
    for n in (2, 3):
        y = tf.reduce_sum(tf.exp(lazy(np.ones(n, np.float32))))
        ltf.sync()  # the same user line compiles twice (the input shape changed)
    assert y.numpy() > 0
    site, reason = lc.metrics.recompile_reasons()[-1]
    assert site.startswith(__file__) and "shape" in reason


def test_convert_to_tensor_returns_the_lazy_tensor(metrics):
    """As TF returns a tensor unchanged: no sync, no eager copy; dtype rules as TF's."""
    t = tf.reduce_sum(lazy(np.array([1.5, 2.5], np.float32)))
    assert tf.convert_to_tensor(t) is t and tf.convert_to_tensor(t, dtype_hint=tf.int32) is t
    assert lc.metrics.counters().get("executions", 0) == 0
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor(t, dtype=tf.int32)
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor(tf.constant(4.0), dtype=tf.int32)  # TF's own error, same type


def test_variable_repr_inside_a_tf_function_trace():
    """A warning that prints a variable during TF's graph trace (AutoGraph's do) gets TF's
    graph-mode repr, without a value: reading it there raised."""
    v = ltf.Variable([1.0, 2.0], name="w")
    seen = []

    @tf.function
    def f(x):  # a tf.Tensor argument: TF's own graph path
        seen.append(repr(v))
        return x * v

    np.testing.assert_allclose(np.asarray(f(tf.constant([3.0, 4.0]))), [3.0, 8.0])
    assert seen == ["<ltf.Variable 'w:0' shape=(2,) dtype=float32>"]
    assert repr(v).endswith("numpy=array([1., 2.], dtype=float32)>")
