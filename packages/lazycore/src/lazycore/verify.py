"""``lc.verify()`` / ``LAZYCORE_VERIFY=1``: check every compiled program op by op.

Each program a sync runs is evaluated a second time, one op at a time, eagerly, on
the same inputs: each op through an independent NumPy kernel where the interpreter
tier has one whose semantics are XLA's (``interpreter.KERNELS``: elementwise math,
reductions, shape ops, dot, gather...), else through its ``jax.lax`` lowering
dispatched on its own (no fusion, no packing of parameters, no buffer donation). When
an output differs beyond its dtype's tolerance, every intermediate of the compiled
path is computed and each op is re-run on the compiled values of its operands: the
first op whose compiled result differs is reported with the ``file:line`` that
recorded it and both values, as ``VerifyError`` (or a warning:
``verify(action="warn")``). Reports are kept in ``reports()``.

Tolerances are per dtype (``_TOLERANCE``), the absolute one scaled by the largest
magnitude that flowed into the value (a sum that cancels is compared at the scale of
its terms, not of its result).

It costs an eager evaluation per program run (and a second compile when something
differs): a debugging mode, like ``torch.autograd.detect_anomaly``.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import jax
import numpy as np

from . import interpreter, leaks, lowering, metrics, sources
from .config import settings
from .errors import VerifyError
from .ir import Aval, host_value

#: (rtol, atol) per dtype size; atol is scaled by the largest magnitude that flowed in,
#: so a sum that XLA reassociates is compared relative to its magnitude.
_TOLERANCE = {2: (1e-2, 1e-2), 4: (1e-4, 1e-5), 8: (1e-9, 1e-12)}
_state = {"action": "raise"}
_reports: list = []
_MAX_REPORTS = 100


@dataclass(frozen=True)
class Mismatch:
    """The first op whose compiled result differs from its eager evaluation."""

    op: str
    site: str            # the user's line that recorded the op ("<unknown>" if not recorded)
    sync_site: str       # the line whose sync ran the program
    cause: str
    expected: np.ndarray  # op by op, eagerly
    actual: np.ndarray    # the compiled program
    fused_only: bool      # no single op differs: the fused program as a whole does

    def __str__(self) -> str:
        expected, actual = np.asarray(self.expected), np.asarray(self.actual)
        where = ""
        if expected.shape == actual.shape and expected.size:
            with np.errstate(all="ignore"):
                diff = np.abs(expected.astype(np.float64) - actual.astype(np.float64))
            if np.isfinite(diff).any():
                idx = tuple(int(i) for i in np.unravel_index(int(np.nanargmax(diff)), diff.shape))
                where = f"; largest difference {float(diff[idx]):.6g} at index {idx}"
        what = ("the fused program's output computed by" if self.fused_only
                else "the result of op")
        return (f"lazycore verify: {what} {self.op!r} recorded at {self.site} differs from"
                f" its op-by-op eager evaluation (program run by the sync at"
                f" {self.sync_site}, cause {self.cause}){where}\n"
                f"  compiled: {_show(actual)}\n  eager:    {_show(expected)}")


def _show(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), threshold=12, edgeitems=3, precision=6,
                           max_line_width=100).replace("\n", "\n            ")


@contextmanager
def verify(action: str = "raise"):
    """Check every program run inside the block against op-by-op eager evaluation.

    ``action``: ``"raise"`` a ``VerifyError`` at the sync (the values stay pending) or
    ``"warn"`` (a ``RuntimeWarning``; the compiled values are kept). Ops recorded
    inside the block carry their ``file:line``.

    >>> import numpy as np, lazycore as lc
    >>> with lc.verify():
    ...     y = lc.to_numpy(lc.ops.tanh(lc.asarray(np.ones(3))))
    >>> lc.verify.reports()
    []
    """
    if action not in ("raise", "warn"):
        raise ValueError(f"action must be 'raise' or 'warn', got {action!r}")
    previous = settings.verify, _state["action"]
    settings.verify, _state["action"] = True, action
    leaks.select_op_call()
    try:
        yield
    finally:
        settings.verify, _state["action"] = previous
        leaks.select_op_call()


def reports() -> list[Mismatch]:
    """Mismatches found so far (bounded), oldest first."""
    return list(_reports)


def clear() -> None:
    _reports.clear()


verify.reports = reports  # ``lc.verify`` is the context manager; its reports hang off it
verify.clear = clear


# -- the check the runtime calls after running a program --------------------------------

def check_program(program, outputs, sync_site: str, cause: str) -> None:
    metrics.inc("verified_programs")
    inputs = [_input_value(n) for n in program.inputs]
    eager, scale = _evaluate(program, inputs)
    bad = [p for p, out in zip(program.output_positions, outputs, strict=True)
           if not _close(out, eager[p], program.nodes[p].aval, scale[p])]
    if not bad:
        return
    mismatch = _locate(program, inputs, bad[0], eager, scale, sync_site, cause)
    metrics.inc("verify_mismatches")
    if len(_reports) < _MAX_REPORTS:
        _reports.append(mismatch)
    if _state["action"] == "warn":
        warnings.warn(str(mismatch), RuntimeWarning, stacklevel=2)
        return
    raise VerifyError(str(mismatch), mismatch=mismatch)


def _input_value(node):
    """A leaf's value on the device (a param's or const's host value uploaded)."""
    if node.op == "data":
        return node.value
    return jax.device_put(np.asarray(host_value(node), dtype=node.aval.dtype))


def _evaluate(program, inputs, compiled_env=None) -> tuple[list, list]:
    """Each node's value, one op at a time, and the largest finite magnitude that flowed
    into it. With ``compiled_env``, each op runs on the compiled values of its operands
    (to find the op that differs)."""
    env = _inputs_env(program, inputs)
    scale: list = [0.0] * len(program.nodes)
    source = env if compiled_env is None else compiled_env
    for i, (node, ops_pos) in enumerate(zip(program.nodes, program.operand_positions,
                                            strict=True)):
        if node.op in ("data", "param", "const"):
            pass
        elif node.op == "tuple_get":
            env[i] = source[ops_pos[0]][dict(node.attrs)["index"]]
        else:
            env[i] = _reference_op(node, [source[p] for p in ops_pos])
        scale[i] = max([_magnitude(env[i])] + [scale[p] for p in ops_pos])
    return env, scale


def _reference_op(node, operands):
    """One op on its own: the interpreter's NumPy kernel where it has one (an
    implementation independent of the lowering), else the lowering, eagerly."""
    return interpreter._run_op(node, operands, True)


def _magnitude(value) -> float:
    if isinstance(value, tuple | list):
        return max([_magnitude(v) for v in value], default=0.0)
    a = np.asarray(value)
    if a.size == 0 or a.dtype.kind not in "biufc" and a.dtype.name != "bfloat16":
        return 0.0
    a = np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    finite = a[np.isfinite(a)]
    return float(finite.max()) if finite.size else 0.0


def _compiled_values(program, inputs) -> list:
    """Every node's value as the compiled path computes it (each one an output)."""
    positions = [i for i, n in enumerate(program.nodes) if not n.is_leaf]
    probe = lowering.Program(program.nodes, program.operand_positions,
                             program.input_positions, positions, None, program.inputs)
    values = jax.jit(lowering.to_function(probe))(*inputs)
    env: list = _inputs_env(program, inputs)
    for p, v in zip(positions, values, strict=True):
        env[p] = v
    return env


def _inputs_env(program, inputs) -> list:
    env: list = [None] * len(program.nodes)
    for pos, value in zip(program.input_positions, inputs, strict=True):
        env[pos] = value
    for i, node in enumerate(program.nodes):
        if node.op == "const":
            env[i] = _input_value(node)
    return env


def _locate(program, inputs, bad_output: int, eager, scale, sync_site: str,
            cause: str) -> Mismatch:
    compiled = _compiled_values(program, inputs)
    rerun, rerun_scale = _evaluate(program, inputs, compiled)
    for i, node in enumerate(program.nodes):
        if node.is_leaf or node.op == "tuple_get":
            continue
        if not _close(compiled[i], rerun[i], node.aval, rerun_scale[i]):
            return _mismatch(node, sync_site, cause, rerun[i], compiled[i], False)
    node = program.nodes[bad_output]
    actual = compiled[bad_output]
    if _close(actual, eager[bad_output], node.aval, scale[bad_output]):  # all ops agree
        actual = None
    return _mismatch(node, sync_site, cause, eager[bad_output], actual, True)


def _mismatch(node, sync_site, cause, expected, actual, fused_only) -> Mismatch:
    target = node.operands[0] if node.op == "tuple_get" else node
    site = sources.site_of(target) or sources.site_of(node) or "<unknown>"
    actual = np.asarray(expected if actual is None else _first(actual))
    return Mismatch(target.op, site, sync_site, cause, np.asarray(_first(expected)),
                    actual, fused_only)


def _first(value):
    return value[0] if isinstance(value, tuple | list) else value


def _close(actual, expected, aval, scale: float = 0.0) -> bool:
    """Equal within ``aval``'s dtype tolerance; ``atol`` is scaled by ``scale`` (the
    largest magnitude that flowed into the value) or the expected value's own."""
    if not isinstance(aval, Aval):  # a multi-output op: a tuple of avals (Aval is a tuple too)
        return all(_close(a, e, v, scale)
                   for a, e, v in zip(actual, expected, aval, strict=True))
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return False
    kind = aval.dtype.kind
    if kind not in "fc" and aval.dtype.name != "bfloat16":
        return np.array_equal(a, e)
    rtol, atol = _TOLERANCE.get(aval.dtype.itemsize // (2 if kind == "c" else 1), _TOLERANCE[4])
    a64 = a.astype(np.complex128 if kind == "c" else np.float64)
    e64 = e.astype(np.complex128 if kind == "c" else np.float64)
    finite = np.isfinite(e64)
    own = float(np.max(np.abs(e64[finite]))) if finite.any() else 0.0
    return bool(np.allclose(a64, e64, rtol=rtol, atol=atol * max(1.0, scale, own),
                            equal_nan=True))
