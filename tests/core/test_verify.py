"""``lc.verify()``: every program is checked against its op-by-op eager evaluation."""

import dataclasses
import sys
import warnings

import numpy as np
import pytest

import lazycore as lc
from lazycore import lowering, ops
from lazycore import numeric as nm
from lazycore.ops.registry import OPS


@pytest.fixture(autouse=True)
def _clean_reports():
    lc.verify.clear()
    yield
    lc.verify.clear()


@pytest.fixture
def wrong_tanh(monkeypatch):
    """tanh lowered 1% too large, in the compiled path only (``to_function`` builds the
    jitted program; verify's eager evaluation calls each op's lowering directly)."""
    real = lowering.to_function

    def buggy(program):
        saved = OPS["tanh"]
        OPS["tanh"] = dataclasses.replace(saved, lower=lambda x: saved.lower(x) * 1.01)
        try:
            return real(program)
        finally:
            OPS["tanh"] = saved

    monkeypatch.setattr(lowering, "to_function", buggy)


def _line() -> int:
    return sys._getframe(1).f_lineno


def test_a_correct_program_verifies_and_keeps_its_values():
    x = lc.asarray(np.linspace(-2, 2, 12).reshape(3, 4).astype(np.float32))
    w = lc.asarray(np.ones((4, 4), np.float32))
    with lc.verify():
        y = nm.softmax(nm.matmul(x, ops.exp(w)), axis=-1)
        w.assign(ops.tanh(w))  # an overwritten input (donated outside verify)
        lc.sync()
        got = lc.to_numpy(y)
    assert lc.metrics.counters()["verified_programs"] >= 1
    assert lc.verify.reports() == []
    ref = np.exp(np.ones((4, 4)))
    logits = np.linspace(-2, 2, 12).reshape(3, 4) @ ref
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(got, expected / expected.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(lc.to_numpy(w), np.tanh(np.ones((4, 4))), rtol=1e-6)


def test_an_injected_wrong_lowering_is_named_with_its_line(wrong_tanh):
    x = lc.asarray(np.linspace(-1, 1, 6).reshape(2, 3))
    with lc.verify():
        y = ops.exp(x)
        z = ops.tanh(y); tanh_line = _line()  # noqa: E702
        loss = nm.sum(ops.mul(z, z))
        sync_line = _line() + 2
        with pytest.raises(lc.VerifyError) as info:
            lc.to_numpy(loss)
    m = info.value.mismatch
    assert m.op == "tanh" and not m.fused_only
    assert m.site == f"{__file__}:{tanh_line}"
    assert m.sync_site == f"{__file__}:{sync_line}"
    expected = np.tanh(np.exp(np.linspace(-1, 1, 6).reshape(2, 3)))
    np.testing.assert_allclose(m.expected, expected, rtol=1e-12)  # eager: the true value
    np.testing.assert_allclose(m.actual, expected * 1.01, rtol=1e-12)  # what XLA ran
    text = str(info.value)
    assert f"{__file__}:{tanh_line}" in text and "compiled:" in text and "eager:" in text
    assert isinstance(info.value, RuntimeError)
    assert lc.verify.reports() == [m]


def test_a_wrong_lowering_everywhere_is_caught_by_the_numpy_reference(monkeypatch):
    """The lowering itself is wrong (compiled and eager jax agree on the wrong value):
    the op's independent NumPy kernel is the reference."""
    good = OPS["tanh"]
    monkeypatch.setitem(OPS, "tanh", dataclasses.replace(good, lower=lambda x: good.lower(x) + 0.5))
    x = lc.asarray(np.linspace(-1, 1, 5))
    with lc.verify():
        y = ops.tanh(ops.mul(x, x)); line = _line()  # noqa: E702
        with pytest.raises(lc.VerifyError) as info:
            lc.to_numpy(y)
    assert info.value.mismatch.op == "tanh" and info.value.site == f"{__file__}:{line}"
    np.testing.assert_allclose(info.value.mismatch.expected, np.tanh(np.linspace(-1, 1, 5) ** 2))


def test_no_false_alarm_on_reductions_that_cancel_and_mixed_dtypes(rng):
    """float32 sums whose terms cancel, a matmul, casts, integer ops and a softmax verify
    clean: tolerances scale with the magnitudes that flowed in."""
    big = rng.standard_normal((64, 257)).astype(np.float32) * 1e4
    x = lc.asarray(np.concatenate([big, -big[:, ::-1]], axis=1))
    i = lc.asarray(rng.integers(-50, 50, (8, 8)))
    with lc.verify():
        s = nm.sum(x, axis=1)
        m = nm.matmul(x, nm.transpose(x))
        k = nm.sum(ops.mul(i, i), axis=0)
        p = nm.softmax(nm.elementwise("mul", nm.cast(m, np.float32), 1e-9), axis=-1)
        lc.to_numpy_many([s, m, k, p])
    assert lc.verify.reports() == []


def test_warn_keeps_the_compiled_values(wrong_tanh):
    x = lc.asarray(np.zeros(3) + 0.5)
    with lc.verify(action="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = lc.to_numpy(ops.tanh(x))
    assert any("op 'tanh'" in str(w.message) for w in caught)
    np.testing.assert_allclose(got, np.tanh(0.5) * 1.01)


def test_the_wrong_lowering_goes_unnoticed_without_verify(wrong_tanh, monkeypatch):
    """The point of the mode: nothing else would have caught it (compiled at once, not
    run by the interpreter tier first)."""
    monkeypatch.setattr(lc.settings, "tier", "compile", raising=False)
    got = lc.to_numpy(ops.tanh(lc.asarray(np.full(2, 0.5))))
    np.testing.assert_allclose(got, np.tanh(0.5) * 1.01)
    assert lc.metrics.counters().get("verified_programs", 0) == 0


def test_tolerance_follows_the_dtype():
    from lazycore.verify import _close

    f32 = lc.Aval((2,), np.dtype(np.float32))
    assert _close(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0 + 1e-6]), f32)
    assert not _close(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.01]), f32)
    i32 = lc.Aval((2,), np.dtype(np.int32))
    assert not _close(np.array([1, 2]), np.array([1, 3]), i32)
    f64 = lc.Aval((1,), np.dtype(np.float64))
    assert not _close(np.array([1.0]), np.array([1.0 + 1e-6]), f64)
    assert _close(np.array([np.nan]), np.array([np.nan]), f64)


def test_verify_restores_the_setting():
    with lc.verify():
        assert lc.settings.verify
    assert not lc.settings.verify
    with pytest.raises(ValueError):
        with lc.verify(action="ignore"):
            pass
