# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""Two-layer fully connected network (affine - ReLU - affine - softmax) trained by
minibatch SGD: CS231n assignment 1, ``cs231n/classifiers/neural_net.py::TwoLayerNet``
(``loss``, ``train``, ``predict``), in the form of the course's widely published
solutions (``probs[range(N), y]``, ``dhidden[hidden_layer <= 0] = 0``, ``+=`` updates
of the parameter dict, accuracy checked and the learning rate decayed every epoch).
The notebook trains ``TwoLayerNet(32 * 32 * 3, 50, 10)`` with ``num_iters=1000,
batch_size=200, learning_rate=1e-4, learning_rate_decay=0.95, reg=0.25,
verbose=True`` on 49000 images (validation 1000); the benchmark keeps those shapes
and holds 5000 training images in memory (the set only feeds the sampler).
"""

from . import _cifar

SOURCE = "CS231n assignment 1, TwoLayerNet.train, 3072-50-10, batch 200"
SIZES = {"tiny": {"num_train": 40, "num_val": 10, "input_size": 12, "hidden_size": 6,
                  "batch_size": 8, "num_iters": 6},
         "published": {"num_train": 5000, "num_val": 1000, "input_size": 3072, "hidden_size": 50,
                       "batch_size": 200, "num_iters": 10},
         "10x": {"num_train": 5000, "num_val": 1000, "input_size": 3072, "hidden_size": 50,
                 "batch_size": 2000, "num_iters": 5}}
ITER_KEY = "num_iters"  # the loop count: a run cut to two iterations counts compiles
STATE = ()


def make_inputs(num_train, num_val, input_size, hidden_size, batch_size, num_iters, seed=0):
    X, y = _cifar.images(num_train + num_val, seed, bias=False)
    X = X[:, :input_size]
    return {"X_train": X[:num_train], "y_train": y[:num_train], "X_val": X[num_train:],
            "y_val": y[num_train:], "input_size": input_size, "hidden_size": hidden_size,
            "batch_size": batch_size, "num_iters": num_iters, "seed": seed}


def iterations(inputs):
    return inputs["num_iters"]


def program(np, inputs):
    class TwoLayerNet(object):
        def __init__(self, input_size, hidden_size, output_size, std=1e-4):
            self.params = {}
            self.params['W1'] = std * np.random.randn(input_size, hidden_size)
            self.params['b1'] = np.zeros(hidden_size)
            self.params['W2'] = std * np.random.randn(hidden_size, output_size)
            self.params['b2'] = np.zeros(output_size)

        def loss(self, X, y=None, reg=0.0):
            # Unpack variables from the params dictionary
            W1, b1 = self.params['W1'], self.params['b1']
            W2, b2 = self.params['W2'], self.params['b2']
            N, D = X.shape

            # Compute the forward pass
            scores = None
            hidden_layer = np.maximum(0, X.dot(W1) + b1)  # ReLU activation
            scores = hidden_layer.dot(W2) + b2

            # If the targets are not given then jump out, we're done
            if y is None:
                return scores

            # Compute the loss
            loss = None
            scores -= np.max(scores, axis=1, keepdims=True)
            exp_scores = np.exp(scores)
            probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
            correct_logprobs = -np.log(probs[range(N), y])
            data_loss = np.sum(correct_logprobs) / N
            reg_loss = reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
            loss = data_loss + reg_loss

            # Backward pass: compute gradients
            grads = {}
            dscores = probs
            dscores[range(N), y] -= 1
            dscores /= N
            grads['W2'] = np.dot(hidden_layer.T, dscores)
            grads['b2'] = np.sum(dscores, axis=0)
            dhidden = np.dot(dscores, W2.T)
            dhidden[hidden_layer <= 0] = 0
            grads['W1'] = np.dot(X.T, dhidden)
            grads['b1'] = np.sum(dhidden, axis=0)
            grads['W2'] += 2 * reg * W2
            grads['W1'] += 2 * reg * W1

            return loss, grads

        def train(self, X, y, X_val, y_val,
                  learning_rate=1e-3, learning_rate_decay=0.95,
                  reg=5e-6, num_iters=100,
                  batch_size=200, verbose=False):
            num_train = X.shape[0]
            iterations_per_epoch = max(num_train / batch_size, 1)

            # Use SGD to optimize the parameters in self.model
            loss_history = []
            train_acc_history = []
            val_acc_history = []

            for it in range(num_iters):
                X_batch = None
                y_batch = None
                sample_indices = np.random.choice(np.arange(num_train), batch_size)
                X_batch = X[sample_indices]
                y_batch = y[sample_indices]

                # Compute loss and gradients using the current minibatch
                loss, grads = self.loss(X_batch, y=y_batch, reg=reg)
                loss_history.append(loss)

                self.params['W1'] += -learning_rate * grads['W1']
                self.params['b1'] += -learning_rate * grads['b1']
                self.params['W2'] += -learning_rate * grads['W2']
                self.params['b2'] += -learning_rate * grads['b2']

                if verbose and it % 100 == 0:
                    print('iteration %d / %d: loss %f' % (it, num_iters, loss))

                # Every epoch, check train and val accuracy and decay learning rate.
                if it % iterations_per_epoch == 0:
                    # Check accuracy
                    train_acc = (self.predict(X_batch) == y_batch).mean()
                    val_acc = (self.predict(X_val) == y_val).mean()
                    train_acc_history.append(train_acc)
                    val_acc_history.append(val_acc)

                    # Decay learning rate
                    learning_rate *= learning_rate_decay

            return {
                'loss_history': loss_history,
                'train_acc_history': train_acc_history,
                'val_acc_history': val_acc_history,
            }

        def predict(self, X):
            y_pred = None
            scores = self.loss(X)
            y_pred = np.argmax(scores, axis=1)
            return y_pred

    np.random.seed(inputs["seed"])
    net = TwoLayerNet(inputs["input_size"], inputs["hidden_size"], 10)
    stats = net.train(inputs["X_train"], inputs["y_train"], inputs["X_val"], inputs["y_val"],
                      num_iters=inputs["num_iters"], batch_size=inputs["batch_size"],
                      learning_rate=1e-4, learning_rate_decay=0.95,
                      reg=0.25, verbose=True)
    return (net.params['W1'], net.params['b1'], net.params['W2'], net.params['b2'],
            stats['loss_history'][-1], stats['val_acc_history'][-1])
