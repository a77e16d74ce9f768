"""``tf.math.add_n``, ``tf.clip_by_global_norm`` and ``tf.linalg.global_norm`` on lists
mixing lazy tensors and lazy ``tf.IndexedSlices`` against eager TF: result types (add_n
densifies, clipping keeps IndexedSlices), values, dtypes, errors, and no sync."""

import numpy as np
import pytest
import tensorflow as tf

import lazy_tf as ltf

VALUES = np.arange(9, dtype=np.float32).reshape(3, 3) / 4.0


def _slices(c, dtype=np.float32, indices=(1, 1, 3)):
    return tf.IndexedSlices(c(VALUES.astype(dtype)), c(np.asarray(indices, np.int32)),
                            tf.constant([4, 3]))


def _cases(c):
    s, d = _slices(c), c(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
    s64 = _slices(c, np.float64, (0, 2, 2))
    return {
        "add_n_slices_and_dense": lambda: tf.math.add_n([s, d, s]),
        "add_n_all_slices": lambda: tf.math.add_n([s, _slices(c, indices=(0, 3, 3))]),
        "add_n_one_slices": lambda: tf.math.add_n([s]),
        "add_n_float64_slices": lambda: tf.math.add_n((s64, s64)),
        "global_norm_mixed": lambda: tf.linalg.global_norm([s, None, d]),
        "global_norm_slices": lambda: tf.linalg.global_norm((s,)),
        "clip_mixed": lambda: tf.clip_by_global_norm([s, None, d], 1.0),
        "clip_no_clipping": lambda: tf.clip_by_global_norm([s, d], 100.0),
        "clip_use_norm": lambda: tf.clip_by_global_norm([d, s], 2.0, use_norm=c(np.float32(3.0))),
        "clip_float64": lambda: tf.clip_by_global_norm([s64], 0.5),
    }


def _leaves(out):
    return tf.nest.flatten(out, expand_composites=False)


@pytest.mark.parametrize("name", list(_cases(tf.constant)))
def test_list_apis_on_lazy_indexed_slices_match_eager_without_sync(name):
    keys = ("syncs", "fallbacks", "host_transfers")
    before = [ltf.metrics.counters().get(k, 0) for k in keys]
    lazy = _leaves(_cases(ltf.convert_to_tensor)[name]())
    assert [ltf.metrics.counters().get(k, 0) for k in keys] == before
    eager = _leaves(_cases(tf.constant)[name]())
    assert len(lazy) == len(eager)
    for a, b in zip(lazy, eager, strict=True):
        assert type(a) is type(b) or (ltf.is_lazy(a) and isinstance(b, tf.Tensor))
        if b is None:
            continue
        if isinstance(b, tf.IndexedSlices):
            assert ltf.is_lazy(a.values) and ltf.is_lazy(a.indices)
            np.testing.assert_array_equal(np.asarray(a.indices), b.indices.numpy())
            np.testing.assert_array_equal(np.asarray(a.dense_shape), b.dense_shape.numpy())
            a, b = a.values, b.values
        assert ltf.is_lazy(a)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-6)


def _errors(c):
    s = _slices(c)
    return {
        "add_n_dtypes": lambda: tf.math.add_n([s, c(np.ones((4, 3)))]),
        "add_n_shapes": lambda: tf.math.add_n([s, c(np.ones((2, 3), np.float32))]),
        "add_n_empty": lambda: tf.math.add_n([]),
        "global_norm_not_a_list": lambda: tf.linalg.global_norm(s),
        "clip_not_a_list": lambda: tf.clip_by_global_norm(s, 1.0),
        "stack_shapes": lambda: tf.stack([s, c(np.ones((2, 3), np.float32))]),  # eager rerun
    }


@pytest.mark.parametrize("name", list(_errors(tf.constant)))
def test_list_api_errors_match_eager(name):
    with pytest.raises(Exception) as eager:
        _errors(tf.constant)[name]()
    with pytest.raises(type(eager.value)):
        _errors(ltf.convert_to_tensor)[name]()


def test_eager_indexed_slices_lists_stay_eager():
    s = _slices(tf.constant)
    total = tf.math.add_n([s, tf.ones((4, 3))])
    clipped, norm = tf.clip_by_global_norm([s], 1.0)
    assert not ltf.is_lazy(total) and not ltf.is_lazy(norm)
    assert isinstance(clipped[0], tf.IndexedSlices) and not ltf.is_lazy(clipped[0].values)


def test_tape_gradients_clip_and_sum_lazily():
    results = []
    for mod, var in ((ltf, ltf.Variable), (tf, tf.Variable)):
        w, b = var(np.ones((4, 3), np.float32)), var(np.ones(3, np.float32))
        with mod.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(w, [1, 1, 2]) * b * 3.0)
        before = ltf.metrics.counters().get("syncs", 0)
        grads = tape.gradient(loss, [w, b])
        (gw, gb), norm = tf.clip_by_global_norm(grads, 1.0)
        total = tf.math.add_n([grads[0], gw])
        if mod is ltf:
            assert ltf.metrics.counters().get("syncs", 0) == before
            assert isinstance(gw, tf.IndexedSlices) and ltf.is_lazy(total)
        results.append([np.asarray(v) for v in (gw.values, gb, norm, total)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
