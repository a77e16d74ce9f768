"""Every primitive against a NumPy reference, driven by ``op_records.RECORDS``."""

import jax
import numpy as np
import pytest
from op_records import RECORDS, SPECIAL, draw_inputs

import lazycore as lc
from lazycore.ops import OPS

CASES = [(r, np.dtype(d)) for r in RECORDS for d in r.dtypes]


def _id(case):
    record, dtype = case
    return f"{record.op}-{dtype.name}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_op_matches_numpy(case, rng):
    record, dtype = case
    inputs = draw_inputs(rng, record, dtype)
    expected = np.asarray(record.ref(*inputs))
    out = OPS[record.op](*[lc.asarray(x) for x in inputs], **record.attrs)
    got = lc.to_numpy(out)
    # IR verification: the shape rule's aval is what the lowering produced
    assert out.shape == got.shape == expected.shape
    want_dtype = record.ref_dtype(dtype) if record.ref_dtype else expected.dtype
    assert got.dtype == want_dtype, f"{record.op}: {got.dtype} != {want_dtype}"
    tol = record.rtol if dtype != np.float32 else max(record.rtol, 2e-5)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_every_op_is_covered():
    covered = {r.op for r in RECORDS} | SPECIAL
    missing = sorted(set(OPS) - covered)
    assert not missing, f"primitives without a test record: {missing}"


@pytest.mark.parametrize("case", CASES[::7], ids=[_id(c) for c in CASES[::7]])
def test_shape_rule_agrees_with_lowering(case, rng):
    """The hand-written shape rule and jax's abstract evaluation of the lowering agree."""
    record, dtype = case
    inputs = draw_inputs(rng, record, dtype)
    tensors = [lc.asarray(x) for x in inputs]
    out = OPS[record.op](*tensors, **record.attrs)
    structs = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in inputs]
    attrs = dict(out.node.attrs)
    want = jax.eval_shape(lambda *xs: OPS[record.op].lower(*xs, **attrs), *structs)
    assert out.shape == tuple(want.shape)
    assert out.dtype == np.dtype(want.dtype)
