"""A captured ``tf.function``'s Python scalars are constants of its program.

TF bakes the Python numbers of a traced body into its graph; lazy_tf's capture does the
same (``lazy_tf._capture``), so XLA folds them (a LayerNorm's epsilon, a mean's 1/n)
instead of receiving them as program arguments on every call. The trace is kept per
signature, so baking never recompiles. Oracle: the same body on TensorFlow.
"""

import re

import numpy as np
import tensorflow as tf

import lazy_tf as ltf
import lazycore as lc
from lazy_tf import _capture


def _norm(x):
    mean = tf.reduce_mean(x, axis=-1, keepdims=True)
    var = tf.reduce_mean(tf.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * tf.math.rsqrt(var + 1e-3) * 0.75 + 0.25


def _arguments(text: str) -> int:
    return len(re.findall(r"%arg\d+:", text.split("func.func public @main(")[1].split(")")[0]))


def test_python_scalars_of_a_captured_body_are_literals_of_its_program():
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    step = tf.function(_norm)
    out, again = step(ltf.constant(x)), step(ltf.constant(x + 1))
    assert _arguments(lc.debug.stablehlo_text([out])) == 1  # x alone: no scalar operand
    # one trace, one program for both calls: baking never recompiles
    assert _capture.captures(step) == 1
    assert lc.debug.graph_hash([out]) == lc.debug.graph_hash([again])
    for lazy, data in ((out, x), (again, x + 1)):
        np.testing.assert_allclose(lazy.numpy(), tf.function(_norm)(tf.constant(data)).numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert not lc.settings.bake_scalars  # only while the body is traced
    uncaptured = _norm(ltf.constant(x))  # outside a capture scalars stay parameters
    assert _arguments(lc.debug.stablehlo_text([uncaptured])) > 1


def test_a_python_number_argument_keeps_scalars_parameters():
    """Each value of a Python number argument traces anew (TF's rule); kept as
    parameters, those traces are one program (compiled once), not one per value."""
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    step = tf.function(lambda x, scale: _norm(x) * scale)
    outs = [step(ltf.constant(x), s) for s in (0.5, 2.0)]
    assert _capture.captures(step) == 2
    assert lc.debug.graph_hash([outs[0]]) == lc.debug.graph_hash([outs[1]])
    for out, s in zip(outs, (0.5, 2.0), strict=True):
        np.testing.assert_allclose(out.numpy(), _norm(tf.constant(x)).numpy() * s, rtol=1e-5,
                                   atol=1e-6)
