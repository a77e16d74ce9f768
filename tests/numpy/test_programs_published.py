# ruff: noqa: B007, B905, E701, E702, F841, UP031 - the programs kept in their published style
"""Programs in the style of well-known published NumPy code (an nnfs-style network with
Adam, Karpathy's min-char-rnn, tabular Q-learning on a gridworld), run with
``import lazy_numpy as np`` against NumPy: the same values, dtypes, shapes and printed
output, NumPy's random draws included (the sweep that found the fixes tested in
test_programs_idioms.py, test_programs_linalg.py and test_random.py)."""

from __future__ import annotations

import pytest
from lnp_testing import assert_program_matches_numpy


def nnfs(np):
    class Layer_Dense:
        def __init__(self, n_inputs, n_neurons):
            self.weights = 0.01 * np.random.randn(n_inputs, n_neurons)
            self.biases = np.zeros((1, n_neurons))
        def forward(self, inputs):
            self.inputs = inputs
            self.output = np.dot(inputs, self.weights) + self.biases
        def backward(self, dvalues):
            self.dweights = np.dot(self.inputs.T, dvalues)
            self.dbiases = np.sum(dvalues, axis=0, keepdims=True)
            self.dinputs = np.dot(dvalues, self.weights.T)

    class Activation_ReLU:
        def forward(self, inputs):
            self.inputs = inputs
            self.output = np.maximum(0, inputs)
        def backward(self, dvalues):
            self.dinputs = dvalues.copy()
            self.dinputs[self.inputs <= 0] = 0

    class Activation_Softmax:
        def forward(self, inputs):
            exp_values = np.exp(inputs - np.max(inputs, axis=1, keepdims=True))
            self.output = exp_values / np.sum(exp_values, axis=1, keepdims=True)

    class Loss:
        def calculate(self, output, y):
            return np.mean(self.forward(output, y))

    class Loss_CategoricalCrossentropy(Loss):
        def forward(self, y_pred, y_true):
            samples = len(y_pred)
            y_pred_clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
            if len(y_true.shape) == 1:
                correct_confidences = y_pred_clipped[range(samples), y_true]
            elif len(y_true.shape) == 2:
                correct_confidences = np.sum(y_pred_clipped * y_true, axis=1)
            return -np.log(correct_confidences)

    class Activation_Softmax_Loss_CategoricalCrossentropy:
        def __init__(self):
            self.activation = Activation_Softmax()
            self.loss = Loss_CategoricalCrossentropy()
        def forward(self, inputs, y_true):
            self.activation.forward(inputs)
            self.output = self.activation.output
            return self.loss.calculate(self.output, y_true)
        def backward(self, dvalues, y_true):
            samples = len(dvalues)
            if len(y_true.shape) == 2:
                y_true = np.argmax(y_true, axis=1)
            self.dinputs = dvalues.copy()
            self.dinputs[range(samples), y_true] -= 1
            self.dinputs = self.dinputs / samples

    class Optimizer_Adam:
        def __init__(self, learning_rate=0.001, decay=0., epsilon=1e-7, beta_1=0.9, beta_2=0.999):
            self.learning_rate = learning_rate
            self.current_learning_rate = learning_rate
            self.decay = decay
            self.iterations = 0
            self.epsilon = epsilon
            self.beta_1 = beta_1
            self.beta_2 = beta_2
        def pre_update_params(self):
            if self.decay:
                self.current_learning_rate = self.learning_rate * (1. / (1. + self.decay * self.iterations))
        def update_params(self, layer):
            if not hasattr(layer, 'weight_cache'):
                layer.weight_momentums = np.zeros_like(layer.weights)
                layer.weight_cache = np.zeros_like(layer.weights)
                layer.bias_momentums = np.zeros_like(layer.biases)
                layer.bias_cache = np.zeros_like(layer.biases)
            layer.weight_momentums = self.beta_1 * layer.weight_momentums + (1 - self.beta_1) * layer.dweights
            layer.bias_momentums = self.beta_1 * layer.bias_momentums + (1 - self.beta_1) * layer.dbiases
            weight_momentums_corrected = layer.weight_momentums / (1 - self.beta_1 ** (self.iterations + 1))
            bias_momentums_corrected = layer.bias_momentums / (1 - self.beta_1 ** (self.iterations + 1))
            layer.weight_cache = self.beta_2 * layer.weight_cache + (1 - self.beta_2) * layer.dweights**2
            layer.bias_cache = self.beta_2 * layer.bias_cache + (1 - self.beta_2) * layer.dbiases**2
            weight_cache_corrected = layer.weight_cache / (1 - self.beta_2 ** (self.iterations + 1))
            bias_cache_corrected = layer.bias_cache / (1 - self.beta_2 ** (self.iterations + 1))
            layer.weights += -self.current_learning_rate * weight_momentums_corrected / (np.sqrt(weight_cache_corrected) + self.epsilon)
            layer.biases += -self.current_learning_rate * bias_momentums_corrected / (np.sqrt(bias_cache_corrected) + self.epsilon)
        def post_update_params(self):
            self.iterations += 1

    def spiral_data(samples, classes):
        X = np.zeros((samples * classes, 2))
        y = np.zeros(samples * classes, dtype='uint8')
        for class_number in range(classes):
            ix = range(samples * class_number, samples * (class_number + 1))
            r = np.linspace(0.0, 1, samples)
            t = np.linspace(class_number * 4, (class_number + 1) * 4, samples) + np.random.randn(samples) * 0.2
            X[ix] = np.c_[r * np.sin(t * 2.5), r * np.cos(t * 2.5)]
            y[ix] = class_number
        return X, y

    np.random.seed(0)
    X, y = spiral_data(samples=50, classes=3)
    dense1 = Layer_Dense(2, 32)
    activation1 = Activation_ReLU()
    dense2 = Layer_Dense(32, 3)
    loss_activation = Activation_Softmax_Loss_CategoricalCrossentropy()
    optimizer = Optimizer_Adam(learning_rate=0.05, decay=5e-7)
    losses, accs = [], []
    for epoch in range(6):
        dense1.forward(X)
        activation1.forward(dense1.output)
        dense2.forward(activation1.output)
        loss = loss_activation.forward(dense2.output, y)
        predictions = np.argmax(loss_activation.output, axis=1)
        if len(y.shape) == 2:
            y = np.argmax(y, axis=1)
        accuracy = np.mean(predictions == y)
        if not epoch % 10:
            print(f'epoch: {epoch}, acc: {accuracy:.3f}, loss: {loss:.3f}, lr: {optimizer.current_learning_rate}')
        losses.append(loss); accs.append(accuracy)
        loss_activation.backward(loss_activation.output, y)
        dense2.backward(loss_activation.dinputs)
        activation1.backward(dense2.dinputs)
        dense1.backward(activation1.dinputs)
        optimizer.pre_update_params()
        optimizer.update_params(dense1)
        optimizer.update_params(dense2)
        optimizer.post_update_params()
    return [X, y, dense1.weights, dense2.biases, np.array(losses), np.array(accs)]


# tabular Q-learning on a gridworld (FrozenLake-like, deterministic moves)
def qlearning(np):
    rng = np.random.default_rng(0)
    n_rows, n_cols = 4, 4
    holes = {5, 7, 11, 12}
    goal = 15
    n_states, n_actions = n_rows * n_cols, 4
    def step(s, a):
        r, c = divmod(s, n_cols)
        if a == 0: c = max(c - 1, 0)
        elif a == 1: r = min(r + 1, n_rows - 1)
        elif a == 2: c = min(c + 1, n_cols - 1)
        else: r = max(r - 1, 0)
        s2 = r * n_cols + c
        return s2, float(s2 == goal), s2 in holes or s2 == goal
    Q = np.zeros((n_states, n_actions))
    alpha, gamma, eps = 0.8, 0.95, 1.0
    rewards = []
    for ep in range(6):
        s = 0
        total = 0
        for t in range(30):
            if rng.random() < eps:
                a = int(rng.integers(n_actions))
            else:
                a = int(np.argmax(Q[s]))
            s2, r, done = step(s, a)
            Q[s, a] += alpha * (r + gamma * np.max(Q[s2]) - Q[s, a])
            total += r
            s = s2
            if done:
                break
        eps = max(0.05, eps * 0.95)
        rewards.append(total)
    policy = np.argmax(Q, axis=1)
    return [Q, policy, np.array(rewards)]


def min_char_rnn(np):
    # Karpathy's min-char-rnn (2015), on a fixed text, few iterations
    data = 'hello world, hello numpy. the quick brown fox jumps over the lazy dog. ' * 3
    chars = sorted(list(set(data)))
    data_size, vocab_size = len(data), len(chars)
    char_to_ix = {ch: i for i, ch in enumerate(chars)}
    ix_to_char = {i: ch for i, ch in enumerate(chars)}
    hidden_size = 8; seq_length = 4; learning_rate = 1e-1
    np.random.seed(1)
    Wxh = np.random.randn(hidden_size, vocab_size) * 0.01
    Whh = np.random.randn(hidden_size, hidden_size) * 0.01
    Why = np.random.randn(vocab_size, hidden_size) * 0.01
    bh = np.zeros((hidden_size, 1)); by = np.zeros((vocab_size, 1))
    def lossFun(inputs, targets, hprev):
        xs, hs, ys, ps = {}, {}, {}, {}
        hs[-1] = np.copy(hprev)
        loss = 0
        for t in range(len(inputs)):
            xs[t] = np.zeros((vocab_size, 1))
            xs[t][inputs[t]] = 1
            hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
            ys[t] = np.dot(Why, hs[t]) + by
            ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
            loss += -np.log(ps[t][targets[t], 0])
        dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
        dbh, dby = np.zeros_like(bh), np.zeros_like(by)
        dhnext = np.zeros_like(hs[0])
        for t in reversed(range(len(inputs))):
            dy = np.copy(ps[t])
            dy[targets[t]] -= 1
            dWhy += np.dot(dy, hs[t].T)
            dby += dy
            dh = np.dot(Why.T, dy) + dhnext
            dhraw = (1 - hs[t] * hs[t]) * dh
            dbh += dhraw
            dWxh += np.dot(dhraw, xs[t].T)
            dWhh += np.dot(dhraw, hs[t - 1].T)
            dhnext = np.dot(Whh.T, dhraw)
        for dparam in [dWxh, dWhh, dWhy, dbh, dby]:
            np.clip(dparam, -5, 5, out=dparam)
        return loss, dWxh, dWhh, dWhy, dbh, dby, hs[len(inputs) - 1]
    def sample(h, seed_ix, n):
        x = np.zeros((vocab_size, 1))
        x[seed_ix] = 1
        ixes = []
        for t in range(n):
            h = np.tanh(np.dot(Wxh, x) + np.dot(Whh, h) + bh)
            y = np.dot(Why, h) + by
            p = np.exp(y) / np.sum(np.exp(y))
            ix = np.random.choice(range(vocab_size), p=p.ravel())
            x = np.zeros((vocab_size, 1))
            x[ix] = 1
            ixes.append(ix)
        return ixes
    n, p = 0, 0
    mWxh, mWhh, mWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
    mbh, mby = np.zeros_like(bh), np.zeros_like(by)
    smooth_loss = -np.log(1.0 / vocab_size) * seq_length
    losses = []
    while n < 3:
        if p + seq_length + 1 >= len(data) or n == 0:
            hprev = np.zeros((hidden_size, 1))
            p = 0
        inputs = [char_to_ix[ch] for ch in data[p:p + seq_length]]
        targets = [char_to_ix[ch] for ch in data[p + 1:p + seq_length + 1]]
        if n % 5 == 0:
            sample_ix = sample(hprev, inputs[0], 8)
            txt = ''.join(ix_to_char[ix] for ix in sample_ix)
            print('----\n %s \n----' % (txt,))
        loss, dWxh, dWhh, dWhy, dbh, dby, hprev = lossFun(inputs, targets, hprev)
        smooth_loss = smooth_loss * 0.999 + loss * 0.001
        if n % 5 == 0:
            print('iter %d, loss: %f' % (n, smooth_loss))
        for param, dparam, mem in zip([Wxh, Whh, Why, bh, by], [dWxh, dWhh, dWhy, dbh, dby], [mWxh, mWhh, mWhy, mbh, mby]):
            mem += dparam * dparam
            param += -learning_rate * dparam / np.sqrt(mem + 1e-8)
        losses.append(smooth_loss)
        p += seq_length
        n += 1
    return [Wxh, Whh, Why, bh, by, mWxh, np.array(losses), hprev]


@pytest.mark.parametrize("program", [nnfs, qlearning, min_char_rnn])
def test_program_matches_numpy(program):
    assert_program_matches_numpy(program, rtol=1e-9, atol=1e-12)
