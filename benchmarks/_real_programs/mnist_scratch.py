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
        # Define a one-hot variable for an all-zero vector
        # with 10 dimensions (number labels from 0 to 9).
        one_hot_labels = labels[..., None] == np.arange(dimension)[None]
        # Return one-hot encoded labels.
        return one_hot_labels.astype(np.float64)

    training_labels = one_hot_encoding(y_train[:training_sample])
    test_labels = one_hot_encoding(y_test[:test_sample])

    seed = 884736743
    rng = np.random.default_rng(seed)

    # Define ReLU that returns the input if it's positive and 0 otherwise.
    def relu(x):
        return (x >= 0) * x

    # Set up a derivative of the ReLU function that returns 1 for a positive input
    # and 0 otherwise.
    def relu2deriv(output):
        return output >= 0

    learning_rate = 0.005
    epochs = inputs["epochs"]
    hidden_size = 100
    pixels_per_image = 784
    num_labels = 10

    weights_1 = 0.2 * rng.random((pixels_per_image, hidden_size)) - 0.1
    weights_2 = 0.2 * rng.random((hidden_size, num_labels)) - 0.1

    # To store training and test set losses and accurate predictions
    # for visualization.
    store_training_loss = []
    store_training_accurate_pred = []
    store_test_loss = []
    store_test_accurate_pred = []

    # This is a training loop.
    # Run the learning experiment for a defined number of epochs (iterations).
    for j in range(epochs):

        #################
        # Training step #
        #################

        # Set the initial loss/error and the number of accurate predictions to zero.
        training_loss = 0.0
        training_accurate_predictions = 0

        # For all images in the training set, perform a forward pass
        # and backpropagation and adjust the weights accordingly.
        for i in range(len(training_images)):
            # Forward propagation/forward pass:
            # 1. The input layer:
            #    Initialize the training image data as inputs.
            layer_0 = training_images[i]
            # 2. The hidden layer:
            #    Take in the training image data into the middle layer by
            #    matrix-multiplying it by randomly initialized weights.
            layer_1 = np.dot(layer_0, weights_1)
            # 3. Pass the hidden layer's output through the ReLU activation function.
            layer_1 = relu(layer_1)
            # 4. Define the dropout function for regularization.
            dropout_mask = rng.integers(low=0, high=2, size=layer_1.shape)
            # 5. Apply dropout to the hidden layer's output.
            layer_1 *= dropout_mask * 2
            # 6. The output layer:
            #    Ingest the output of the middle layer into the the final layer
            #    by matrix-multiplying it by randomly initialized weights.
            #    Produce a 10-dimension vector with 10 scores.
            layer_2 = np.dot(layer_1, weights_2)

            # Backpropagation/backward pass:
            # 1. Measure the training error (loss function) between the actual
            #    image labels (the truth) and the prediction by the model.
            training_loss += np.sum((training_labels[i] - layer_2) ** 2)
            # 2. Increment the accurate prediction count.
            training_accurate_predictions += int(
                np.argmax(layer_2) == np.argmax(training_labels[i])
            )
            # 3. Differentiate the loss function/error.
            layer_2_delta = training_labels[i] - layer_2
            # 4. Propagate the gradients of the loss function back through the hidden layer.
            layer_1_delta = np.dot(weights_2, layer_2_delta) * relu2deriv(layer_1)
            # 5. Apply the dropout to the gradients.
            layer_1_delta *= dropout_mask
            # 6. Update the weights for the middle and input layers
            #    by multiplying them by the learning rate and the gradients.
            weights_1 += learning_rate * np.outer(layer_0, layer_1_delta)
            weights_2 += learning_rate * np.outer(layer_1, layer_2_delta)

        # Store training set losses and accurate predictions.
        store_training_loss.append(training_loss)
        store_training_accurate_pred.append(training_accurate_predictions)

        ###################
        # Evaluation step #
        ###################

        # Evaluate model performance on the test set at each epoch.

        # Unlike the training step, the weights are not modified for each image
        # (or batch). Therefore the model can be applied to the test images in a
        # vectorized manner, eliminating the need to loop over each image
        # individually:

        results = relu(test_images @ weights_1) @ weights_2

        # Measure the error between the actual label (truth) and prediction values.
        test_loss = np.sum((test_labels - results) ** 2)

        # Measure prediction accuracy on test set
        test_accurate_predictions = np.sum(
            np.argmax(results, axis=1) == np.argmax(test_labels, axis=1)
        )

        # Store test set losses and accurate predictions.
        store_test_loss.append(test_loss)
        store_test_accurate_pred.append(test_accurate_predictions)

        # Summarize error and accuracy metrics at each epoch
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
