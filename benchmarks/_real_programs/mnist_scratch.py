# ruff: noqa: B007, E501, UP034 - the authors' own code, kept as published
"""Deep learning on MNIST from scratch, the numpy.org tutorial
(``numpy-tutorials/content/tutorial-deep-learning-on-mnist.md``): a 784-100-10 network
with ReLU and a dropout mask, trained one image at a time (``for i in
range(len(training_images))``, ``int(np.argmax(layer_2) == np.argmax(...))`` read every
step, ``weights += learning_rate * np.outer(...)``), the test set evaluated batched after
each epoch and the epoch's metrics printed. Published size: 1000 training and 1000 test
images, ``hidden_size = 100``, 20 epochs, ``rng = np.random.default_rng(884736743)``.
MNIST is not downloaded here: random ``uint8`` images and labels of the same shapes.
"""

import numpy

SOURCE = "numpy.org tutorial: deep learning on MNIST from scratch, 1000 images, 784-100-10"
SIZES = {"tiny": {"training_sample": 12, "test_sample": 8, "epochs": 3},
         "published": {"training_sample": 1000, "test_sample": 1000, "epochs": 2},
         "10x": {"training_sample": 10000, "test_sample": 10000, "epochs": 2}}
ITER_KEY = "epochs"  # the loop count: a run cut to two iterations counts compiles
STATE = ()


def make_inputs(training_sample, test_sample, epochs, seed=0):
    rng = numpy.random.default_rng(seed)
    return {"x_train": rng.integers(0, 256, (training_sample, 784), dtype=numpy.uint8),
            "y_train": rng.integers(0, 10, training_sample, dtype=numpy.uint8),
            "x_test": rng.integers(0, 256, (test_sample, 784), dtype=numpy.uint8),
            "y_test": rng.integers(0, 10, test_sample, dtype=numpy.uint8),
            "training_sample": training_sample, "test_sample": test_sample, "epochs": epochs}


def iterations(inputs):
    return inputs["epochs"]


def program(np, inputs):
    x_train, y_train, x_test, y_test = (inputs[k] for k in ("x_train", "y_train", "x_test", "y_test"))
    training_sample, test_sample = inputs["training_sample"], inputs["test_sample"]
    training_images = x_train[0:training_sample] / 255
    test_images = x_test[0:test_sample] / 255

    def one_hot_encoding(labels, dimension=10):
        one_hot_labels = labels[..., None] == np.arange(dimension)[None]
        return one_hot_labels.astype(np.float64)

    training_labels = one_hot_encoding(y_train[:training_sample])
    test_labels = one_hot_encoding(y_test[:test_sample])

    seed = 884736743
    rng = np.random.default_rng(seed)

    def relu(x):
        return (x >= 0) * x

    def relu2deriv(output):
        return output >= 0

    learning_rate = 0.005
    epochs = inputs["epochs"]
    hidden_size = 100
    pixels_per_image = 784
    num_labels = 10

    weights_1 = 0.2 * rng.random((pixels_per_image, hidden_size)) - 0.1
    weights_2 = 0.2 * rng.random((hidden_size, num_labels)) - 0.1

    store_training_loss = []
    store_training_accurate_pred = []
    store_test_loss = []
    store_test_accurate_pred = []

    for j in range(epochs):

        training_loss = 0.0
        training_accurate_predictions = 0

        for i in range(len(training_images)):
            layer_0 = training_images[i]
            layer_1 = np.dot(layer_0, weights_1)
            layer_1 = relu(layer_1)
            dropout_mask = rng.integers(low=0, high=2, size=layer_1.shape)
            layer_1 *= dropout_mask * 2
            layer_2 = np.dot(layer_1, weights_2)

            training_loss += np.sum((training_labels[i] - layer_2) ** 2)
            training_accurate_predictions += int(
                np.argmax(layer_2) == np.argmax(training_labels[i])
            )
            layer_2_delta = training_labels[i] - layer_2
            layer_1_delta = np.dot(weights_2, layer_2_delta) * relu2deriv(layer_1)
            layer_1_delta *= dropout_mask
            weights_1 += learning_rate * np.outer(layer_0, layer_1_delta)
            weights_2 += learning_rate * np.outer(layer_1, layer_2_delta)

        store_training_loss.append(training_loss)
        store_training_accurate_pred.append(training_accurate_predictions)

        results = relu(test_images @ weights_1) @ weights_2

        test_loss = np.sum((test_labels - results) ** 2)

        test_accurate_predictions = np.sum(
            np.argmax(results, axis=1) == np.argmax(test_labels, axis=1)
        )

        store_test_loss.append(test_loss)
        store_test_accurate_pred.append(test_accurate_predictions)

        print(
            (
                f"Epoch: {j}\n"
                f"  Training set error: {training_loss / len(training_images):.3f}\n"
                f"  Training set accuracy: {training_accurate_predictions / len(training_images)}\n"
                f"  Test set error: {test_loss / len(test_images):.3f}\n"
                f"  Test set accuracy: {test_accurate_predictions / len(test_images)}"
            )
        )
    return (weights_1, weights_2, store_training_loss[-1], store_test_accurate_pred[-1])
