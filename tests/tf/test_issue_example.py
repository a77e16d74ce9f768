"""The program from the issue, with tf.data batches, runs lazily and trains."""

import numpy as np
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc


def test_issue_program(capfd):
    rng = np.random.default_rng(0)
    images = rng.normal(size=(128, 784)).astype(np.float32)
    labels = (images[:, :10].argmax(axis=1)).astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(32).repeat(3)
    tf.random.set_seed(0)
    w = ltf.Variable(tf.random.normal([784, 10]) * 0.01)
    b = ltf.Variable(tf.zeros([10]))
    losses = []
    lc.metrics.reset()
    for x, y in dataset:
        x = ltf.convert_to_tensor(x)
        with ltf.GradientTape() as tape:
            logits = tf.matmul(x, w) + b
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * dw)
        b.assign_sub(0.1 * db)
        ltf.sync()
        tf.print(loss)                                # observing syncs
        losses.append(float(loss))
    assert len(losses) == 12 and losses[-1] < losses[0]
    assert lc.metrics.counters()["compiles"] <= 2
    assert ltf.fallback_counts() == {}
    assert f"{losses[0]:.3f}"[:4] in capfd.readouterr().err
