"""SGD (with momentum / Nesterov) and Adam over ``ltf.Variable``, with Keras 3's update
rules. Hyper-parameters and per-step factors are lazycore parameters (not baked), so
a schedule or the step count never recompiles the training step.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import tensorflow as tf

import lazycore as lc

from . import _state
from ._convert import to_core
from ._graph import building
from ._sparse_grads import dense
from ._tensor import handle, new
from ._variable import Variable


def _scalar(value, like: lc.Tensor) -> lc.Tensor:
    return lc.numeric.broadcast_to(lc.scalar(float(value), like.dtype, bake=False), like.shape)


class Optimizer:
    """The Keras optimizer interface over ``ltf.Variable``: ``learning_rate`` is a number
    or a schedule called with ``iterations`` (the count of applied steps)."""

    def __init__(self, learning_rate):
        self.learning_rate = learning_rate
        self.iterations = 0
        self._slots: dict[int, dict[str, lc.Tensor]] = {}

    def _lr(self) -> float:
        lr = self.learning_rate
        return float(lr(self.iterations) if callable(lr) else lr)

    def _slot(self, var: Variable, name: str) -> lc.Tensor:
        slots = self._slots.setdefault(id(var), {})
        if name not in slots:
            h = handle(var)  # device data, as every later step reads it (a baked zero
            # fill would make the first step's program differ from the second's)
            slot = slots[name] = lc.asarray(np.zeros(h.shape, h.dtype))
            # A sync orders its outputs by handle creation (``seq``). A slot made during
            # the first step would sort after that step's loss there, but before the
            # loss of every later step: a second program. It sorts with its variable.
            slot.seq = h.seq + len(slots) / 16
        return slots[name]

    def apply_gradients(self, grads_and_vars) -> None:
        """Record one update of each variable from its gradient (``None`` gradients are
        skipped with a warning, as in Keras); raises NotImplementedError inside a ``tf.function`` trace."""
        pairs = list(grads_and_vars)
        if not pairs:
            return  # Keras: nothing to apply, the step count stays
        if _state.capture[0] is not None:  # slots and step count are not variables: the
            # capture could not write them back; TensorFlow's graph path raises below
            raise lc.subprogram.CaptureError(f"ltf.optimizers.{type(self).__name__} inside "
                                             "a captured tf.function")
        if building():
            raise NotImplementedError(
                f"ltf.optimizers.{type(self).__name__}.apply_gradients inside a tf.function "
                "trace: its slots and step count live in the lazy graph. Call the step "
                "without tf.function (lazy_tf compiles it anyway), or update the variables "
                "with assign_sub inside the function.")
        pairs = _filter_empty_gradients(pairs)
        for g, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError(f"ltf optimizers update ltf.Variable, got {type(v).__name__}")
            h = handle(v)
            squares = None
            if isinstance(g, tf.IndexedSlices):  # Keras squares slice by slice, then sums
                squares = dense(tf.IndexedSlices(g.values * g.values, g.indices, g.dense_shape))
                g = new(dense(g))
            h.assign(self._update(to_core(g, h.dtype), h, v, squares))
        self.iterations += 1

    def apply(self, grads, trainable_variables) -> None:
        """Keras 3's spelling: ``apply_gradients(zip(grads, trainable_variables))``."""
        self.apply_gradients(zip(grads, trainable_variables, strict=True))

    def _update(self, g: lc.Tensor, w: lc.Tensor, var: Variable, squares=None) -> lc.Tensor:
        """The new value of ``w``; ``squares``: the sum of squared slices of a sparse
        gradient (None: ``g * g``)."""
        raise NotImplementedError


def _filter_empty_gradients(pairs: list) -> list:
    """Keras's rule: no gradient at all raises, a partial set warns and skips the Nones."""
    kept = [(g, v) for g, v in pairs if g is not None]
    if not kept:
        raise ValueError("No gradients provided for any variable.")
    missing = [getattr(v, "name", repr(v)) for g, v in pairs if g is None]
    if missing:
        warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                      "loss. If using `model.compile()`, did you forget to provide a `loss` "
                      "argument?", stacklevel=3)
    return kept


class SGD(Optimizer):
    """``keras.optimizers.SGD``: ``m = momentum * m - lr * g``; ``w += m`` (Nesterov:
    ``w += momentum * m - lr * g``); without momentum ``w -= lr * g``."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False):
        super().__init__(learning_rate)
        if not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    def _update(self, g, w, var, squares=None):
        ops = lc.ops
        lr_g = ops.mul(_scalar(self._lr(), g), g)
        if not self.momentum:
            return ops.sub(w, lr_g)
        m = self._slot(var, "momentum")
        m.assign(ops.sub(ops.mul(_scalar(self.momentum, m), m), lr_g))
        if self.nesterov:
            return ops.add(w, ops.sub(ops.mul(_scalar(self.momentum, m), m), lr_g))
        return ops.add(w, m)


class Adam(Optimizer):
    """``keras.optimizers.Adam``: ``alpha = lr * sqrt(1 - b2^t) / (1 - b1^t)``,
    ``m += (g - m)(1 - b1)``, ``v += (g^2 - v)(1 - b2)``, ``w -= m alpha / (sqrt(v) + eps)``."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False):
        super().__init__(learning_rate)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _update(self, g, w, var, squares=None):
        ops = lc.ops
        t = self.iterations + 1
        alpha = self._lr() * math.sqrt(1 - self.beta_2 ** t) / (1 - self.beta_1 ** t)
        m, v = self._slot(var, "m"), self._slot(var, "v")
        m.assign(ops.add(m, ops.mul(ops.sub(g, m), _scalar(1 - self.beta_1, g))))
        g2 = ops.mul(g, g) if squares is None else lc.numeric.cast(squares, g.dtype)
        v.assign(ops.add(v, ops.mul(ops.sub(g2, v), _scalar(1 - self.beta_2, g))))
        if self.amsgrad:  # the running maximum of v stands for it
            vmax = self._slot(var, "vhat")
            vmax.assign(ops.max(vmax, v))
            v = vmax
        return ops.sub(w, ops.div(ops.mul(m, _scalar(alpha, m)),
                                  ops.add(ops.sqrt(v), _scalar(self.epsilon, v))))
