"""Whole-function capture of ``tf.function`` on lazy values (``lazy_tf._capture``).

The oracle is the same program on ``tf.Variable``/``tf.GradientTape``/``tf.constant``
under ``tf.function``: values, gradients and variable updates over several calls, how
often the Python body runs (TF's retracing rules), fallbacks, fresh random draws and
exception types.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf
from lazy_tf import _capture


def _count(name: str) -> int:
    return ltf.metrics.counters().get(name, 0)


def _mlp_step(variable, tape_cls, const):
    """A two-layer regression step with momentum, as users write it under tf.function."""
    rng = np.random.default_rng(1)
    w1 = variable(rng.standard_normal((4, 8)).astype(np.float32) * 0.5)
    w2 = variable(rng.standard_normal((8, 1)).astype(np.float32) * 0.5)
    mom = [variable(np.zeros((4, 8), np.float32)), variable(np.zeros((8, 1), np.float32))]
    traces = []

    @tf.function
    def step(x, y, lr):
        traces.append(1)  # a Python side effect: runs when the body is traced
        with tape_cls() as tape:
            h = tf.nn.relu(tf.matmul(x, w1))
            loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - y))
        grads = tape.gradient(loss, [w1, w2])
        for w, m, g in zip([w1, w2], mom, grads, strict=True):
            m.assign(0.9 * m + g)
            w.assign_sub(lr * m)
        return {"loss": loss, "gnorm": tf.linalg.global_norm(grads)}

    data = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)
    x, y = const(data[:, :4]), const(data[:, 4:])
    outs = [step(x, y, 0.1) for _ in range(4)]
    outs.append(step(x, y, 0.05))            # a new Python value: traced again
    outs.append(step(x[:3], y[:3], 0.05))    # a new shape: traced again
    outs.append(step(x, y, 0.05))            # seen before: not traced
    values = [(float(o["loss"]), float(o["gnorm"])) for o in outs]
    return values, [w1.numpy(), w2.numpy(), mom[0].numpy()], len(traces), step


def test_train_step_matches_tf_function_over_steps():
    eager, ew, e_traces, _ = _mlp_step(tf.Variable, tf.GradientTape, tf.constant)
    calls = _count("tf_function_call")
    lazy, lw, l_traces, step = _mlp_step(ltf.Variable, ltf.GradientTape, ltf.constant)
    np.testing.assert_allclose(lazy, eager, rtol=1e-5)
    for a, b in zip(lw, ew, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # TF's own count reads process state: after a lazy Keras fit in the same process its
    # function traced this body a 4th time (with xdist, files share a worker in any order)
    assert l_traces == 3 and e_traces >= 3
    assert _capture.captures(step) == 3
    assert _count("tf_function_call") - calls == 7   # every call captured, none fell back


def test_one_node_per_call_and_no_recompile():
    w = ltf.Variable(np.ones((3, 3), np.float32))

    @tf.function
    def step(x):
        w.assign(tf.tanh(tf.matmul(w, x)) + 0.5 * w)
        return tf.reduce_sum(w)

    x = ltf.constant(np.eye(3, dtype=np.float32) * 0.5)
    float(step(x))
    float(step(x))
    ltf.metrics.reset()
    for _ in range(3):
        float(step(x))
    c = ltf.metrics.counters()
    assert c.get("compiles", 0) == 0
    assert c["traced_ops"] <= 3 * 2  # the call node (and reading the loss): no per-op cost


def test_closure_only_function_with_eager_inputs_follows_variables():
    """No lazy argument: the body reads an ltf.Variable, so it is captured too; eager
    inputs are inputs of the program, never constants of the first call."""
    w = ltf.Variable(2.0)

    @tf.function
    def f(x):
        return x * w + 1.0

    assert float(f(tf.constant(3.0))) == 7.0
    w.assign(5.0)
    assert float(f(tf.constant(3.0))) == 16.0
    assert float(f(tf.constant(4.0))) == 21.0
    assert float(f(np.float32(1.0))) == 6.0
    assert f.experimental_get_tracing_count() == 2  # tensor, then NumPy scalar


def test_pure_tensorflow_function_is_untouched():
    ltf.Variable(1.0)  # lazy state exists, but this function never reads it

    @tf.function
    def f(x):
        return x * 2.0

    out = f(tf.constant([1.0, 2.0]))
    assert isinstance(out, tf.Tensor) and not isinstance(out, ltf.Tensor)
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(f(tf.constant([3.0, 4.0])).numpy(), [6.0, 8.0])


def test_data_dependent_branch_falls_back_and_stays_correct():
    w = ltf.Variable(1.0)

    def run(variable, const):
        v = variable(1.0)

        @tf.function
        def f(x):
            if x > 0:           # Python control flow on a tensor
                v.assign_add(x)
            else:
                v.assign_sub(1.0)
            return v * 1.0

        return [float(f(const(s))) for s in (2.0, -1.0, 3.0)], v.numpy()

    before = _count("tf_function_fallback")
    lazy = run(ltf.Variable, ltf.constant)
    assert _count("tf_function_fallback") - before >= 1
    assert lazy == run(tf.Variable, tf.constant)
    assert float(w) == 1.0  # untouched by the failed capture


def test_tf_variable_read_falls_back():
    """A tf.Variable's value would be a constant of the capture: TF's path runs it."""
    lazy_w, tf_w = ltf.Variable(2.0), tf.Variable(3.0)

    @tf.function
    def f(x):
        return x * lazy_w * tf_w

    x = ltf.constant(1.0)
    assert float(f(x)) == 6.0
    tf_w.assign(10.0)
    lazy_w.assign(4.0)
    assert float(f(x)) == 40.0
    assert _capture.captures(f) == 0


def test_tf_variable_writes_happen_once():
    """A body mixing a tf.Variable update with lazy work falls back before TensorFlow
    runs the update: the counter counts each call once, as under TF."""
    def run(variable, const):
        counter, w = tf.Variable(0), variable(1.0)

        @tf.function
        def f(x):
            counter.assign_add(1)
            w.assign_add(x)
            return w * 1.0

        outs = [float(f(const(2.0))) for _ in range(3)]
        return outs, int(counter.numpy()), float(w.numpy())

    assert run(ltf.Variable, ltf.constant) == run(tf.Variable, tf.constant) == \
        ([3.0, 5.0, 7.0], 3, 7.0)


def test_outer_tape_differentiates_through_the_call():
    def run(variable, tape_cls, const):
        w = variable([1.0, 2.0])

        @tf.function
        def f(x):
            return tf.reduce_sum(tf.sin(x * w))

        x = const([0.5, -0.3])
        grads = []
        for _ in range(2):
            with tape_cls() as tape:
                tape.watch(x)
                y = f(x) * 3.0
            gx, gw = tape.gradient(y, [x, w])
            grads.append((gx.numpy(), gw.numpy()))
            w.assign_add([0.1, 0.1])
        return grads

    for (lx, lw), (ex, ew) in zip(run(ltf.Variable, ltf.GradientTape, ltf.constant),
                                  run(tf.Variable, tf.GradientTape, tf.constant), strict=True):
        np.testing.assert_allclose(lx, ex, rtol=1e-6)
        np.testing.assert_allclose(lw, ew, rtol=1e-6)


def test_random_draws_are_fresh_every_call():
    ltf.random.set_seed(3)

    @tf.function
    def f(x, ones):
        noise = ltf.random.normal([4]) + ltf.random.uniform([4], seed=7)
        return x + noise, tf.nn.dropout(ones, 0.5)

    x = ltf.constant(np.zeros(4, np.float32))
    ones = ltf.constant(np.ones(64, np.float32))
    first = [(a.numpy(), b.numpy()) for a, b in (f(x, ones) for _ in range(3))]
    assert _capture.captures(f) == 1
    for i in range(3):
        for j in range(i):
            assert not np.allclose(first[i][0], first[j][0])
            assert not np.array_equal(first[i][1], first[j][1])
    ltf.random.set_seed(3)  # restarts the streams, as for lazy draws outside
    again = [a.numpy() for a, _ in (f(x, ones) for _ in range(3))]
    for a, (b, _) in zip(again, first, strict=True):
        np.testing.assert_array_equal(a, b)
    ltf.random.set_seed(3)  # the same draws as the body run lazily without tf.function
    plain = [(a.numpy(), b.numpy()) for a, b in (f.python_function(x, ones) for _ in range(3))]
    for (a, m), (b, n) in zip(plain, first, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(m, n)


def test_eager_tensorflow_random_in_body_falls_back():
    """``tf.random.normal`` on no lazy input runs eagerly while tracing: a stateful op
    (TF's op callback sees it), so the signature takes TF's path, fresh each call."""
    w = ltf.Variable(np.zeros(4, np.float32))

    @tf.function
    def f():
        w.assign(tf.random.normal([4]))
        return w * 1.0

    draws = [f().numpy() for _ in range(3)]
    assert _capture.captures(f) == 0
    assert not np.allclose(draws[0], draws[1]) and not np.allclose(draws[1], draws[2])
    np.testing.assert_array_equal(w.numpy(), draws[-1])


def test_side_effects_run_at_trace_only():
    log = []
    w = ltf.Variable(0.0)

    @tf.function
    def f(x):
        log.append("traced")
        w.assign_add(x)
        return w * 1.0

    for i in range(4):
        f(ltf.constant(float(i)))
    assert log == ["traced"]
    assert float(w) == 6.0


def test_exceptions_match_tf_function():
    def run(variable, const):
        w = variable([1.0, 2.0])

        @tf.function
        def f(x, check):
            if check:
                raise ValueError("bad input")
            return tf.matmul(x, w)

        errors = []
        for args in ((const([1.0, 2.0]), True), (const([1.0, 2.0]), False)):
            with pytest.raises(Exception) as info:
                f(*args)
            errors.append(type(info.value))
        return errors

    lazy, eager = run(ltf.Variable, ltf.constant), run(tf.Variable, tf.constant)
    assert lazy[0] is eager[0] is ValueError
    assert issubclass(lazy[1], ValueError | tf.errors.InvalidArgumentError)


def test_structures_python_values_and_inputs_returned():
    w = ltf.Variable([1.0, 1.0])

    @tf.function
    def f(inputs, scale=2.0):
        a, b = inputs["a"], inputs["b"]
        w.assign(w * scale)
        return a, (a + b, "tag", w), {"n": 3}

    a, b = ltf.constant([1.0, 2.0]), ltf.constant([3.0, 4.0])
    out_a, (s, tag, wv), extra = f({"a": a, "b": b})
    np.testing.assert_allclose(out_a.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(s.numpy(), [4.0, 6.0])
    assert tag == "tag" and extra == {"n": 3} and wv is w
    np.testing.assert_allclose(w.numpy(), [2.0, 2.0])
    f({"a": a, "b": b}, scale=3.0)
    np.testing.assert_allclose(w.numpy(), [6.0, 6.0])
    assert f.experimental_get_tracing_count() == 2


def test_nested_tf_function_is_inlined():
    w = ltf.Variable(3.0)

    @tf.function
    def inner(x):
        return x * w

    @tf.function
    def outer(x):
        w.assign_add(1.0)
        return inner(x) + inner(2.0 * x)

    x = ltf.constant(1.0)
    assert float(outer(x)) == 12.0
    assert float(outer(x)) == 15.0
    assert _capture.captures(inner) == 0 and _capture.captures(outer) == 1


def _keras_step(lazy: bool, steps: int = 4):
    (ltf.keras.enable if lazy else ltf.keras.disable)()
    try:
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                                  keras.layers.BatchNormalization(),
                                  keras.layers.Dense(3)])
        opt = keras.optimizers.Adam(1e-2)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        tape_cls = ltf.GradientTape if lazy else tf.GradientTape
        conv = ltf.convert_to_tensor if lazy else tf.constant

        @tf.function
        def step(x, y):
            with tape_cls() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return loss

        rng = np.random.default_rng(0)
        x = conv(rng.standard_normal((8, 6)).astype(np.float32))
        y = conv(rng.integers(0, 3, 8).astype(np.int32))
        losses = [float(step(x, y)) for _ in range(steps)]
        return losses, [np.asarray(v.numpy()) for v in model.variables], step
    finally:
        ltf.keras.disable()


def test_keras_step_under_tf_function_matches_eager_keras():
    """Keras layers, BatchNormalization's moving statistics and Adam's slots (made at
    the first apply_gradients, inside the trace) are variables the capture writes back."""
    eager, ew, _ = _keras_step(lazy=False)
    lazy, lw, step = _keras_step(lazy=True)
    np.testing.assert_allclose(lazy, eager, rtol=1e-5)
    for a, b in zip(lw, ew, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert _capture.captures(step) == 1


def test_slice_bound_from_tf_shape_inside_a_captured_function():
    """The TF Transformer tutorial's positional embedding: ``pe[tf.newaxis, :length, :]``
    with ``length = tf.shape(x)[1]``, after an embedding lookup (a gather whose bounds
    check is pending while the function is captured). Reading the bound computes it
    alone; the function is captured, not run on TensorFlow's graph."""
    rng = np.random.default_rng(0)
    pe = tf.constant(rng.standard_normal((16, 4)).astype(np.float32))
    table = rng.standard_normal((10, 4)).astype(np.float32)
    ids = np.array([[1, 2, 3], [4, 5, 9]])

    def run(variable, const):
        emb = variable(table)

        @tf.function
        def f(x):
            h = tf.gather(emb, x)
            length = tf.shape(x)[1]
            return h + pe[tf.newaxis, :length, :]
        return [np.asarray(f(const(ids))) for _ in range(2)]

    eager = run(tf.Variable, tf.constant)
    fallbacks = _count("tf_function_fallback")
    lazy = run(ltf.Variable, ltf.constant)
    assert _count("tf_function_fallback") == fallbacks
    for a, b in zip(lazy, eager, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
