"""Differential fuzzing engine: one random program, run eagerly and lazily, compared.

Each frontend describes its ops as functions written against its framework's own API
(``torch.add``, ``np.add``, ``tf.add``); because lazy tensors honour that API, the same
function runs on eager and on lazy values. A program is a list of steps over a growing
pool of values; after every step both runs must agree on whether (and with what
exception type) it raised, and at the end every value in the pool must match.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# CI runs a few hundred programs per frontend; ``nox -s fuzz`` sets FUZZ_EXAMPLES higher.
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
FUZZ_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                         suppress_health_check=list(HealthCheck), database=None)

SHAPES = [(3, 4), (4,), (1, 4), (3, 1), (), (2, 3, 4)]


@dataclass
class Frontend:
    name: str
    to_eager: Callable
    to_lazy: Callable
    to_numpy: Callable
    sync: Callable
    unary: dict[str, Callable]
    binary: dict[str, Callable]
    inplace: dict[str, Callable] = field(default_factory=dict)  # f(dst, src) mutates dst
    views: dict[str, Callable] = field(default_factory=dict)
    truth: Callable = bool  # Python ``if`` on a 0-d value
    reduce_for_if: Callable | None = None
    dtypes: tuple = (np.float32,)
    rtol: float = 2e-4
    atol: float = 2e-5


@st.composite
def programs(draw, fe: Frontend, max_steps: int = 12):
    n_inputs = draw(st.integers(2, 4))
    inputs = []
    for _ in range(n_inputs):
        shape = draw(st.sampled_from(SHAPES))
        dtype = draw(st.sampled_from(fe.dtypes))
        seed = draw(st.integers(0, 2**16))
        inputs.append((shape, np.dtype(dtype).name, seed))
    steps = []
    pool = n_inputs
    for _ in range(draw(st.integers(1, max_steps))):
        kinds = ["unary", "binary", "binary", "sync", "if"]
        if fe.inplace:
            kinds += ["inplace", "inplace"]
        if fe.views:
            kinds += ["view"]
        kind = draw(st.sampled_from(kinds))
        pick = st.integers(0, pool - 1)
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(fe.unary))), draw(pick)))
            pool += 1
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(fe.binary))), draw(pick),
                          draw(pick)))
            pool += 1
        elif kind == "inplace":
            steps.append(("inplace", draw(st.sampled_from(sorted(fe.inplace))), draw(pick),
                          draw(pick)))
        elif kind == "view":
            steps.append(("view", draw(st.sampled_from(sorted(fe.views))), draw(pick)))
            pool += 1
        elif kind == "if":
            steps.append(("if", draw(pick), draw(st.sampled_from(sorted(fe.unary))),
                          draw(st.sampled_from(sorted(fe.unary)))))
            pool += 1
        else:
            steps.append(("sync",))
    return inputs, steps


def _make_inputs(spec):
    arrays = []
    for shape, dtype, seed in spec:
        rng = np.random.default_rng(seed)
        if np.dtype(dtype).kind in "iu":
            arrays.append(rng.integers(-4, 5, size=shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def _attempt(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return None, e


def _same_error(eager_exc, lazy_exc, fe, step):
    if eager_exc is None and lazy_exc is None:
        return
    assert eager_exc is not None, f"{fe.name} {step}: lazy raised {lazy_exc!r}, eager did not"
    assert lazy_exc is not None, f"{fe.name} {step}: eager raised {eager_exc!r}, lazy did not"
    assert isinstance(lazy_exc, type(eager_exc)) or isinstance(eager_exc, type(lazy_exc)), (
        f"{fe.name} {step}: eager raised {type(eager_exc).__name__}: {eager_exc}; "
        f"lazy raised {type(lazy_exc).__name__}: {lazy_exc}")


def run_program(fe: Frontend, program) -> None:
    spec, steps = program
    arrays = _make_inputs(spec)
    eager = [fe.to_eager(a.copy()) for a in arrays]
    lazy = [fe.to_lazy(a.copy()) for a in arrays]
    for step in steps:
        kind = step[0]
        if kind == "sync":
            fe.sync()
            continue
        if kind == "unary":
            fn, args = fe.unary[step[1]], (step[2],)
        elif kind == "binary":
            fn, args = fe.binary[step[1]], (step[2], step[3])
        elif kind == "view":
            fn, args = fe.views[step[1]], (step[2],)
        elif kind == "inplace":
            fn, args = fe.inplace[step[1]], (step[2], step[3])
        else:  # "if": Python control flow on a tensor value
            src, on_true, on_false = step[1], fe.unary[step[2]], fe.unary[step[3]]
            cond_e, exc_e = _attempt(lambda v: fe.truth(fe.reduce_for_if(v)), eager[src])
            if exc_e is None:
                margin = float(np.abs(fe.to_numpy(fe.reduce_for_if.margin(eager[src]))))
                if margin < 1e-3:  # too close to call in float32: skip the step
                    eager.append(eager[src])  # keep pool indices aligned
                    lazy.append(lazy[src])
                    continue
            cond_l, exc_l = _attempt(lambda v: fe.truth(fe.reduce_for_if(v)), lazy[src])
            _same_error(exc_e, exc_l, fe, step)
            if exc_e is not None:
                eager.append(eager[src])
                lazy.append(lazy[src])
                continue
            assert cond_e == cond_l, f"{fe.name} {step}: branch differs"
            fn = on_true if cond_e else on_false
            args = (src,)
        out_e, exc_e = _attempt(fn, *[eager[i] for i in args])
        out_l, exc_l = _attempt(fn, *[lazy[i] for i in args])
        _same_error(exc_e, exc_l, fe, step)
        if exc_e is None and kind != "inplace":
            eager.append(out_e)
            lazy.append(out_l)
        elif exc_e is not None and kind != "inplace":
            eager.append(eager[args[0]])  # keep pool indices aligned
            lazy.append(lazy[args[0]])
    for i, (e, lz) in enumerate(zip(eager, lazy, strict=True)):
        want, got = fe.to_numpy(e), fe.to_numpy(lz)
        assert got.shape == want.shape, f"{fe.name} value {i}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{fe.name} value {i}: dtype {got.dtype} != {want.dtype}"
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=fe.rtol, atol=fe.atol, equal_nan=True,
                                       err_msg=f"{fe.name} value {i} after {steps}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{fe.name} value {i}")


class Reducer:
    """``fn(x) -> 0-d bool`` for the ``if`` step, plus ``margin(x)`` (distance from the
    decision boundary, so near-ties are skipped instead of flaking)."""

    def __init__(self, decide, margin):
        self._decide, self.margin = decide, margin

    def __call__(self, x):
        return self._decide(x)
