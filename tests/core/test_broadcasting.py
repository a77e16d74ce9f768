"""Broadcasting and promotion rules (hypothesis) against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazycore as lc
from lazycore import numeric as nm
from lazycore.dtypes import result_type

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                 "uint32", "float16", "float32", "float64", "complex64",
                                 "complex128")]


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4))
@settings(max_examples=200, deadline=None)
def test_broadcast_shapes_matches_numpy(shapes):
    assert nm.broadcast_shapes(*shapes.input_shapes) == np.broadcast_shapes(*shapes.input_shapes)


@given(st.lists(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), min_size=2,
                max_size=3))
@settings(max_examples=200, deadline=None)
def test_broadcast_errors_agree_with_numpy(shapes):
    try:
        want = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError):
            nm.broadcast_shapes(*shapes)
    else:
        assert nm.broadcast_shapes(*shapes) == want


@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_numpy_policy_tensor_pairs(a, b):
    assert result_type([a, b], "numpy") == np.result_type(a, b)


@given(st.sampled_from(DTYPES), st.sampled_from([True, 3, 2.5, 1j]))
def test_numpy_policy_weak_python_scalars(a, value):
    want = np.result_type(a, value) if not (a.kind in "iu" and isinstance(value, bool)) \
        else np.result_type(a, value)
    assert result_type([a, type(value)], "numpy") == want


def test_only_the_policies_in_use_exist():
    """lazy_torch decides PyTorch's promotion itself (c10's categories need zero-dim
    tensors, which dtypes alone cannot express); the core keeps no dead copy of it."""
    assert set(lc.dtypes.DEFAULTS) == {"numpy", "strict"}
    with pytest.raises(KeyError):
        result_type([np.dtype("int32"), float], "torch")


def test_strict_policy_refuses_mixed_tensors():
    f32 = np.dtype("float32")
    assert result_type([f32, float], "strict") == f32
    assert result_type([np.dtype("int32"), int], "strict") == np.dtype("int32")
    with pytest.raises(lc.DTypeError):
        result_type([f32, np.dtype("float64")], "strict")


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       st.sampled_from(["add", "mul", "max", "sub"]))
@settings(max_examples=25, deadline=None)
def test_elementwise_broadcasts_like_numpy(shapes, op):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s) for s in shapes.input_shapes)
    ref = {"add": np.add, "mul": np.multiply, "max": np.maximum, "sub": np.subtract}[op]
    got = lc.to_numpy(nm.elementwise(op, lc.asarray(a), lc.asarray(b)))
    np.testing.assert_allclose(got, ref(a, b))
