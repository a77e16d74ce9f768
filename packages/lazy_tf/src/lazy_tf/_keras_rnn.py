"""Keras's TF ``backend.rnn`` on lazy values as ONE ``lazycore`` scan node.

Keras's recurrent layers (LSTM, GRU, SimpleRNN, any cell) step through
``backend.rnn``: a ``tf.while_loop`` over TensorArrays, which would turn each step's
lazy values into eager ones. Unrolled, every step's cell is traced again and the
gradient holds one copy per step. Here the step function is traced once on
placeholder slices (``lazycore.loops.scan``): the forward pass is one loop and its
gradient (JAX's, through the tape's ``vjp``) one reverse loop, as in TF's XLA.

Kept on Keras's unrolled path (``unroll=True``, still lazy): masks, a step that draws
random numbers (a cell's dropout masks in training) or runs a stateful TF op (one draw
would serve every step) or writes a variable, or one the scan refuses. Inside a
``tf.function`` graph trace, Keras's own loop.
"""

from __future__ import annotations

import functools
import importlib
import sys

import tensorflow as tf
from tensorflow.python.framework import op_callbacks

import lazycore as lc
from lazycore.loops import scan

from . import _state
from ._convert import to_core
from ._dispatch import wrap
from ._graph import building
from ._tensor import LazyTensor, handle, new


class _Unrolled(Exception):
    """The step cannot be one scan: Keras's unrolled loop runs it."""


def _scan_rnn(step_function, inputs, initial_states, go_backwards=False, constants=None,
              time_major=False, return_all_outputs=True, **_):
    from ._capture import LIVE, _rewind, _stream_counters, _Trace

    flat = [x if time_major else tf.transpose(x, [1, 0, *range(2, x.shape.rank)])
            for x in tf.nest.flatten(inputs)]
    flat = [tf.reverse(x, [0]) for x in flat] if go_backwards else flat
    states, traced = tuple(initial_states), {}
    before = {id(v): (v, handle(v).node) for v in LIVE.values()}
    counters, tr = _stream_counters(), _Trace()  # draws would repeat every step

    def body(carry, xs, _):
        x = tf.nest.pack_sequence_as(inputs, [new(t) for t in xs])
        output, traced["states"] = step_function(x, tf.nest.pack_sequence_as(
            states, [new(t) for t in carry]) + tuple(constants or ()))
        return [to_core(t) for t in tf.nest.flatten(traced["states"])], [to_core(output)]

    op_callbacks.add_op_callback(tr.eager_op)
    try:
        finals, (ys,) = scan(body, [to_core(t) for t in tf.nest.flatten(states)],
                             [to_core(x) for x in flat])
        if (tr.stateful or _stream_counters() != counters
                or any(handle(v).node is not node for v, node in before.values())):
            raise _Unrolled("the step draws random numbers or writes a variable")
    except Exception as error:
        for v, node in before.values():
            v.__dict__["_h"].node = node
        _rewind(counters)
        raise _Unrolled(str(error)) from error
    finally:
        op_callbacks.remove_op_callback(tr.eager_op)
    outputs = wrap(ys)  # recorded by a tape: gradients flow through the loop
    last, outputs = outputs[-1], outputs if return_all_outputs else outputs[-1:]
    if not time_major:
        outputs = tf.transpose(outputs, [1, 0, *range(2, outputs.shape.rank)])
    return last, outputs, tf.nest.pack_sequence_as(traced["states"], wrap(finals))


_OPTIONS = ("go_backwards", "mask", "constants", "unroll", "input_length", "time_major",
            "zero_output_for_mask", "return_all_outputs")  # Keras's rnn, after the first 3


def install() -> None:
    """Route Keras's TF ``rnn`` through the scan for lazy values (idempotent)."""
    # Keras's own rnn, or lazy_tf.keras's unrolling wrapper
    current = importlib.import_module("keras.src.backend.tensorflow.rnn").rnn
    if getattr(current, "__lazy_tf_scan__", False):
        return

    @functools.wraps(current)
    def rnn(step_function, inputs, initial_states, *args, **kwargs):
        kwargs.update(zip(_OPTIONS, args, strict=False))
        lazy = _state.keras["enabled"] or any(isinstance(x, LazyTensor) for x in
                                   tf.nest.flatten(inputs) + tf.nest.flatten(initial_states))
        if lazy and not kwargs.get("unroll") and not building():  # (static lengths)
            try:
                if kwargs.get("mask") is not None:
                    raise _Unrolled("mask")
                out = _scan_rnn(step_function, inputs, initial_states, **kwargs)
                lc.metrics.inc("keras_rnn_scan")
                return out
            except _Unrolled:
                kwargs["unroll"] = True
                if kwargs.get("mask") is not None and kwargs.pop("go_backwards", False):
                    # (Keras's unrolled loop zeroes masked outputs by the unreversed mask)
                    inputs, kwargs["mask"] = tf.nest.map_structure(lambda x: tf.reverse(
                        x, [int(not kwargs.get("time_major"))]), (inputs, kwargs["mask"]))
        return current(step_function, inputs, initial_states, **kwargs)

    rnn.__lazy_tf__ = rnn.__lazy_tf_scan__ = True
    for name, mod in list(sys.modules.items()):
        if name.startswith("keras") and getattr(mod, "rnn", None) is current:
            mod.rnn = rnn
