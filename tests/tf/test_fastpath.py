"""Binary plans (``_plans``) and the operator fast path (``_fastpath``) against eager TF.

A signature's first call takes the general path and learns a plan; later calls run
the plan. Every check here makes each call at least twice, so both paths are compared
with eager TensorFlow: values, dtypes, shapes and exception types.
"""

import operator

import numpy as np
import pytest
import tensorflow as tf
from tf_helpers import assert_same, lazy

import lazy_tf as ltf
from lazy_tf._tensor import handle

OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
       "pow": operator.pow, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
       "ge": operator.ge, "and": operator.and_, "or": operator.or_, "xor": operator.xor}
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.complex64, np.bool_]
SCALARS = [True, 2, 1.5, 1 + 2j]  # one per Python scalar type


def _array(dtype, shape=(3,)):
    return (np.arange(np.prod(shape)).reshape(shape) % 3 + 1).astype(dtype)  # 1..3: no /0


def _outcome(fn, *args):
    """("ok", result) or ("error", exception type)."""
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "error", type(e)


def _check(calls):
    """``calls``: (label, lazy outcome, eager outcome). One sync for all lazy results."""
    ltf.sync()
    for label, (lz_kind, lz), (eg_kind, eg) in calls:
        assert lz_kind == eg_kind, f"{label}: lazy {lz_kind} {lz}, eager {eg_kind} {eg}"
        if lz_kind == "error":
            assert lz is eg, f"{label}: lazy raised {lz.__name__}, eager {eg.__name__}"
        else:
            assert_same(lz, eg)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scalars_of_each_python_type_both_sides(dtype):
    x = _array(dtype)
    calls = []
    for name, fn in OPS.items():
        for s in SCALARS:
            eager_fwd, eager_rev = _outcome(fn, tf.constant(x), s), _outcome(fn, s, tf.constant(x))
            for attempt in range(2):  # learn, then planned
                calls.append((f"{name}(x, {s!r}) #{attempt}", _outcome(fn, lazy(x), s), eager_fwd))
                calls.append((f"{name}({s!r}, x) #{attempt}", _outcome(fn, s, lazy(x)), eager_rev))
    _check(calls)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_two_tensors_with_broadcasting(dtype):
    shapes = [((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 3))]
    calls = []
    for name, fn in OPS.items():
        for sa, sb in shapes:
            a, b = _array(dtype, sa), _array(dtype, sb)
            eager = _outcome(fn, tf.constant(a), tf.constant(b))
            for attempt in range(2):
                calls.append((f"{name}{sa}{sb} #{attempt}", _outcome(fn, lazy(a), lazy(b)), eager))
    _check(calls)


def test_mixed_dtypes_raise_like_eager_every_time():
    f32, i32, f64 = _array(np.float32), _array(np.int32), _array(np.float64)
    x = lazy(f32)
    _ = x * lazy(f32)  # a plan for (float32, float32) exists: must not answer other keys
    for other in (i32, f64):
        with pytest.raises(Exception) as eager:
            tf.constant(f32) * tf.constant(other)
        for _ in range(3):
            with pytest.raises(type(eager.value)):
                x * lazy(other)
            with pytest.raises(type(eager.value)):
                tf.multiply(x, lazy(other))


@pytest.mark.parametrize("dtype,value", [(np.int8, 300), (np.uint8, -1), (np.int32, 2 ** 40),
                                         (np.int32, 2 ** 70)])
def test_python_int_out_of_range_after_a_plan(dtype, value):
    x = _array(dtype)
    calls = []
    for v in (2, value, 2, value):  # the plan for ``int`` is learned from an in-range value
        calls.append((f"x + {v}", _outcome(operator.add, lazy(x), v),
                      _outcome(operator.add, tf.constant(x), v)))
    _check(calls)


def test_plans_do_not_confuse_dtypes_or_shapes():
    calls = []
    values = [_array(np.float32), _array(np.float64), _array(np.float32, (2, 3)),
              _array(np.int32), _array(np.float32, (1,)), _array(np.float32)]
    for _ in range(2):
        for a in values:
            for s in (0.5, 3):
                calls.append((f"{a.dtype}{a.shape}*{s}", _outcome(operator.mul, lazy(a), s),
                              _outcome(operator.mul, tf.constant(a), s)))
    _check(calls)


@pytest.mark.parametrize("scalar", [0.5, 1.0, 0.0, -1.0, 3])
def test_planned_call_records_the_general_paths_graph(scalar):
    # a fresh shape: the first call takes the general path, the second the plan
    x = lazy(np.ones((7, 5), np.float32))
    first, second = x * scalar, x * scalar
    assert handle(first).node.hash == handle(second).node.hash
    assert [o.op for o in handle(first).node.operands[1].operands] == \
        [o.op for o in handle(second).node.operands[1].operands]  # const vs param leaf


def test_tf_apis_with_kernels_use_plans_too():
    a, b = _array(np.float32, (2, 3)), _array(np.float32, (3,))
    calls = []
    for _ in range(2):
        for fn in (tf.maximum, tf.add, tf.math.floordiv, tf.math.squared_difference,
                   tf.math.divide_no_nan, tf.math.truediv):
            calls.append((fn.__name__, _outcome(fn, lazy(a), lazy(b)),
                          _outcome(fn, tf.constant(a), tf.constant(b))))
            calls.append((fn.__name__ + " scalar", _outcome(fn, lazy(a), 2.0),
                          _outcome(fn, tf.constant(a), 2.0)))
    ints = _array(np.int32, (2, 3))
    calls.append(("truediv int", _outcome(tf.math.truediv, lazy(ints), 2),
                  _outcome(tf.math.truediv, tf.constant(ints), 2)))
    _check(calls)


def test_variables_as_operands():
    w = np.array([1.0, 2.0, 3.0], np.float32)
    v, ev = ltf.Variable(w), tf.Variable(w)
    for _ in range(2):
        assert_same(v * 2.0 + v, ev * 2.0 + ev)
        assert_same(0.5 - v, 0.5 - ev)
        assert_same(lazy(w) / v, tf.constant(w) / ev)


def test_operators_inside_a_tape_after_plans_exist():
    w0 = np.array([1.0, 2.0, 3.0], np.float32)
    grads = []
    for var, tape_cls in ((ltf.Variable, ltf.GradientTape), (tf.Variable, tf.GradientTape)):
        w = var(w0)
        _ = w * 2.0 + w * w  # outside the tape: plans learned
        with tape_cls() as tape:
            loss = tf.reduce_sum(w * 2.0 + w * w - 1.5 / (w + 1.0))
        grads.append(tape.gradient(loss, [w])[0])
    assert_same(*grads)


def test_value_made_before_the_tape_is_a_constant_for_it():
    # regression: two lazy operands of one aval skipped the tape's bookkeeping
    outs = []
    for tape_cls, conv in ((ltf.GradientTape, lazy), (tf.GradientTape, tf.constant)):
        x = conv(np.float32(3.0))
        y = x * x  # made before the tape: TF takes it as given
        with tape_cls() as tape:
            tape.watch(x)
            z = y * x
        outs.append(tape.gradient(z, x))
    assert_same(*outs)


def test_stop_recording_still_stops_planned_operators():
    x0 = np.float32(2.0)
    outs = []
    for tape_cls, conv in ((ltf.GradientTape, lazy), (tf.GradientTape, tf.constant)):
        x = conv(x0)
        _ = x * 3.0
        with tape_cls() as tape:
            tape.watch(x)
            with tape.stop_recording():
                c = x * 3.0
            z = c * x
        outs.append(tape.gradient(z, x))
    assert_same(*outs)


def test_sparse_xent_matches_tf_and_invalid_labels_raise():
    """Labels outside ``[0, classes)`` raise as TF's CPU kernel does."""
    logits = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32) * 4
    labels = np.array([0, 3, 1, 2, 0], np.int64)
    fn = tf.nn.sparse_softmax_cross_entropy_with_logits
    assert_same(fn(labels=lazy(labels), logits=lazy(logits)),
                fn(labels=tf.constant(labels), logits=tf.constant(logits)))
    bad = np.array([0, 4, -1, 1, 2], np.int64)
    with pytest.raises(tf.errors.InvalidArgumentError):
        fn(labels=tf.constant(bad), logits=tf.constant(logits))
    with pytest.raises(tf.errors.InvalidArgumentError, match="valid range"):
        fn(labels=lazy(bad), logits=lazy(logits)).numpy()


def test_copies_rebuilt_from_the_spec_resolve_their_value():
    x = lazy(np.arange(3, dtype=np.float32))
    copy = tf.nest.pack_sequence_as(x, tf.nest.flatten(x, expand_composites=True),
                                    expand_composites=True)
    assert copy is not x
    assert_same(copy + 1.0, tf.constant(np.arange(3, dtype=np.float32)) + 1.0)


def test_threads_tracing_one_operator_with_different_signatures():
    import threading

    results, errors = {}, []

    def work(dtype, shape):
        try:
            x, y = lazy(np.ones(shape, dtype)), lazy(np.ones(shape, dtype))
            for _ in range(300):
                x = x * y + 0
            results[np.dtype(dtype).name] = (x.dtype, x.shape.as_list())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=a)
               for a in ((np.float32, (3,)), (np.float64, (2, 2)), (np.int32, (4,)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {"float32": (tf.float32, [3]), "float64": (tf.float64, [2, 2]),
                       "int32": (tf.int32, [4])}
