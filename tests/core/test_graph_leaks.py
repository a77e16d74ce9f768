"""Graph-leak warnings: ops recorded in lc.data_loading()/lc.logging_region() that run in
a step's program warn (GraphLeakWarning) with the region, the op count and both lines."""

import warnings

import numpy as np
import pytest

import lazycore as lc
from lazycore import ops


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


@pytest.fixture(autouse=True)
def _fresh():
    lc.leaks.reset()
    yield
    lc.leaks.reset()


def _load(raw, materialize: bool):
    with lc.data_loading():
        x = lc.asarray(raw)
        x = ops.mul(x, x)  # MARK-first-load-op
        x = ops.add(x, x)
        if materialize:
            lc.sync()  # the batch is data before the step starts
    return x


def _train(materialize: bool, steps: int = 2):
    w = lc.asarray(np.ones(3))
    for i in range(steps):
        x = _load(np.arange(3.0) + i, materialize)
        w = ops.sub(w, ops.mul(x, w))
        lc.sync()  # MARK-step-sync
    return lc.to_numpy(w)


def test_loading_that_leaks_into_the_step_warns_with_both_lines():
    before = lc.metrics.counters().get("graph_leaks", 0)
    with pytest.warns(lc.GraphLeakWarning) as caught:
        leaked = _train(materialize=False)
    leaks = [w for w in caught if issubclass(w.category, lc.GraphLeakWarning)]
    assert len(leaks) == 1  # once per (sync site, region), not once per step
    message = str(leaks[0].message)
    assert "'data_loading' region" in message
    assert "2 ops" in message
    assert f"{__file__}:{_line_of('MARK-first-load-op')}" in message
    assert f"{__file__}:{_line_of('MARK-step-sync')}" in message
    assert "lc.DeviceLoader" in message
    assert leaks[0].filename == __file__ and leaks[0].lineno == _line_of("MARK-step-sync")
    assert lc.metrics.counters()["graph_leaks"] - before == 2  # counted every step
    with warnings.catch_warnings():
        warnings.simplefilter("error", lc.GraphLeakWarning)
        clean = _train(materialize=True)
    np.testing.assert_allclose(leaked, clean)  # the mark changes nothing computed


def test_materialized_batch_does_not_warn():
    before = lc.metrics.counters().get("graph_leaks", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lc.GraphLeakWarning)
        _train(materialize=True)
    assert lc.metrics.counters().get("graph_leaks", 0) == before


def test_logging_region_leak_names_the_region_and_decorator_form():
    @lc.logging_region()
    def running_mean(acc, loss):
        return ops.add(acc, loss)

    w = lc.asarray(np.ones(2))
    acc = lc.asarray(np.zeros(2))
    with pytest.warns(lc.GraphLeakWarning, match="1 op recorded in the 'logging' region"):
        loss = ops.mul(w, w)
        acc = running_mean(acc, lc.asarray(np.ones(2)))
        w = ops.sub(w, loss)
        lc.sync()
    np.testing.assert_allclose(lc.to_numpy(acc), [1.0, 1.0])


def test_no_region_no_warning_and_plain_op_call():
    plain = lc.ops.registry.OpDef.__call__
    with lc.mark_region("data_loading"):
        assert lc.ops.registry.OpDef.__call__ is not plain
    assert lc.ops.registry.OpDef.__call__ is plain  # no cost once every region is left
    before = lc.metrics.counters().get("graph_leaks", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lc.GraphLeakWarning)
        w = lc.asarray(np.ones(3))
        for _ in range(2):
            w = ops.add(w, w)
            assert w.node not in lc.leaks.marks
            lc.sync()
    assert lc.metrics.counters().get("graph_leaks", 0) == before
    np.testing.assert_allclose(lc.to_numpy(w), [4.0, 4.0, 4.0])


def test_region_survives_a_settings_change_inside_it():
    with lc.data_loading():
        with lc.verify():
            x = ops.exp(lc.asarray(np.zeros(2)))
    with pytest.warns(lc.GraphLeakWarning):
        lc.to_numpy(ops.add(x, x))


def test_bad_region_name_is_a_type_error():
    with pytest.raises(TypeError):
        lc.mark_region("")
