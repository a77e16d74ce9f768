"""The sync log's causes are what the program did, in every frontend.

Each test runs a real observation (``.item()``, ``print``, ``if x > 0:``, a host copy,
a fallback op, the barrier) with the debug log on and reads the printed
``cause=... site=...`` line: nothing passes a cause by hand.
"""

import re
import sys

import numpy as np
import pytest

import lazycore as lc

_LINE = re.compile(r"^\[lazycore\] sync cause=(\S+) site=(\S+):(\d+) ")


@pytest.fixture
def logged(capsys):
    """Run a snippet with ``LAZYCORE_DEBUG`` on; returns [(cause, file, line)] it printed."""
    def run(fn):
        lc.configure(debug=True)
        try:
            capsys.readouterr()
            fn()
            err = capsys.readouterr().err
        finally:
            lc.configure(debug=False)
        out = []
        for line in err.splitlines():
            m = _LINE.match(line)
            if m:
                out.append((m.group(1), m.group(2), int(m.group(3))))
        return out
    return run


def _here() -> int:
    return sys._getframe(1).f_lineno


def _only(records, line):
    """The causes logged at ``line`` of this file."""
    return [c for c, f, n in records if f == __file__ and n == line]


# -- lazy_torch ---------------------------------------------------------------------------

torch = pytest.importorskip("torch")
lazy_torch = pytest.importorskip("lazy_torch")


def test_torch_causes(logged):
    dev = lazy_torch.device()
    x = torch.ones(3, device=dev)
    lines = {}

    def program():
        (x * 2).sum().item(); lines["item"] = _here()  # noqa: E702
        float((x * 2).sum()); lines["float"] = _here()  # noqa: E702
        print(x * 3); lines["print"] = _here()  # noqa: E702, T201
        if (x * 4).sum() > 0:
            lines["if"] = _here() - 1
        (x * 5).cpu(); lines["cpu"] = _here()  # noqa: E702
        np.asarray(x * 6); lines["asarray"] = _here()  # noqa: E702
        (x * 7).numpy(); lines["numpy"] = _here()  # noqa: E702
        torch.kthvalue(x * 8, 2); lines["fallback"] = _here()  # noqa: E702
        _ = x * 9
        lazy_torch.sync(); lines["sync"] = _here()  # noqa: E702
        _ = x * 10
        lazy_torch.mark_step(); lines["mark_step"] = _here()  # noqa: E702

    records = logged(program)
    assert _only(records, lines["item"]) == ["item"]
    assert _only(records, lines["float"]) == ["item"]
    assert _only(records, lines["print"]) == ["print"]
    assert _only(records, lines["if"]) == ["control_flow"]
    assert _only(records, lines["cpu"]) == ["host_transfer"]
    assert _only(records, lines["asarray"]) == ["host_transfer"]
    assert _only(records, lines["numpy"]) == ["host_transfer"]
    assert _only(records, lines["fallback"]) == ["fallback:aten::kthvalue.default"]
    assert _only(records, lines["sync"]) == ["explicit"]
    assert _only(records, lines["mark_step"]) == ["mark_step"]
    assert lc.metrics.counters()["sync::control_flow"] >= 1


def test_torch_allow_sync_false_raises_implicit_sync_error():
    x = torch.ones(3, device=lazy_torch.device())
    attempts = {"item": lambda: (x * 2).sum().item(),
                "control_flow": lambda: bool((x * 2).sum() > 0),
                "host_transfer": lambda: (x * 2).cpu()}
    for cause, attempt in attempts.items():
        with lc.allow_sync(False), pytest.raises(lc.ImplicitSyncError) as info:
            attempt()
        assert info.value.cause == cause
        assert info.value.site.startswith(__file__ + ":")
        assert isinstance(info.value, RuntimeError)  # torch users' except clauses still work
    with lc.allow_sync(False):
        y = x * 3
        lazy_torch.sync()  # the explicit barrier is allowed
    assert (y.cpu() == 3).all()


# -- lazy_numpy ---------------------------------------------------------------------------

def test_numpy_causes(logged):
    lnp = pytest.importorskip("lazy_numpy")
    a = lnp.asarray(np.ones(3))
    lines = {}

    def program():
        (a * 2).sum().item(); lines["item"] = _here()  # noqa: E702
        print(a * 3); lines["print"] = _here()  # noqa: E702, T201
        if (a * 4).sum() > 0:
            lines["if"] = _here() - 1
        np.asarray(a * 5); lines["asarray"] = _here()  # noqa: E702
        int((a * 6).sum()); lines["int"] = _here()  # noqa: E702
        np.gcd(lnp.asarray(np.arange(3)) * 2, 4); lines["fallback"] = _here()  # noqa: E702
        _ = a * 7
        lnp.sync(); lines["sync"] = _here()  # noqa: E702

    records = logged(program)
    assert _only(records, lines["item"]) == ["item"]
    assert _only(records, lines["print"]) == ["print"]
    assert _only(records, lines["if"]) == ["control_flow"]
    assert _only(records, lines["asarray"]) == ["host_transfer"]
    assert _only(records, lines["int"]) == ["item"]
    assert _only(records, lines["fallback"]) == ["fallback:numpy.gcd"]
    assert _only(records, lines["sync"]) == ["explicit"]


# -- lazy_tf --------------------------------------------------------------------------------

def test_tf_causes(logged):
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    x = ltf.convert_to_tensor(np.ones((2, 2), np.float32))
    lines = {}

    def program():
        float(tf.reduce_sum(x * 2)); lines["item"] = _here()  # noqa: E702
        print(x * 3); lines["print"] = _here()  # noqa: E702, T201
        if tf.reduce_sum(x * 4) > 0:
            lines["if"] = _here() - 1
        (x * 5).numpy(); lines["numpy"] = _here()  # noqa: E702
        np.asarray(x * 6); lines["asarray"] = _here()  # noqa: E702
        tf.linalg.expm(x * 7); lines["fallback"] = _here()  # noqa: E702
        _ = x * 8
        ltf.sync(); lines["sync"] = _here()  # noqa: E702

    records = logged(program)
    assert _only(records, lines["item"]) == ["item"]
    assert _only(records, lines["print"]) == ["print"]
    assert _only(records, lines["if"]) == ["control_flow"]
    assert _only(records, lines["numpy"]) == ["host_transfer"]
    assert _only(records, lines["asarray"]) == ["host_transfer"]
    if ltf.fallback_counts().get("linalg.expm"):  # still no lazy kernel (the usual case)
        assert _only(records, lines["fallback"]) == ["fallback:linalg.expm"]
    else:  # expm became lazy: nothing synced there
        assert _only(records, lines["fallback"]) == []
    assert _only(records, lines["sync"]) == ["explicit"]
    documented = set(lc.diagnostics.CAUSES)
    assert all(c in documented or c.startswith("fallback:") for c, _, _ in records)
