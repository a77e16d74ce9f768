"""Host scalars reach the executable packed, one vector per dtype (``ArgLayout``): the
values, dtypes, donation and the compile cache must be exactly as with one argument
per input."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lazycore as lc
from lazycore.lowering import arg_layout, layout_args, linearize, lower
from lazycore.trace import scalar


def _compiles():
    return lc.metrics.counters().get("compiles", 0)


def _axpy_program(a, b, c):
    """x*a + y*b + c (float32 params) and n*k (an int32 param): two dtype groups."""
    x = lc.asarray(np.arange(4, dtype=np.float32))
    y = lc.asarray(np.ones(4, np.float32))
    n = lc.asarray(np.arange(3, dtype=np.int32))

    def fill(v, dtype, shape):
        return lc.ops.broadcast_in_dim(scalar(v, dtype), shape=shape, broadcast_dimensions=())

    out = lc.ops.add(lc.ops.add(lc.ops.mul(x, fill(a, np.float32, (4,))),
                                lc.ops.mul(y, fill(b, np.float32, (4,)))),
                     fill(c, np.float32, (4,)))
    count = lc.ops.mul(n, fill(7, np.int32, (3,)))
    return out, count


def test_layout_groups_scalar_params_by_dtype_in_order():
    out, count = _axpy_program(0.5, 2.5, 3.25)
    program = linearize([out.node, count.node])
    layout = arg_layout(program)
    kinds = [(n.op, n.aval.shape, n.aval.dtype) for n in program.inputs]
    direct_kinds = [kinds[i] for i in layout.direct]
    assert all(op == "data" for op, _, _ in direct_kinds)
    assert [(d, len(ix)) for d, ix in layout.packed] == [(np.dtype(np.float32), 3),
                                                        (np.dtype(np.int32), 1)] or \
        [(d, len(ix)) for d, ix in layout.packed] == [(np.dtype(np.int32), 1),
                                                      (np.dtype(np.float32), 3)]
    args = layout_args(layout, program.inputs)
    assert len(args) == len(layout.direct) + len(layout.packed)
    vectors = {a.dtype: a for a in args[len(layout.direct):]}
    assert sorted(vectors[np.dtype(np.float32)].tolist()) == [0.5, 2.5, 3.25]
    assert vectors[np.dtype(np.int32)].tolist() == [7]


def test_packed_values_are_each_params_own():
    out, count = _axpy_program(0.5, 2.5, 3.25)
    np.testing.assert_allclose(lc.to_numpy(out), np.arange(4) * 0.5 + 2.5 + 3.25, rtol=1e-6)
    np.testing.assert_array_equal(lc.to_numpy(count), np.arange(3) * 7)
    assert lc.to_numpy(out).dtype == np.float32 and lc.to_numpy(count).dtype == np.int32


def test_new_scalar_values_reuse_the_executable():
    lc.sync()  # nothing of an earlier test pending
    warm = _axpy_program(0.5, 2.5, 3.25)  # noqa: F841 - held: a dead handle is not synced
    lc.sync()
    before = _compiles()
    for step in range(4):
        a, b, c = 0.1 * step + 0.3, -1.5 * step - 0.7, 2.0 ** step + 0.5  # never 0, +-1
        out, count = _axpy_program(a, b, c)
        lc.sync()
        np.testing.assert_allclose(lc.to_numpy(out),
                                   np.arange(4, dtype=np.float32) * np.float32(a)
                                   + np.float32(b) + np.float32(c), rtol=1e-6)
    assert _compiles() == before  # only values changed: the same program


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int64, np.uint8, np.bool_])
def test_every_dtype_packs(dtype):
    values = [np.asarray(v).astype(dtype) for v in (2, 3, 0)]
    x = lc.asarray(np.ones(2, dtype))
    parts = [lc.ops.broadcast_in_dim(scalar(v, dtype, bake=False), shape=(2,),
                                     broadcast_dimensions=()) for v in values]
    total = lc.ops.add(lc.ops.add(lc.ops.add(x, parts[0]), parts[1]), parts[2])
    program = linearize([total.node])
    assert [len(ix) for _, ix in arg_layout(program).packed] == [3]
    want = np.ones(2, dtype) + values[0] + values[1] + values[2]
    got = lc.to_numpy(total)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_one_scalar_is_passed_as_it_is():
    x = lc.asarray(np.ones(3, np.float32))
    y = lc.ops.mul(x, lc.ops.broadcast_in_dim(scalar(1.5, np.float32), shape=(3,),
                                              broadcast_dimensions=()))
    layout = arg_layout(linearize([y.node]))
    assert layout.packed == () and layout.direct == (0, 1)
    np.testing.assert_allclose(lc.to_numpy(y), 1.5)


def test_donated_buffers_with_packed_scalars():
    """A training-like loop: the state is donated each step while the scalars are packed."""
    w = lc.asarray(np.ones(5, np.float32))
    expected = np.ones(5, np.float32)
    for step in range(1, 5):
        lr, decay = np.float32(0.1 * step), np.float32(1 - 0.01 * step)
        w = lc.ops.sub(lc.ops.mul(w, lc.ops.broadcast_in_dim(
                           scalar(float(decay), np.float32), shape=(5,), broadcast_dimensions=())),
                       lc.ops.broadcast_in_dim(scalar(float(lr), np.float32), shape=(5,),
                                               broadcast_dimensions=()))
        lc.sync()
        expected = expected * decay - lr
    np.testing.assert_allclose(lc.to_numpy(w), expected, rtol=1e-6)


def test_lowered_signature_takes_one_vector_per_dtype():
    out, count = _axpy_program(0.5, 2.5, 3.25)
    program = linearize([out.node, count.node])
    layout = arg_layout(program)
    lowered = lower(program)
    n_args = len(lowered.in_avals[0])
    assert n_args == len(layout.direct) + len(layout.packed) < len(program.inputs)


def test_persistent_cache_round_trip_with_packed_scalars(tmp_path):
    script = textwrap.dedent(f"""
        import numpy as np, lazycore as lc
        from lazycore.trace import scalar
        lc.configure(persistent_cache_dir={str(tmp_path)!r})
        x = lc.asarray(np.arange(4, dtype=np.float32))
        def fill(v):
            return lc.ops.broadcast_in_dim(scalar(v, np.float32), shape=(4,),
                                           broadcast_dimensions=())
        y = lc.ops.add(lc.ops.mul(x, fill(0.5)), fill(0.25))
        print(lc.to_numpy(y).tolist(), lc.metrics.counters()["compiles"],
              lc.metrics.counters().get("persistent_cache_hits", 0))
    """)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True)
        values, compiles, loads = out.stdout.rsplit(maxsplit=2)
        assert values == str([0.25, 0.75, 1.25, 1.75])
        runs.append((int(compiles), int(loads)))
    assert runs == [(1, 0), (0, 1)]
