"""``@tf.function`` over lazy values: never a stale value, one trace per signature.

The oracle is the same program with ``tf.Variable``/``tf.GradientTape``/``tf.constant``
under ``tf.function``.
"""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
from lazy_tf import _capture


@pytest.fixture(autouse=True, params=["capture", "graph"])
def mode(request, monkeypatch):
    """Every test runs with whole-function capture and with TensorFlow's graph path
    (what a signature that cannot be captured falls back to)."""
    monkeypatch.setattr(_capture, "ENABLED", [request.param == "capture"])
    return request.param


def _data(seed=0, n=8, d=3):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)).astype(np.float32),
            rng.standard_normal((n, 1)).astype(np.float32))


def test_closure_variable_read_at_call_time():
    w = ltf.Variable(2.0)

    @tf.function
    def f(x):
        return x * w

    x = ltf.constant(3.0)
    assert float(f(x)) == 6.0
    w.assign(5.0)
    assert float(f(x)) == 15.0
    w.assign_add(1.0)          # a lazy update between calls
    assert float(f(x)) == 18.0
    assert float(f(x)) == 18.0  # repeated call, same input
    assert f.experimental_get_tracing_count() == 1


def test_fresh_inputs_do_not_retrace():
    w = ltf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        return tf.reduce_sum(x * w + 1.0)

    for i in range(4):
        x = ltf.constant([float(i), 2.0 * i])
        assert float(f(x)) == pytest.approx(i + 4.0 * i + 2.0)
    assert f.experimental_get_tracing_count() == 1
    f(ltf.constant([[1.0, 2.0]]))  # a new shape is a new signature
    assert f.experimental_get_tracing_count() == 2


def _train(variable, tape, const, deco, steps=4):
    x, y = _data()
    w = variable(np.ones((3, 1), np.float32))
    b = variable(np.zeros((1,), np.float32))

    @deco
    def step(x, y):
        with tape() as t:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        dw, db = t.gradient(loss, [w, b])
        w.assign_sub(0.1 * dw)
        b.assign_sub(0.1 * db)
        return loss

    losses = [float(step(const(x), const(y))) for _ in range(steps)]
    return losses, w, b, step


def test_decorated_train_step_matches_eager():
    eager, we, be, _ = _train(tf.Variable, tf.GradientTape, tf.constant, tf.function)
    lazy, wl, bl, step = _train(ltf.Variable, ltf.GradientTape, ltf.constant, tf.function)
    # (captured, the step is one XLA program: fused arithmetic may differ in the last bit)
    np.testing.assert_allclose(lazy, eager, rtol=1e-5)
    assert len(set(lazy)) == len(lazy)  # the loss changes every step
    np.testing.assert_allclose(wl.numpy(), we.numpy(), rtol=1e-5)
    np.testing.assert_allclose(bl.numpy(), be.numpy(), rtol=1e-5)
    assert step.experimental_get_tracing_count() == 1


def test_function_and_lazy_steps_interleave():
    """The variable's value moves between its tf.function shadow and the lazy graph."""
    w = ltf.Variable([1.0, 2.0])
    ref = tf.Variable([1.0, 2.0])

    def make(v):
        @tf.function
        def double(s):
            v.assign(v * s)
            return tf.reduce_sum(v)
        return double

    f, g = make(w), make(ref)
    for k in range(3):
        np.testing.assert_allclose(f(ltf.constant(2.0)).numpy(), g(tf.constant(2.0)).numpy())
        w.assign_add([0.5, 0.5])       # lazy: reads the shadow's value first
        ref.assign_add([0.5, 0.5])
        lazy_sum = tf.reduce_sum(w * float(k))
        assert ltf.is_lazy(lazy_sum)
        np.testing.assert_allclose(lazy_sum.numpy(), tf.reduce_sum(ref * float(k)).numpy())
    np.testing.assert_allclose(w.numpy(), ref.numpy())


def test_symbolic_meets_lazy():
    def make(c, w):
        @tf.function
        def f(x):
            return tf.constant([1.0, 1.0]) + c * x + w[0] + tf.matmul(x[None], w[:, None])
        return f

    lazy = make(ltf.constant([1.0, 2.0]), ltf.Variable([3.0, 4.0]))
    eager = make(tf.constant([1.0, 2.0]), tf.Variable([3.0, 4.0]))
    x = tf.constant([2.0, 3.0])
    np.testing.assert_allclose(lazy(x).numpy(), eager(x).numpy())


def test_tape_watch_inside_function():
    @tf.function
    def grad(x):
        with ltf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.sin(x) * x)
        return t.gradient(y, x)

    x = np.array([0.5, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(grad(ltf.constant(x)).numpy(), np.sin(x) + x * np.cos(x),
                               rtol=1e-6)


def test_convert_and_constant_inside_function():
    w = ltf.Variable(2.0)

    @tf.function
    def f(x):
        x = ltf.convert_to_tensor(x)
        return x * w + ltf.constant(1.0)

    assert float(f(np.float32(3.0))) == 7.0
    w.assign(4.0)
    assert float(f(np.float32(3.0))) == 13.0


def test_variable_numpy_inside_function_raises_like_tf():
    w = ltf.Variable(2.0)

    @tf.function
    def f():
        return w.numpy()

    with pytest.raises(NotImplementedError):
        f()


def test_ltf_optimizer_inside_function_raises(mode):
    """Its slots and step count are not variables: the capture falls back (counted) to
    TensorFlow's graph path, which raises, and nothing of the failed capture remains."""
    w = ltf.Variable([1.0, -2.0])
    opt = ltf.optimizers.Adam(0.1)

    @tf.function
    def step():
        with ltf.GradientTape() as t:
            loss = tf.reduce_sum(w * w)
        opt.apply_gradients([(t.gradient(loss, w), w)])
        return loss

    before = ltf.metrics.counters().get("tf_function_fallback", 0)
    with pytest.raises(NotImplementedError, match="tf.function"):
        step()
    after = ltf.metrics.counters().get("tf_function_fallback", 0)
    assert after - before == (mode == "capture")
    assert float(tf.reduce_sum(w * 2.0)) == -2.0  # the variable is intact


def test_lazy_outputs_of_function_are_current():
    """Lazy-only arithmetic in the body (Python scalars, operators) is not baked."""
    w = ltf.Variable([1.0, 2.0])

    @tf.function
    def f():
        return w * 2.0 + 1.0

    np.testing.assert_allclose(f().numpy(), [3.0, 5.0])
    w.assign([5.0, 6.0])
    np.testing.assert_allclose(f().numpy(), [11.0, 13.0])


def test_spec_has_no_identity():
    a, b = ltf.constant([1.0, 2.0]), ltf.constant([3.0, 4.0])
    assert tf.type_spec_from_value(a) == tf.type_spec_from_value(b)
    flat = tf.nest.flatten(a, expand_composites=True)
    assert len(flat) == 1 and isinstance(flat[0], tf.Tensor)
    np.testing.assert_allclose(flat[0].numpy(), [1.0, 2.0])


def test_variable_argument_is_assignable_like_tf_variable(mode):
    def run(variable, const):
        @tf.function
        def step(v, x):
            v.assign_add(x)
            return v * 2.0

        a, b = variable([1.0, 2.0]), variable([5.0, 5.0])
        outs = [step(a, const([1.0, 1.0])), step(b, const([0.5, 0.5])),
                step(a, const([1.0, 0.0]))]
        return [o.numpy() for o in outs] + [a.numpy(), b.numpy()], \
            step.experimental_get_tracing_count()

    lazy, lazy_traces = run(ltf.Variable, ltf.constant)
    eager, eager_traces = run(tf.Variable, tf.constant)
    for x, y in zip(lazy, eager, strict=True):
        np.testing.assert_allclose(x, y)
    # captured, an ltf.Variable argument is part of the signature by identity (TF: by
    # spec): the second variable traces again, the third call does not
    assert lazy_traces == eager_traces + (mode == "capture")
