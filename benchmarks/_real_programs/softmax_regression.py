# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""Softmax regression trained by minibatch SGD: CS231n assignment 1,
``cs231n/classifiers/linear_classifier.py::LinearClassifier.train`` with the
``Softmax`` subclass's vectorized loss. The notebook calls
``softmax.train(X_train, y_train, learning_rate=1e-7, reg=2.5e4, num_iters=1500,
verbose=True)``: batches of 200 of the 49000 training images (3073 values each), a
loss printed every 100 iterations. The benchmark keeps the batch (the per-iteration
work) and holds 5000 training images in memory (the set only feeds the sampler).
"""

from . import _cifar

SOURCE = "CS231n assignment 1, LinearClassifier.train (Softmax), batch 200 x 3073"
SIZES = {"tiny": {"num_train": 40, "batch_size": 8, "num_iters": 4},
         "published": {"num_train": 5000, "batch_size": 200, "num_iters": 10},
         "10x": {"num_train": 5000, "batch_size": 2000, "num_iters": 5}}
ITER_KEY = "num_iters"  # the loop count: a run cut to two iterations counts compiles
STATE = ()


def make_inputs(num_train, batch_size, num_iters, seed=0):
    X, y = _cifar.images(num_train, seed)
    return {"X": X, "y": y, "batch_size": batch_size, "num_iters": num_iters,
            "learning_rate": 1e-7, "reg": 2.5e4, "seed": seed}


def iterations(inputs):
    return inputs["num_iters"]


def program(np, inputs):
    def softmax_loss_vectorized(W, X, y, reg):
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

    class LinearClassifier(object):

        def __init__(self):
            self.W = None

        def train(self, X, y, learning_rate=1e-3, reg=1e-5, num_iters=100,
                  batch_size=200, verbose=False):
            num_train, dim = X.shape
            num_classes = np.max(y) + 1  # assume y takes values 0...K-1 where K is number of classes
            if self.W is None:
                # lazily initialize W
                self.W = 0.001 * np.random.randn(dim, num_classes)

            # Run stochastic gradient descent to optimize W
            loss_history = []
            for it in range(num_iters):
                X_batch = None
                y_batch = None
                batch_indices = np.random.choice(num_train, batch_size, replace=True)
                X_batch = X[batch_indices]
                y_batch = y[batch_indices]

                # evaluate loss and gradient
                loss, grad = self.loss(X_batch, y_batch, reg)
                loss_history.append(loss)

                # perform parameter update
                self.W -= learning_rate * grad

                if verbose and it % 100 == 0:
                    print('iteration %d / %d: loss %f' % (it, num_iters, loss))

            return loss_history

    class Softmax(LinearClassifier):
        """ A subclass that uses the Softmax + Cross-entropy loss function """

        def loss(self, X_batch, y_batch, reg):
            return softmax_loss_vectorized(self.W, X_batch, y_batch, reg)

    np.random.seed(inputs["seed"])
    softmax = Softmax()
    loss_hist = softmax.train(inputs["X"], inputs["y"], learning_rate=inputs["learning_rate"],
                              reg=inputs["reg"], num_iters=inputs["num_iters"],
                              batch_size=inputs["batch_size"], verbose=True)
    return softmax.W, loss_hist[-1]
