"""tf.data pipelines feeding lazy steps: datasets of lazy tensors, and ``ltf.DeviceLoader``
copying the next batch to the device while the current step is recorded."""

import threading

import numpy as np
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc

RNG = np.random.default_rng(7)
X = RNG.standard_normal((12, 3)).astype(np.float32)
Y = RNG.standard_normal((12, 1)).astype(np.float32)


def _train(batches, make_var, tape_cls):
    w = make_var(tf.ones([3, 1]))
    losses = []
    for x, y in batches:
        with tape_cls() as tape:
            loss = tf.reduce_mean((x @ w - y) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        losses.append(float(loss))
    return losses, w.numpy()


def _eager():
    return _train(tf.data.Dataset.from_tensor_slices((X, Y)).batch(4), tf.Variable,
                  tf.GradientTape)


def test_dataset_of_lazy_tensors_feeds_lazy_steps(metrics):
    ds = tf.data.Dataset.from_tensor_slices((ltf.convert_to_tensor(X),
                                             ltf.convert_to_tensor(Y))).batch(4)
    assert isinstance(ds.element_spec[0], type(ltf.convert_to_tensor(X)._type_spec))
    batches = list(ds)
    assert all(ltf.is_lazy(t) for b in batches for t in b)
    losses, w = _train(batches, ltf.Variable, ltf.GradientTape)
    eager_losses, eager_w = _eager()
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(w, eager_w, rtol=1e-6)
    assert ltf.fallback_counts() == {}


def test_device_loader_transfers_the_next_batch_during_the_step(metrics):
    """While step i is recorded, batch i + 1 has been pulled from the pipeline and put
    on the device by the loader's thread (the step waits for that, so no timing)."""
    pulled = [threading.Event() for _ in range(3)]

    def source():
        for i, batch in enumerate(tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)):
            pulled[i].set()
            yield batch

    losses, seen = [], []
    w = ltf.Variable(tf.ones([3, 1]))
    for i, (x, y) in enumerate(ltf.DeviceLoader(source(), prefetch=1)):
        assert ltf.is_lazy(x) and not x.is_pending  # device data, not a pending upload
        if i + 1 < len(pulled):
            assert pulled[i + 1].wait(60), "the loader did not fetch ahead"
        seen.append(lc.metrics.counters().get("executions", 0))
        with ltf.GradientTape() as tape:
            loss = tf.reduce_mean((x @ w - y) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        losses.append(loss)
    eager_losses, eager_w = _eager()
    np.testing.assert_allclose([float(v) for v in losses], eager_losses, rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), eager_w, rtol=1e-6)
    assert seen == [0, 1, 2]  # one program per step: the loader's barrier, not the loss
