"""``ltf.GradientTape``'s sparse gradients against eager TF: which gradients are
``tf.IndexedSlices`` (type, indices and their dtype, dense_shape, values), their lazy
densification and the TF functions taking them, and ``ltf.Variable``'s scatter updates."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf

W = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
IDS = np.array([[1, 1], [3, 0]], np.int32)


def _cases(w, c):
    """Losses built from ``w``; ``c`` makes an index tensor (eager or lazy)."""
    ids = c(IDS)
    return {
        "gather": lambda: tf.reduce_sum(tf.gather(w, ids) * 2.0),
        "embedding_lookup": lambda: tf.reduce_sum(tf.nn.embedding_lookup(w, c([2, 1])) ** 2),
        "two_gathers": lambda: (tf.reduce_sum(tf.gather(w, ids) * 2.0)
                                + tf.reduce_sum(tf.nn.embedding_lookup(w, c([2, 1])) ** 2)),
        "gather_and_dense_use": lambda: tf.reduce_sum(tf.gather(w, ids)) + tf.reduce_sum(w * w),
        "gather_nd_one_column": lambda: tf.reduce_sum(tf.gather_nd(w, c(np.array([[1], [2]])))),
        "gather_nd_points": lambda: tf.reduce_sum(tf.gather_nd(w, c([[1, 2], [2, 0]]))),
        "gather_axis_1": lambda: tf.reduce_sum(tf.gather(w, c([0, 2]), axis=1)),
        "gather_axis_minus_2": lambda: tf.reduce_sum(tf.gather(w, c([1]), axis=-2)),
        "read_value": lambda: tf.reduce_sum(tf.gather(w.read_value(), c([1]))),
        "scaled_first": lambda: tf.reduce_sum(tf.gather(w * 2.0, c([1]))),
        "cast_first": lambda: tf.reduce_sum(tf.gather(tf.cast(w, tf.float64), c([1])) ** 2),
        "int64_ids": lambda: tf.reduce_sum(tf.gather(w, c(np.array([1, 2], np.int64)))),
        "scalar_id": lambda: tf.reduce_sum(tf.gather(w, c(2)) ** 3),
        "gather_of_gather": lambda: tf.reduce_sum(tf.gather(tf.gather(w, c([1, 2])), c([1]))),
    }


def _gradient(lazy_mode, name):
    mod, var, conv = ((ltf, ltf.Variable, ltf.convert_to_tensor) if lazy_mode
                      else (tf, tf.Variable, tf.constant))
    w = var(W)
    with mod.GradientTape() as tape:
        loss = _cases(w, conv)[name]()
    return tape.gradient(loss, w)


@pytest.mark.parametrize("name", list(_cases(None, lambda v: v)))
def test_gradient_type_and_parts_match_eager(name):
    lazy, eager = _gradient(True, name), _gradient(False, name)
    assert type(lazy) is tf.IndexedSlices or not isinstance(lazy, tf.IndexedSlices)
    assert isinstance(lazy, tf.IndexedSlices) == isinstance(eager, tf.IndexedSlices)
    if isinstance(eager, tf.IndexedSlices):
        assert ltf.is_lazy(lazy.values) and ltf.is_lazy(lazy.indices)
        assert lazy.indices.dtype == eager.indices.dtype
        assert lazy.dense_shape.dtype == eager.dense_shape.dtype
        np.testing.assert_array_equal(lazy.dense_shape, eager.dense_shape)
        np.testing.assert_array_equal(lazy.indices.numpy(), eager.indices.numpy())
        np.testing.assert_allclose(lazy.values.numpy(), eager.values.numpy(), rtol=1e-6)
        assert lazy.values.dtype == eager.values.dtype
        lazy, eager = tf.convert_to_tensor(lazy), tf.convert_to_tensor(eager)
    assert ltf.is_lazy(lazy)
    assert lazy.dtype == eager.dtype
    np.testing.assert_allclose(lazy.numpy(), eager.numpy(), rtol=1e-6)


def test_densifying_is_lazy_and_needs_no_sync():
    g = _gradient(True, "two_gathers")
    before = ltf.metrics.counters().get("syncs", 0)
    dense = tf.convert_to_tensor(g)
    doubled = tf.cast(g, tf.float64)  # TF's own IndexedSlices, lazy parts
    dense64 = tf.convert_to_tensor(doubled)
    total, clipped = tf.reduce_sum(g), tf.clip_by_norm(g, 1.0)
    assert ltf.metrics.counters().get("syncs", 0) == before
    assert ltf.is_lazy(total) and ltf.is_lazy(clipped.values)
    assert ltf.is_lazy(dense) and ltf.is_lazy(dense64) and dense64.dtype == tf.float64
    eager = tf.convert_to_tensor(_gradient(False, "two_gathers"))
    np.testing.assert_allclose(dense.numpy(), eager.numpy(), rtol=1e-6)
    with pytest.raises(ValueError):
        tf.convert_to_tensor(g, dtype=tf.int32)


def _sparse(c, values, indices):
    return tf.IndexedSlices(c(np.asarray(values, np.float32)), c(np.asarray(indices, np.int32)),
                            tf.constant([4, 3]))


def _tf_functions(c):
    s = _sparse(c, np.arange(9).reshape(3, 3) / 4.0, [1, 1, 3])
    return {
        "add_n": lambda: tf.math.add_n([s, s]),
        "clip_by_norm": lambda: tf.clip_by_norm(s, 1.0),
        "clip_by_global_norm": lambda: tf.clip_by_global_norm([s, c(np.ones(3, np.float32))],
                                                               1.0),
        "global_norm": lambda: tf.linalg.global_norm([s]),
        "cast": lambda: tf.cast(s, tf.float64),
        "identity": lambda: tf.identity(s),
        "reduce_sum": lambda: tf.reduce_sum(s, axis=0),
    }


@pytest.mark.parametrize("name", list(_tf_functions(tf.constant)))
def test_tf_functions_on_lazy_indexed_slices_match_eager(name):
    lazy = tf.nest.flatten(_tf_functions(ltf.convert_to_tensor)[name](), expand_composites=False)
    eager = tf.nest.flatten(_tf_functions(tf.constant)[name](), expand_composites=False)
    for a, b in zip(lazy, eager, strict=True):
        assert isinstance(a, tf.IndexedSlices) == isinstance(b, tf.IndexedSlices)
        if isinstance(b, tf.IndexedSlices):
            np.testing.assert_array_equal(np.asarray(a.indices), b.indices.numpy())
            a, b = a.values, b.values
        assert a.dtype == b.dtype
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-6)


def test_variable_scatter_updates_match_eager():
    results = []
    for var, c in ((ltf.Variable, ltf.convert_to_tensor), (tf.Variable, tf.constant)):
        w = var(W)
        w.scatter_add(_sparse(c, np.ones((3, 3)), [1, 1, 3]))
        w.scatter_sub(_sparse(c, np.full((2, 3), 0.25), [0, 1]))
        w.scatter_update(_sparse(c, np.full((1, 3), 7.0), [2]))
        results.append(np.asarray(w.numpy()))
        with pytest.raises(TypeError, match="sparse_delta"):
            w.scatter_add(c(W))
    np.testing.assert_allclose(*results, rtol=1e-6)


def _function_results(lazy_mode):
    var, conv, tape_cls = ((ltf.Variable, ltf.convert_to_tensor, ltf.GradientTape) if lazy_mode
                           else (tf.Variable, tf.constant, tf.GradientTape))
    w = var(W)

    @tf.function
    def step(ids):
        with tape_cls() as tape:
            loss = tf.reduce_sum(tf.gather(w, ids) ** 2)
        return loss, tape.gradient(loss, w)

    out = []
    for ids in ([1, 1, 2], [0, 3, 3]):  # the second call reuses the first's trace
        loss, g = step(conv(np.array(ids, np.int32)))
        assert isinstance(g, tf.IndexedSlices)
        out.append((float(loss), np.asarray(g.values), np.asarray(g.indices)))
    return out


def test_tf_function_returning_indexed_slices_matches_eager():
    for lazy, eager in zip(_function_results(True), _function_results(False), strict=True):
        for a, b in zip(lazy, eager, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_same_source_twice_matches_eager():
    results = []
    for mod, var in ((ltf, ltf.Variable), (tf, tf.Variable)):
        w = var(W)
        with mod.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(w, [1, 1, 2]) ** 2)
        grads = tape.gradient(loss, [w, w])
        assert all(isinstance(g, tf.IndexedSlices) for g in grads)
        results.append([np.asarray(g.values) for g in grads])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_watched_tensor_gathered_gives_indexed_slices_as_eager():
    results = []
    for mod, conv in ((ltf, ltf.convert_to_tensor), (tf, tf.constant)):
        x = conv(W)
        with mod.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.gather(x, conv([3, 1, 3])) * 3.0)
        g = tape.gradient(loss, x)
        assert isinstance(g, tf.IndexedSlices)
        results.append((np.asarray(g.values), np.asarray(g.indices), np.asarray(g.dense_shape)))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
