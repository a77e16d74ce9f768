# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""Softmax classifier loss and gradient, fully vectorized: Stanford CS231n (2016-),
assignment 1, ``cs231n/classifiers/softmax.py::softmax_loss_vectorized``, in the form
of the course's widely published solutions (numerically stable shift, correct-class
probabilities by integer-array indexing, in-place gradient of the scores). Published
size: the notebook's development set, ``num_dev = 500`` CIFAR-10 images of 3073 values
(bias column), 10 classes, ``W = np.random.randn(3073, 10) * 0.0001``.
"""

from . import _cifar

SOURCE = "CS231n assignment 1, softmax_loss_vectorized, 500x3073 dev set, 10 classes"
SIZES = {"tiny": {"num": 8, "classes": 4},
         "published": {"num": 500, "classes": 10},
         "10x": {"num": 5000, "classes": 10}}
STATE = ("W",)


def make_inputs(num, classes, seed=0):
    import numpy

    X, y = _cifar.images(num, seed)
    y = y % classes
    W = numpy.random.RandomState(seed + 1).randn(X.shape[1], classes) * 0.0001
    return {"W": W, "X": X, "y": y, "reg": 0.000005}


def iterations(inputs):
    return 1


def program(np, inputs):
    def softmax_loss_vectorized(W, X, y, reg):
        """
        Softmax loss function, vectorized version.

        Inputs and outputs are the same as softmax_loss_naive.
        """
        # Initialize the loss and gradient to zero.
        loss = 0.0
        dW = np.zeros_like(W)

        num_train = X.shape[0]
        scores = X.dot(W)
        scores -= np.max(scores, axis=1, keepdims=True)
        exp_scores = np.exp(scores)
        probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
        loss = -np.sum(np.log(probs[np.arange(num_train), y]))
        loss /= num_train
        loss += reg * np.sum(W * W)

        dscores = probs
        dscores[np.arange(num_train), y] -= 1
        dscores /= num_train
        dW = X.T.dot(dscores)
        dW += 2 * reg * W

        return loss, dW

    loss, grad = softmax_loss_vectorized(inputs["W"], inputs["X"], inputs["y"], inputs["reg"])
    return loss, grad
