"""An embedding (a variable read only through ``tf.gather``) trained with Keras's Adam,
on lazy_tf against eager Keras, several steps of a custom ``GradientTape`` loop.

Eager TF's gradient of a gather is ``tf.IndexedSlices`` (one slice per index, repeated
indices repeated); Keras's Adam squares that per slice (``ops.square``) before summing
the slices, so a row gathered k times gets ``sum(g_i^2)`` in its second moment where a
dense gradient gives ``(sum g_i)^2``. ``ltf.GradientTape`` returns ``IndexedSlices`` too
(lazy parts), so with repeated token ids the updates are eager's; densifying the
gradient on both sides gives the dense updates, equal on both sides as well."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import lazy_tf as ltf  # noqa: E402

VOCAB, DIM, CLASSES = 12, 4, 3


def _model():
    inputs = keras.Input((3,), dtype="int32")
    h = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(VOCAB, DIM)(inputs))
    return keras.Model(inputs, keras.layers.Dense(CLASSES)(h))


def _train(ids, labels, lazy_mode, densify=False, steps=4):
    """Losses and weights after ``steps`` Adam steps; ``densify``: the IndexedSlices
    gradients converted to dense tensors before the update."""
    (ltf.keras.enable if lazy_mode else ltf.keras.disable)()
    try:
        keras.utils.set_random_seed(0)
        model = _model()
        opt = keras.optimizers.Adam(0.05)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        conv = ltf.convert_to_tensor if lazy_mode else tf.constant
        tape_cls = ltf.GradientTape if lazy_mode else tf.GradientTape
        x, y = conv(ids), conv(labels)
        losses = []
        for _ in range(steps):
            with tape_cls() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            if densify:
                grads = [tf.convert_to_tensor(g) for g in grads]
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            losses.append(float(loss))
        return losses, [np.asarray(v) for v in model.trainable_variables]
    finally:
        ltf.keras.disable()


def _assert_close(a, b):
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, err_msg="losses")
    for i, (wa, wb) in enumerate(zip(a[1], b[1], strict=True)):
        np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6, err_msg=f"weight {i}")


LABELS = np.array([0, 2, 1, 0], np.int32)
UNIQUE = np.arange(12, dtype=np.int32).reshape(4, 3)           # every id once
REPEATED = np.array([[1, 1, 2], [3, 1, 1], [2, 2, 5], [7, 1, 3]], np.int32)


def test_unique_ids_match_eager():
    """No id twice: IndexedSlices and dense gradients give Adam the same update."""
    _assert_close(_train(UNIQUE, LABELS, True), _train(UNIQUE, LABELS, False))


def test_repeated_ids_match_eager_with_dense_gradients():
    """Densified on both sides (``tf.convert_to_tensor``, lazily on lazy_tf), the dense
    updates agree too: the gradient's type is what makes the difference."""
    _assert_close(_train(REPEATED, LABELS, True, densify=True),
                  _train(REPEATED, LABELS, False, densify=True))


def test_repeated_ids_match_eager():
    _assert_close(_train(REPEATED, LABELS, True), _train(REPEATED, LABELS, False))


def test_sparse_and_dense_updates_differ():
    """The comparison can fail: with repeated ids, sparse and dense updates differ."""
    with pytest.raises(AssertionError):
        _assert_close(_train(REPEATED, LABELS, False),
                      _train(REPEATED, LABELS, False, densify=True))
