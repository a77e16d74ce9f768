"""Sub-programs: a graph traced once, then recorded as ONE node per call.

A frontend that is handed a whole graph ahead of time (PyTorch's ``torch.compile``
gives an FX graph) traces it once onto placeholder leaves; ``capture`` cuts the IR
between those placeholders and the outputs into a ``Subprogram``. Calling it records a
single multi-output ``call`` node whose static attribute is the captured program (hashed
once), so the per-call Python cost does not grow with the graph, and the call fuses with
whatever surrounds it into the step's one XLA program (the lowering runs the
sub-program as a nested ``jax.jit``, which XLA inlines).

Data checks the graph's ops registered while it was captured (index bounds) become
extra outputs, re-armed as pending checks on every call, so a bad index still raises
the frontend's error at the next barrier.

Random draws inside the graph (``rng_key`` nodes made by a ``random.Generator``) are
cut out as per-call operands: each call draws fresh keys from the generator, so a
captured dropout does not repeat its mask. Constants and device data the graph captured
are passed as the same leaves every call; so are the Python scalars it traced (params:
learning rates, betas), as one device vector per dtype made at capture: a compiled AdamW
step's 8 scalars per parameter were as many operands to record and to pack into a host
vector at every sync, and a new value (Dynamo recaptures for a new learning rate) still
gives the same program.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from . import config, metrics
from .autodiff import _cut_program
from .callsite import _call_site
from .errors import CaptureError
from .ir import LEAF_OPS, Aval, Frozen, Node
from .ops.registry import defop, interpret
from .tensor import Tensor


def _call_rule(*avals, spec):
    return spec[2]


def _call_lower(*args, spec):
    return tuple(_jitted(spec)(*args))


@lru_cache(maxsize=1024)
def _jitted(spec):
    import jax

    return jax.jit(lambda *xs: interpret(spec[0], _arguments(xs, *spec[3]), spec[1]))


def _arguments(xs: tuple, n_inputs: int, sources: tuple) -> list:
    """The cut program's arguments: the call's inputs, then each leaf from its source
    (``_scalar_vectors``): an operand, or an element of a scalar vector broadcast."""
    from jax import lax

    return [*xs[:n_inputs], *[xs[at] if element is None
                              else lax.broadcast_in_dim(xs[at][element], shape, ())
                              for at, element, shape in sources]]


def _scalar_vectors(leaves: list, n_inputs: int) -> tuple[list, tuple]:
    """(leaf operands, sources): the leaves with their scalar params replaced by one
    device vector per dtype, and where each leaf's value is found among the operands."""
    from .runtime import asarray

    operands, scalars, sources = [], {}, []
    for n in leaves:
        if n.op == "param" and np.ndim(n.value) == 0:
            group = scalars.setdefault(n.aval.dtype, [])
            sources.append((n.aval.dtype, len(group), n.aval.shape))
            group.append(n.value)
        else:
            sources.append((n_inputs + len(operands), None, ()))
            operands.append(n)
    vector_at = {dtype: n_inputs + len(operands) + i for i, dtype in enumerate(scalars)}
    sources = [(at if element is None else vector_at[at], element, shape)
               for at, element, shape in sources]
    return operands + [asarray(np.array(v, dtype)).node for dtype, v in scalars.items()], \
        tuple(sources)


call = defop("call", "program", _call_rule, _call_lower, multi_output=True)


def placeholder(aval: Aval, name: str = "input") -> Tensor:
    """A leaf standing for a sub-program input while it is traced. It holds no value:
    a sync that needs one (a data-dependent op in the graph) raises ``CaptureError``."""
    error = CaptureError(f"the value of graph {name} is not known while the graph is "
                         "captured (a data-dependent op inside a compiled graph)")
    return Tensor(Node("failed", (), (), Aval(tuple(aval.shape), aval.dtype), error))


class Captured:
    """What a capture collected besides the graph: data checks its ops registered."""

    def __init__(self):
        self.checks: list = []


@contextmanager
def capturing():
    """While a graph is traced for ``Subprogram``: the pending-op limit does not cut the
    trace (a cut would sync the placeholders, which hold no value), and data checks the
    ops register (index bounds) are collected, to be re-armed on every call (checks
    pending before it wait for the first sync after it). Observing a
    value computes only what it needs (``observe="value"``): the live values include
    the placeholders, so a shape-derived bound (``tf.shape(x)[1]``) stays computable."""
    from . import checks

    captured = Captured()
    limit, observe = metrics._pending_limit[0], config.settings.observe
    metrics._pending_limit[0], config.settings.observe = 10**18, "value"
    outer, checks.PENDING[:] = checks.PENDING[:], []  # a sync inside takes none of them
    checks.CAPTURING[0] += 1
    try:
        yield captured
    finally:
        checks.CAPTURING[0] -= 1
        metrics._pending_limit[0], config.settings.observe = limit, observe
        captured.checks, checks.PENDING[:] = checks.PENDING[:], outer


class Subprogram:
    """The IR between ``inputs`` (placeholders) and ``outputs``, callable on new inputs.

    ``generator``: the ``random.Generator`` whose draws inside the graph are re-drawn on
    every call (None: the graph must not draw), or a callable giving, for each
    ``rng_key`` node of the graph, the object (``next_key()``) to re-draw it from -- a
    frontend with several random streams keeps each draw on its own stream. ``site``: the user's ``file:line`` the
    re-armed checks report (None: found on the stack at each call, which costs a
    stack walk per check -- milliseconds under autograd's engine)."""

    def __init__(self, inputs: list[Tensor], outputs: list[Tensor], generator=None,
                 checks=(), site: str | None = None):
        in_nodes = [t.node for t in inputs]
        self.n_outputs = len(outputs)
        self._checks = [(c.error_type, c.message, c.op) for c in checks]
        self.site = site
        out_nodes = [t.node for t in outputs] + [c.flag.node for c in checks]
        keys = _rng_keys(out_nodes, in_nodes)
        if keys and generator is None:
            raise CaptureError("the graph draws random numbers but no generator was given")
        stop = frozenset(id(k) for k in keys)
        program, leaves, _, outs = _cut_program(out_nodes, in_nodes, stop)
        for leaf in leaves:
            if leaf.op == "failed" and id(leaf) not in stop:
                raise CaptureError(f"the graph depends on a value that failed or is not "
                                   f"an input: {leaf.value}")
        self.n_inputs = len(in_nodes)
        self.n_ops = len(program)
        streams = generator if callable(generator) and not hasattr(generator, "next_key") \
            else (lambda node: generator)
        leaves, sources = _scalar_vectors(leaves, self.n_inputs)
        # leaf operands passed every call; None marks a slot re-drawn from its stream
        self._leaves = [None if id(n) in stop else Tensor(n) for n in leaves]
        self._streams = [streams(n) if id(n) in stop else None for n in leaves]
        self._draws = sum(1 for t in self._leaves if t is None)
        self._spec = Frozen((program, outs, tuple(n.aval for n in out_nodes),
                             (self.n_inputs, sources)))

    def __call__(self, *inputs: Tensor) -> tuple[Tensor, ...]:
        """Record one ``call`` node over ``inputs``; returns one Tensor per output."""
        if len(inputs) != self.n_inputs:
            raise TypeError(f"sub-program takes {self.n_inputs} inputs, got {len(inputs)}")
        leaves = self._leaves
        if self._draws:
            leaves = [s.next_key() if t is None else t
                      for t, s in zip(leaves, self._streams, strict=True)]
        if not self._spec[1]:
            return ()
        values = call(*inputs, *leaves, spec=self._spec)
        if not self._checks:
            return values
        from .checks import PENDING, Check

        results = values[:self.n_outputs]
        site, guards = self.site or _call_site(), tuple([r.node for r in results])
        PENDING.extend(Check(flag, *check, site, guards)
                       for check, flag in zip(self._checks, values[self.n_outputs:], strict=True))
        return results


def _rng_keys(outputs: list[Node], inputs: list[Node]) -> list[Node]:
    """``rng_key`` nodes between the inputs and the outputs (in first-reached order)."""
    stop = {id(n) for n in inputs}
    seen: set[int] = set()
    keys = []
    stack = list(outputs)
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in stop or node.op in LEAF_OPS:
            continue
        seen.add(id(node))
        if node.op == "rng_key":
            keys.append(node)
            continue
        stack.extend(node.operands)
    return keys
