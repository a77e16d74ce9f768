"""Differential fuzzing of lazy_tf against eager TensorFlow."""

import numpy as np
import pytest
from fuzz import FUZZ_SETTINGS, Frontend, Reducer, programs, run_program
from hypothesis import given

tf = pytest.importorskip("tensorflow")
ltf = pytest.importorskip("lazy_tf")

TF = Frontend(
    name="tf",
    to_eager=tf.constant,
    to_lazy=ltf.convert_to_tensor,
    to_numpy=lambda t: np.asarray(t.numpy()),
    sync=ltf.sync,
    unary={
        "neg": tf.negative, "abs": tf.abs, "exp": tf.exp, "tanh": tf.tanh,
        "relu": tf.nn.relu, "sigmoid": tf.sigmoid, "sqrt_abs": lambda x: tf.sqrt(tf.abs(x)),
        "sin": tf.sin, "floor": tf.floor, "scale": lambda x: x * 2.5, "shift": lambda x: x + 1,
        "rsub": lambda x: 3 - x, "sum0": lambda x: tf.reduce_sum(x, 0),
        "mean_last": lambda x: tf.reduce_mean(x, -1), "softmax": tf.nn.softmax,
        "transpose": tf.transpose, "cumsum": lambda x: tf.cumsum(x, 0),
        "clip": lambda x: tf.clip_by_value(x, -0.5, 0.5), "max_last": lambda x: tf.reduce_max(x, -1),
        "square": tf.square, "reverse": lambda x: tf.reverse(x, [0]),
        "cast_i": lambda x: tf.cast(x, tf.int32), "row": lambda x: x[0],
        "expand": lambda x: tf.expand_dims(x, 0),
    },
    binary={
        "add": tf.add, "sub": tf.subtract, "mul": tf.multiply, "div": tf.divide,
        "maximum": tf.maximum, "minimum": tf.minimum, "matmul": tf.matmul,
        "where": lambda a, b: tf.where(a > b, a, b), "atan2": tf.math.atan2,
        "concat": lambda a, b: tf.concat([a, b], 0), "less": tf.less,
        "stack": lambda a, b: tf.stack([a, b]),
    },
    truth=bool,
    reduce_for_if=Reducer(lambda x: tf.reduce_sum(x) > 0, lambda x: tf.reduce_sum(x)),
    dtypes=(np.float32, np.float32, np.int32),
)


@given(programs(TF))
@FUZZ_SETTINGS
def test_random_programs_match_eager_tf(program):
    run_program(TF, program)
