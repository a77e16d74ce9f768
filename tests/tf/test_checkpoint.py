"""tf.train.Checkpoint, CheckpointManager and SavedModel with ltf.Variable and Keras
models trained lazily, against the same programs with tf.Variable / eager Keras."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import lazy_tf as ltf  # noqa: E402

RNG = np.random.default_rng(5)


def test_checkpoint_round_trip_and_interchange(tmp_path):
    v = ltf.Variable([1.0, 2.0, 3.0])
    v.assign_add(tf.ones([3]) * 0.5)  # pending: the checkpoint holds the current value
    step = ltf.Variable(7, trainable=False)
    path = tf.train.Checkpoint(w=v, step=step).save(str(tmp_path / "ck"))
    v.assign([9.0, 9.0, 9.0])

    fresh, fresh_step = ltf.Variable(tf.zeros([3])), ltf.Variable(0, trainable=False)
    tf.train.Checkpoint(w=fresh, step=fresh_step).restore(path).assert_consumed()
    assert ltf.is_lazy(fresh) and fresh.dtype == tf.float32
    np.testing.assert_array_equal(fresh.numpy(), [1.5, 2.5, 3.5])
    assert int(fresh_step) == 7

    eager = tf.Variable(tf.zeros([3]))  # an ltf checkpoint restores into tf.Variable ...
    tf.train.Checkpoint(w=eager).restore(path).expect_partial()
    np.testing.assert_array_equal(eager.numpy(), [1.5, 2.5, 3.5])
    eager_path = tf.train.Checkpoint(w=tf.Variable([4.0, 5.0, 6.0])).save(str(tmp_path / "e"))
    tf.train.Checkpoint(w=fresh).restore(eager_path)  # ... and the other way
    np.testing.assert_array_equal(fresh.numpy(), [4.0, 5.0, 6.0])


def test_restore_shape_mismatch_raises_like_tf(tmp_path):
    path = tf.train.Checkpoint(w=tf.Variable([1.0, 2.0])).save(str(tmp_path / "ck"))
    errors = []
    for var in (tf.Variable(tf.zeros([3])), ltf.Variable(tf.zeros([3]))):
        with pytest.raises(Exception) as info:
            tf.train.Checkpoint(w=var).restore(path)
        errors.append(type(info.value))
    assert errors[0] is errors[1]


def test_checkpoint_manager_in_a_lazy_training_loop(tmp_path):
    def train(make_var, tape_cls, conv, directory):
        w = make_var(tf.ones([3, 1]))
        step = make_var(0, trainable=False)
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(w=w, step=step),
                                             directory, max_to_keep=2)
        x, y = conv(RNG.standard_normal((4, 3)).astype(np.float32)), conv(np.ones((4, 1),
                                                                                 np.float32))
        for _ in range(3):
            with tape_cls() as tape:
                loss = tf.reduce_mean((x @ w - y) ** 2)
            w.assign_sub(0.1 * tape.gradient(loss, w))
            step.assign_add(1)
            manager.save()
        return manager, w

    state = RNG.bit_generator.state
    manager, w = train(ltf.Variable, ltf.GradientTape, ltf.convert_to_tensor, str(tmp_path / "l"))
    RNG.bit_generator.state = state
    _, expected = train(tf.Variable, tf.GradientTape, tf.constant, str(tmp_path / "e"))
    assert len(manager.checkpoints) == 2 and manager.latest_checkpoint.endswith("-3")
    fresh, step = ltf.Variable(tf.zeros([3, 1])), ltf.Variable(0, trainable=False)
    tf.train.Checkpoint(w=fresh, step=step).restore(manager.latest_checkpoint)
    np.testing.assert_allclose(fresh.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(fresh.numpy(), w.numpy())
    assert int(step) == 3


@pytest.mark.parametrize("called_before_save", [False, True])
def test_saved_model_of_lazy_variables(tmp_path, called_before_save):
    def module(make_var):
        m = tf.Module()
        m.w = make_var(tf.reshape(tf.range(6, dtype=tf.float32), [3, 2]))
        m.f = tf.function(lambda x: tf.nn.relu(tf.matmul(x, m.w)),
                          input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        if called_before_save:
            m.f(tf.ones([1, 3]))
        m.w.assign_sub(tf.ones([3, 2]) * 2.0)
        return m

    x = tf.constant(RNG.standard_normal((2, 3)).astype(np.float32))
    tf.saved_model.save(module(ltf.Variable), str(tmp_path / "lazy"))
    loaded = tf.saved_model.load(str(tmp_path / "lazy"))
    expected = module(tf.Variable).f(x)
    np.testing.assert_allclose(loaded.f(x).numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(loaded.w.numpy(), module(tf.Variable).w.numpy())


def _model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4),
                             keras.layers.BatchNormalization(), keras.layers.Dense(2)])


def _trained():
    model = _model()
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), run_eagerly=True,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    y = np.arange(8, dtype=np.int32) % 2
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    return model, x


@pytest.fixture
def lazy_keras():
    ltf.keras.enable()
    yield
    ltf.keras.disable()


def test_keras_model_trained_lazily_checkpoints_and_exports(lazy_keras, tmp_path):
    model, x = _trained()
    assert ltf.keras.lazy_value(model.weights[0]) is not None
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=model.optimizer), str(tmp_path), 1)
    manager.save()
    model.export(str(tmp_path / "export"), verbose=False)
    lazy_predictions = model.predict(x, verbose=0)

    fresh = _model()
    fresh.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss="mse")
    fresh.optimizer.build(fresh.trainable_variables)
    tf.train.Checkpoint(model=fresh, optimizer=fresh.optimizer).restore(
        manager.latest_checkpoint).assert_existing_objects_matched()
    for a, b in zip(model.weights + model.optimizer.variables,
                    fresh.weights + fresh.optimizer.variables, strict=True):
        np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))
    np.testing.assert_allclose(fresh.predict(x, verbose=0), lazy_predictions, rtol=1e-5,
                               atol=1e-6)

    ltf.keras.disable()
    eager_model, _ = _trained()  # the oracle: the same training in eager Keras
    loaded = tf.saved_model.load(str(tmp_path / "export"))  # (held: it owns the variables)
    served = loaded.serve(tf.constant(x))
    np.testing.assert_allclose(served.numpy(), eager_model.predict(x, verbose=0), rtol=1e-4,
                               atol=1e-6)


def test_tf_saved_model_save_of_a_keras_model_trained_lazily(lazy_keras, tmp_path):
    """``tf.saved_model.save(model)`` (the TF tutorials' export) writes the optimizer's
    variables too; one never used in a graph (``iteration``) got its TF shadow created
    inside the export graph, out of scope for the save (TypeError)."""
    model, x = _trained()
    tf.saved_model.save(model, str(tmp_path / "sm"))
    served = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    got = next(iter(served(tf.constant(x)).values())).numpy()
    ltf.keras.disable()
    eager_model, _ = _trained()
    np.testing.assert_allclose(got, eager_model.predict(x, verbose=0), rtol=1e-4, atol=1e-6)
