"""Tiered execution (``lazycore.tiers``, ``lazycore.interpreter``): both tiers give the
eager oracle's values, dtypes and errors, and ``tier="auto"`` switches from the
interpreter to a background-compiled executable when a program repeats."""

from __future__ import annotations

import numpy as np
import pytest
from op_records import RECORDS, draw_inputs

import lazycore as lc
from lazycore import interpreter, ops, tiers
from lazycore.lowering import linearize

CASES = [(r, np.dtype(d)) for r in RECORDS for d in r.dtypes]


def _id(case):
    record, dtype = case
    return f"{record.op}-{dtype.name}"


@pytest.fixture
def tier():
    """Run a test body under a given tier; restores the setting."""
    saved = lc.settings.tier, lc.settings.interpret_wait_ms

    def use(name):
        tiers.reset()
        lc.cache.clear()  # an executable compiled by an earlier test would be used at once
        # never wait for a compile because the loaded machine interpreted slowly
        lc.configure(tier=name, interpret_wait_ms=float("inf"))
    yield use
    tiers.wait_compiles()
    lc.configure(tier=saved[0], interpret_wait_ms=saved[1])


@pytest.fixture(params=["compile", "interpret"])
def each_tier(request, tier):
    tier(request.param)
    return request.param


# -- both tiers, one oracle ------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_interpreter_matches_the_reference(case, rng, tier):
    """Every op record (``test_ops``'s NumPy references) through the interpreter."""
    tier("interpret")
    record, dtype = case
    inputs = draw_inputs(rng, record, dtype)
    expected = np.asarray(record.ref(*inputs))
    out = ops.OPS[record.op](*[lc.asarray(x) for x in inputs], **record.attrs)
    got = lc.to_numpy(out)
    assert lc.metrics.counters()["compiles"] == 0
    assert out.shape == got.shape == expected.shape
    want_dtype = record.ref_dtype(dtype) if record.ref_dtype else expected.dtype
    assert got.dtype == want_dtype
    tol = record.rtol if dtype != np.float32 else max(record.rtol, 2e-5)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30, 2.5, -3.0, 1.0])
_KERNEL_CASES = [c for c in CASES if c[0].op in interpreter.KERNELS and c[1].kind in "fiub"]


def _with_specials(rng, record, dtype):
    inputs = draw_inputs(rng, record, dtype)
    out = []
    for x in inputs:
        x = np.array(x)
        if x.dtype.kind == "f" and x.size:
            flat = x.reshape(-1)
            picks = rng.choice(_SPECIAL, size=min(flat.size, 6))
            flat[rng.permutation(flat.size)[:picks.size]] = picks
        elif x.dtype.kind in "iu" and x.size and record.domain != "small_int":
            info = np.iinfo(x.dtype)
            flat = x.reshape(-1)
            flat[: min(2, flat.size)] = [info.max, info.min][: min(2, flat.size)]
        out.append(x)
    return out


@pytest.mark.parametrize("case", _KERNEL_CASES, ids=[_id(c) for c in _KERNEL_CASES])
def test_numpy_kernels_agree_with_xla_on_special_values(case, rng):
    """NaN, infinities, signed zeros, huge values and integer extremes: the NumPy kernel
    and the op's XLA lowering give the same dtype and values."""
    record, dtype = case
    inputs = _with_specials(rng, record, dtype)
    out = ops.OPS[record.op](*[lc.asarray(x) for x in inputs], **record.attrs)
    program = linearize([out.node])
    with np.errstate(all="ignore"):
        by_numpy = np.asarray(interpreter.run(program, numpy_kernels=True)[0])
        by_xla = np.asarray(interpreter.run(program, numpy_kernels=False)[0])
    assert by_numpy.dtype == by_xla.dtype and by_numpy.shape == by_xla.shape
    tol = max(record.rtol, 2e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(by_numpy, by_xla, rtol=tol, atol=0, equal_nan=True)


def test_gather_kernel_matches_xla_on_random_dimension_numbers(rng):
    from jax import lax

    for _ in range(60):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(s) for s in rng.integers(1, 5, ndim))
        x = rng.standard_normal(shape)
        k = int(rng.integers(1, ndim + 1))
        index_map = tuple(int(v) for v in rng.permutation(ndim)[:k])
        sizes = tuple(int(rng.integers(1, s + 1)) for s in shape)
        collapsed = tuple(sorted(d for d in index_map if sizes[d] == 1 and rng.random() < .7))
        batch = tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3))))
        indices = rng.integers(-2, 6, batch + (k,))
        n_out = len(batch) + ndim - len(collapsed)
        offset = tuple(sorted(int(v) for v in rng.permutation(n_out)[:ndim - len(collapsed)]))
        attrs = dict(offset_dims=offset, collapsed_slice_dims=collapsed,
                     start_index_map=index_map, slice_sizes=sizes)
        want = lax.gather(x, indices, lax.GatherDimensionNumbers(
            offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=index_map),
            sizes, mode="clip")
        np.testing.assert_array_equal(interpreter.KERNELS["gather"](x, indices, **attrs),
                                      np.asarray(want))


def test_values_and_dtypes_in_each_tier(each_tier):
    a = lc.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = lc.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    f = ops.exp(ops.neg(a))
    i = ops.mul(b, b)
    s = ops.reduce_sum(f, axes=(1,))
    c = ops.convert(i, dtype=np.float64)
    got = [lc.to_numpy(t) for t in (f, i, s, c)]
    assert [g.dtype for g in got] == [np.float32, np.int32, np.float32, np.float64]
    np.testing.assert_allclose(got[0], np.exp(-np.arange(6, dtype=np.float32)).reshape(2, 3),
                               rtol=1e-6)
    assert got[1].tolist() == [[0, 1, 4], [9, 16, 25]]
    np.testing.assert_allclose(got[2], got[0].sum(1), rtol=1e-6)
    if each_tier == "interpret":
        assert lc.metrics.counters()["compiles"] == 0
        assert lc.metrics.counters()["interpreted_executions"] >= 1


def test_failing_op_raises_the_same_error_in_each_tier(each_tier):
    from lazycore.ops.registry import OPS, defop

    if "test_tier_explodes" not in OPS:
        def lower(x):
            raise RuntimeError("injected lowering failure")
        defop("test_tier_explodes", "test", lambda x: x, lower)
    good = ops.add(lc.asarray(np.ones(3)), lc.asarray(np.ones(3)))
    bad = OPS["test_tier_explodes"](lc.asarray(np.ones(3)))
    with pytest.raises(lc.ExecutionError, match="test_tier_explodes.*injected"):
        lc.sync()
    np.testing.assert_allclose(lc.to_numpy(good), 2.0)
    with pytest.raises(lc.ExecutionError):
        lc.to_numpy(bad)


def test_multi_output_ops_and_fills_in_each_tier(each_tier):
    a = lc.asarray(np.array([[4.0, 1.0], [1.0, 3.0]]))
    q, r = ops.linalg_qr(a)
    half = lc.numeric.elementwise("mul", a, 0.5)  # a fill parameter
    np.testing.assert_allclose(lc.to_numpy(ops.dot_general(
        q, r, contracting=((1,), (0,)), batch=((), ()))), lc.to_numpy(a), atol=1e-12)
    np.testing.assert_allclose(lc.to_numpy(half), [[2.0, 0.5], [0.5, 1.5]])


def test_gradients_in_each_tier(each_tier):
    """A ``vjp`` node (jitted as one op by the interpreter) gives the analytic gradient."""
    x = lc.asarray(np.array([0.5, -1.0, 2.0]))
    y = lc.numeric.sum(ops.mul(ops.sin(x), x))
    (g,) = lc.grad([y], [x])
    v = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(lc.to_numpy(g), np.cos(v) * v + np.sin(v), rtol=1e-12)


def test_interpreted_outputs_own_their_buffers(tier):
    """A reshape's NumPy result is a view of its input; the output handed to the
    runtime is a copy, so donating one buffer later cannot change the other."""
    tier("interpret")
    x = lc.asarray(np.arange(4.0))
    y = ops.reshape(x, new_sizes=(2, 2))
    lc.sync()
    lc.configure(tier="compile")
    x.assign(ops.add(x, x))
    lc.sync()
    lc.wait()
    assert lc.to_numpy(y).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert lc.to_numpy(x).tolist() == [0.0, 2.0, 4.0, 6.0]


# -- the switch ----------------------------------------------------------------------

def test_auto_interprets_then_switches_to_the_background_compiled_executable(tier, capsys):
    tier("auto")
    lc.configure(debug=True)
    try:
        x = lc.asarray(np.ones(8, np.float32))
        w = lc.asarray(np.full(8, 2.0, np.float32))
        history = []
        for step in range(5):
            w = ops.sub(w, ops.mul(x, w))
            w = ops.add(w, x)
            lc.sync()
            if step == 1:
                assert tiers.wait_compiles(timeout=120)
            c = lc.metrics.counters()
            history.append((c["interpreted_executions"], c["compiles"], c["cache_hits"]))
    finally:
        lc.configure(debug=False)
    # runs 1-2 interpreted (the second queues the compile), 3-5 run the executable
    assert history == [(1, 0, 0), (2, 1, 0), (2, 1, 1), (2, 1, 2), (2, 1, 3)]
    assert lc.metrics.counters()["background_compiles"] == 1
    np.testing.assert_allclose(lc.to_numpy(w), 1.0)
    err = capsys.readouterr().err
    assert "tier: background compile queued" in err and "background compile done" in err


def _held_compiles(monkeypatch):
    """Background compiles wait for the returned event (set it to let them finish)."""
    import threading

    gate = threading.Event()
    lower = tiers.lower

    def held(*args, **kwargs):
        gate.wait(timeout=120)
        return lower(*args, **kwargs)

    monkeypatch.setattr(tiers, "lower", held)
    return gate


def _runs(n, before=lambda run: None):
    """``n`` runs of one repeating program: (interpreted, compiles, hits, waits) after each."""
    x = lc.asarray(np.ones(8, np.float32))
    w = lc.asarray(np.full(8, 2.0, np.float32))
    history = []
    for run in range(n):
        before(run)
        w = ops.add(ops.mul(x, w), x)
        lc.sync()
        c = lc.metrics.counters()
        history.append((c["interpreted_executions"], c["compiles"], c["cache_hits"],
                        c.get("compile_waits", 0)))
    np.testing.assert_allclose(lc.to_numpy(w), 2.0 + n)
    return history


def _release_at(run: int, gate):
    def before(i):
        if i == run:
            gate.set()
            assert tiers.wait_compiles(timeout=120)
    return before


def test_auto_keeps_interpreting_a_cheaply_interpreted_program(tier, monkeypatch):
    tier("auto")  # interpret_wait_ms=inf: never waits
    gate = _held_compiles(monkeypatch)
    try:
        history = _runs(4, _release_at(3, gate))
    finally:
        gate.set()
    assert history == [(1, 0, 0, 0), (2, 0, 0, 0), (3, 0, 0, 0), (3, 1, 1, 0)]


def test_auto_waits_for_the_compile_of_a_slowly_interpreted_program(tier, monkeypatch):
    """Two interpreted runs slower than ``interpret_wait_ms`` (here: said to have taken
    an hour, so the wait outlasts any compile): the third run waits for the compile,
    which is let go once the wait has begun, and runs the executable."""
    tier("auto")
    lc.configure(interpret_wait_ms=0.0)
    monkeypatch.setattr(tiers, "_interpreted_s", _Hour())
    gate = _held_compiles(monkeypatch)
    wait_for = tiers._wait_for

    def waiting(key, seconds):
        gate.set()
        wait_for(key, seconds)

    monkeypatch.setattr(tiers, "_wait_for", waiting)
    try:
        history = _runs(4)
    finally:
        gate.set()
    assert history == [(1, 0, 0, 0), (2, 0, 0, 0), (2, 1, 1, 1), (2, 1, 2, 1)]


class _Hour(dict):
    """``tiers._interpreted_s`` for a program whose every interpreted run took an hour."""

    def __setitem__(self, key, seconds):
        super().__setitem__(key, 3600.0)


def test_auto_waits_for_a_compile_no_longer_than_an_interpreted_run(tier, monkeypatch):
    """A compile still running when the wait (the faster interpreted run's time) ends:
    the run is interpreted, not held until the compile finishes (first runs waited 13 s)."""
    tier("auto")
    lc.configure(interpret_wait_ms=0.0)
    gate = _held_compiles(monkeypatch)
    try:
        history = _runs(4, _release_at(3, gate))
    finally:
        gate.set()
    # run 3 waited (counted), found the compile unfinished and was interpreted
    assert history == [(1, 0, 0, 0), (2, 0, 0, 0), (3, 0, 0, 1), (3, 1, 1, 1)]


def test_auto_donates_once_compiled(tier):
    """The compile thread does not switch donation off (it traces nothing)."""
    tier("auto")
    for _ in range(2):
        w = lc.asarray(np.ones(1000, np.float32))
        w.assign(ops.add(w, lc.asarray(np.ones(1000, np.float32))))
        lc.sync()
    assert tiers.wait_compiles(timeout=120)
    w = lc.asarray(np.ones(1000, np.float32))
    old = w.node.value
    w.assign(ops.add(w, lc.asarray(np.ones(1000, np.float32))))
    lc.sync()
    lc.wait()
    assert tiers.threads() == 1 and old.is_deleted()
    np.testing.assert_allclose(lc.to_numpy(w), 2.0)


def test_auto_never_waits_for_a_donating_variant(tier):
    """A program compiled while its inputs were held runs that executable (no donation)
    when an input becomes free to reuse; the donating variant compiles meanwhile."""
    tier("auto")

    def step(hold):
        w = lc.asarray(np.ones(1000, np.float32))
        one = lc.asarray(np.ones(1000, np.float32))
        keep = (lc.Tensor(w.node), one) if hold else None
        w.assign(ops.add(w, one))
        del one
        lc.sync()
        return w, keep

    for _ in range(2):
        step(hold=True)
    assert tiers.wait_compiles(timeout=120)
    before = lc.metrics.counters()
    w, _ = step(hold=False)
    after = lc.metrics.counters()
    assert after["cache_hits"] == before["cache_hits"] + 1
    assert after["interpreted_executions"] == before["interpreted_executions"]
    np.testing.assert_allclose(lc.to_numpy(w), 2.0)
    assert tiers.wait_compiles(timeout=120)
    assert lc.metrics.counters()["background_compiles"] == 2


def test_a_failing_background_compile_keeps_the_program_interpreted(tier, monkeypatch):
    tier("auto")

    def refuse(*args, **kwargs):
        raise RuntimeError("no compiler today")

    monkeypatch.setattr(tiers, "lower", refuse)
    x = lc.asarray(np.arange(3.0))
    for _ in range(4):
        y = ops.mul(x, x)
        assert lc.to_numpy(y).tolist() == [0.0, 1.0, 4.0]
        tiers.wait_compiles(timeout=60)
    c = lc.metrics.counters()
    assert c["background_compile_failures"] == 1 and c["interpreted_executions"] == 4


def test_auto_with_a_persistent_cache_compiles_a_first_run_for_the_next_process(tier, tmp_path):
    tier("auto")
    lc.configure(persistent_cache_dir=str(tmp_path))
    try:
        x = lc.asarray(np.arange(5.0))
        assert lc.to_numpy(ops.exp(x)).shape == (5,)
        assert lc.metrics.counters()["interpreted_executions"] == 1
        assert tiers.wait_compiles(timeout=120)
        assert lc.metrics.counters()["background_compiles"] == 1
        assert any(p.name.endswith(".bin") for p in tmp_path.iterdir())
    finally:
        lc.configure(persistent_cache_dir=None)


def test_tier_setting_is_checked():
    with pytest.raises(ValueError, match="tier"):
        lc.configure(tier="fastest")


def test_interpreter_drops_values_after_their_last_reader():
    """A long elementwise chain interpreted keeps a few intermediates alive, not all of
    them (Black-Scholes at 40M options was OOM-killed when every one stayed)."""
    import tracemalloc

    x = lc.asarray(np.linspace(0.0, 1.0, 1_000_000))  # 8 MB per float64 intermediate
    y = x
    for _ in range(20):
        y = ops.OPS["add"](ops.OPS["mul"](y, x), x)
    program = linearize([y.node])
    release, _ = interpreter._releases(program)
    released = [p for r in release for p in r]
    assert len(released) == len(set(released))
    assert not set(released) & set(program.output_positions)
    tracemalloc.start()
    try:
        (out,) = interpreter.run(program, numpy_kernels=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = np.linspace(0.0, 1.0, 1_000_000)
    ref = expected
    for _ in range(20):
        ref = ref * expected + expected
    np.testing.assert_allclose(np.asarray(out), ref)
    assert peak < 80 * 2**20, f"interpreter peak {peak / 2**20:.0f} MB for a 40-op chain of 8 MB values"


def test_scatter_and_update_slice_kernels_match_xla(rng):
    """Point scatters (replace, add; fill and clip modes, out-of-range and repeated
    indices) and clamped dynamic_update_slice: NumPy kernel == lax."""
    from jax import lax

    for _ in range(40):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(s) for s in rng.integers(1, 5, ndim))
        x = rng.standard_normal(shape)
        n = int(rng.integers(0, 6))
        indices = rng.integers(-2, 6, (n, ndim))
        updates = rng.standard_normal(n)
        dnums = dict(update_window_dims=(), inserted_window_dims=tuple(range(ndim)),
                     scatter_dims_to_operand_dims=tuple(range(ndim)))
        for name, fn in (("scatter", lax.scatter), ("scatter_add", lax.scatter_add)):
            for mode in ("fill", "clip"):
                got = interpreter.KERNELS[name](x, indices, updates, mode=mode, **dnums)
                want = fn(x, indices, updates, lax.ScatterDimensionNumbers(**dnums), mode=mode)
                if got is None:  # declined: replace with two updates on one element
                    assert name == "scatter"
                    continue
                np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)
        update = rng.standard_normal(tuple(int(rng.integers(1, s + 1)) for s in shape))
        starts = [np.asarray(int(v)) for v in rng.integers(-3, 6, ndim)]
        np.testing.assert_array_equal(
            interpreter.KERNELS["dynamic_update_slice"](x, update, *starts),
            np.asarray(lax.dynamic_update_slice(x, update, starts)))


def test_an_update_in_place_never_changes_a_value_read_later():
    """The interpreter writes a dynamic_update_slice into its operand only when nothing
    reads the operand afterwards -- not when a slice (a NumPy view of it) is read later."""
    x = lc.asarray(np.arange(12.0).reshape(3, 4))
    doubled = ops.OPS["mul"](x, x)
    early = ops.OPS["slice"](doubled, start_indices=(0, 0), limit_indices=(2, 2))
    zero = lc.asarray(np.zeros((2, 2)))
    start = lc.asarray(np.asarray(0))
    written = ops.OPS["dynamic_update_slice"](doubled, zero, start, start)
    late = ops.OPS["add"](early, early)
    program = linearize([written.node, late.node])
    got_written, got_late = (np.asarray(v) for v in interpreter.run(program, numpy_kernels=True))
    host = np.arange(12.0).reshape(3, 4) ** 2
    np.testing.assert_array_equal(got_late, 2 * host[:2, :2])
    host[:2, :2] = 0
    np.testing.assert_array_equal(got_written, host)


def test_point_scatter_kernel_takes_repeated_writes_of_one_value():
    """Element writes padded by repeating the last one (``write_elements``) run with the
    NumPy kernel (a declined kernel cost an eager XLA compile, ~0.3 s of heat_diffusion's
    first run); writes of different values to one element still decline (XLA leaves
    their order unspecified)."""
    attrs = {"update_window_dims": (), "inserted_window_dims": (0,),
             "scatter_dims_to_operand_dims": (0,), "mode": "fill"}
    kernel = interpreter.KERNELS["scatter"]
    x = np.zeros(6)
    padded = kernel(x, np.array([[1], [4], [4], [4]]), np.array([2.0, 3.0, 3.0, 3.0]), **attrs)
    np.testing.assert_array_equal(padded, [0, 2, 0, 0, 3, 0])
    assert kernel(x, np.array([[1], [1]]), np.array([2.0, 3.0]), **attrs) is None
    assert not x.any()  # not owned: the operand is left alone


_EXIT_DURING_COMPILE = """
import numpy as np
import lazycore as lc
from lazycore import numeric
lc.configure(tier="auto", interpret_wait_ms=float("inf"))  # never wait for it
x = lc.asarray(np.zeros((64, 64), np.float32))
block = lc.asarray(np.ones((62, 62), np.float32))
for _ in range(2):  # the second sighting queues a background compile (seconds: 60 writes)
    for _ in range(60):
        x = numeric.setitem(x, (slice(1, -1), slice(1, -1)), block)
    lc.sync([x])
print(float(lc.to_numpy(x).sum()))
"""


def test_exit_during_a_background_compile_is_clean():
    """A program that ends while a background compile runs waits for it and exits with
    status 0 (it used to stop waiting after LAZYCORE_EXIT_COMPILE_WAIT seconds, and the
    process aborted while XLA still compiled)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "LAZYCORE_EXIT_COMPILE_WAIT": "1", "LAZYCORE_PERSISTENT_CACHE": ""}
    out = subprocess.run([sys.executable, "-c", _EXIT_DURING_COMPILE], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "terminate called" not in out.stderr


def test_data_dependent_ops_interpret_with_numpy_kernels(tier, monkeypatch):
    """``nonzero``/``unique``/``unique_all`` run NumPy's kernels on the interpreter tier:
    eager ``jnp.nonzero``/``jnp.unique`` compile once per data-dependent size (0.2-0.8 s
    for every new count: a published NumPy program's first run was mostly that)."""
    import types

    tier("interpret")
    x_np = np.array([[3, 0, 1], [0, 3, 2]], np.int64)

    def jax_kernel(*args, **kwargs):
        raise AssertionError("the interpreter dispatched jax's kernel")

    lowered = dict(interpreter.OPS)
    for name in ("nonzero", "unique", "unique_all"):
        lowered[name] = types.SimpleNamespace(lower=jax_kernel)
    monkeypatch.setattr(interpreter, "OPS", lowered)
    x = lc.asarray(x_np)
    rows, cols = lc.numeric.nonzero(x)
    assert [lc.to_numpy(rows).tolist(), lc.to_numpy(cols).tolist()] == \
        [a.tolist() for a in np.nonzero(x_np)]
    assert lc.to_numpy(lc.numeric.unique(x)).tolist() == [0, 1, 2, 3]
    flat = ops.reshape(x, new_sizes=(6,))
    got = [lc.to_numpy(t) for t in ops.unique_all(flat, size=4)]
    want = np.unique(x_np.ravel(), return_index=True, return_inverse=True, return_counts=True)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == np.int64 and a.tolist() == b.tolist()


@pytest.mark.parametrize("descending", [False, True])
def test_sort_kernel_matches_xla_bit_for_bit(rng, descending):
    """lax.sort's order: stable, -0.0 equal to 0.0, NaN (either sign) last; several keys;
    payloads carried. Bitwise, so signed zeros and NaN payloads count."""
    f = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, 0.0, -0.0, np.inf, 3.0])
    keys = rng.integers(0, 3, (4, 6)).astype(np.int8)
    cases = [((f, np.arange(f.size)), 0, 1), ((keys, rng.standard_normal((4, 6)),
             np.arange(24).reshape(4, 6)), 1, 2),
             ((rng.integers(0, 2, 30).astype(bool), np.arange(30)), 0, 1)]
    for operands, dimension, num_keys in cases:
        outs = ops.sort(*[lc.asarray(x) for x in operands], dimension=dimension,
                        num_keys=num_keys, descending=descending)
        assert interpreter.KERNELS["sort"](*operands, dimension=dimension, num_keys=num_keys,
                                           descending=descending) is not None
        program = linearize([o.node for o in outs])
        by_numpy = interpreter.run(program, numpy_kernels=True)
        by_xla = interpreter.run(program, numpy_kernels=False)
        for a, b in zip(by_numpy, by_xla, strict=True):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_arithmetic_shift_of_unsigned_values_replicates_the_top_bit_as_xla():
    x = np.array([0x80, 0xF0, 0x7F, 1], np.uint8)
    out = ops.shift_right_arithmetic(lc.asarray(x), lc.asarray(np.full(4, 2, np.uint8)))
    program = linearize([out.node])
    by_numpy = np.asarray(interpreter.run(program, numpy_kernels=True)[0])
    np.testing.assert_array_equal(by_numpy, interpreter.run(program, numpy_kernels=False)[0])
    np.testing.assert_array_equal(by_numpy, [0xE0, 0xFC, 0x1F, 0])
