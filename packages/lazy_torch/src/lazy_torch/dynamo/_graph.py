"""One FX ATen graph (AOTAutograd's forward, backward or inference graph) run on lazy
tensors at a constant Python cost per call.

The first call with a new input signature (shapes, dtypes, layouts, integer values)
*captures*: it runs the graph once on placeholder lazy tensors through lazy_torch's
ordinary ATen table (the dispatcher, its lowerings and decompositions -- one table,
two entry points) and cuts the recorded IR into a ``lazycore.subprogram.Subprogram``.
Every later call records one ``call`` node over the inputs' current values, so a
1,000-op graph costs one node, not 1,000 dispatcher round trips. Outputs are lazy
tensors: nothing is computed until the step's barrier, and the call fuses with the
code around it (graph breaks included) into the step's program.

Inputs are passed as their storage (the base value), and a non-contiguous input is
re-viewed inside the sub-program with its own size, stride and offset, so layout-
dependent ops see what eager sees. An input the graph writes to (in-place ops AOT kept)
comes back as an extra output and is written into the caller's storage.

An *inference* graph that returns new tensors (a model's forward under ``no_grad``:
``generate()``'s decoding step) runs at its call, as a program of its own: the code
around it (``generate()`` slicing and growing ``input_ids`` by one token) changes shape
every call, and fused with it the model would be compiled again for every length. Cut
out, the model's program is the same for every token once the KV length is fixed
(``cache_implementation="static"``); only the small programs around it vary. Training
graphs (forward, backward) and graphs that only write their inputs (a compiled
``opt.step``) stay lazy and fuse into the step.
"""

from __future__ import annotations

import torch

import lazycore as lc

from .._convert import cpu_to_core
from .._tensor import FULL, MATH, REINTERPRET, LazyTensor, build, read, wrap
from ..lowerings.random import GENERATOR
from . import _report


class LazyGraph:
    """A compiled graph's callable (boxed: AOTAutograd passes one list of inputs)."""

    def __init__(self, gm: torch.fx.GraphModule, kind: str, site: str):
        self._boxed_call = True  # an instance attribute: wrappers copy __dict__
        self.gm = gm
        self.kind = kind
        self.site = site
        self._captures: dict = {}
        self._last = None  # (key, capture): a training loop calls with one signature

    def __call__(self, args):
        key = tuple([_signature(a) for a in args])
        last = self._last
        if last is not None and last[0] == key:
            capture = last[1]
        else:
            capture = self._captures.get(key)
            if capture is None:
                try:
                    capture = _Capture(self.gm, args, self.site, self.kind == "inference")
                except Exception as error:  # noqa: BLE001 - traced per call instead
                    capture = _PerCall(self.gm)
                    _report.not_captured(self, error)
                else:
                    _report.captured(self, capture, len(self._captures) + 1)
                self._captures[key] = capture
            self._last = (key, capture)
        return capture.run(list(args))


def _signature(a):
    if type(a) is LazyTensor:
        if a._kind == FULL:
            return (a.dtype, a.shape)
        return (a.dtype, a.shape, a.stride(), a.storage_offset(), a._cell.value.shape,
                a._kind)
    if isinstance(a, torch.Tensor):
        return ("host", a.dtype, a.shape, a.stride())
    return (type(a), a)


class _Capture:
    """The sub-program of one input signature, and how to map its results back."""

    def __init__(self, gm: torch.fx.GraphModule, args: list, site: str, inference: bool):
        placeholders, graph_args, bases = [], [], []
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                storage = a._cell.value if type(a) is LazyTensor else None
                aval = storage.aval if storage is not None else cpu_to_core(a).aval
                ph = lc.subprogram.placeholder(aval, f"input {i}")
                base = wrap(ph, fresh=True)
                placeholders.append(lc.Tensor(ph.node))  # the base's handle may be re-pointed
                bases.append((i, base))
                graph_args.append(_relayout(base, a) if storage is not None else base)
            else:
                graph_args.append(a)
        with lc.subprogram.capturing() as captured, torch.no_grad():
            outs = gm(*graph_args)
        if not isinstance(outs, list | tuple):
            outs = (outs,)
        # where each output comes from: ("call", i) a sub-program output, ("arg", i) an
        # input returned unchanged, ("const", v) a Python value or host tensor
        plan, results, self.meta = [], [], []  # meta: a call output's torch size and dtype
        arg_of = {id(t): i for i, t in enumerate(graph_args) if isinstance(t, torch.Tensor)}
        for o in outs:
            if type(o) is LazyTensor:
                if id(o) in arg_of and not o._cell.version:  # returned unchanged
                    plan.append(("arg", arg_of[id(o)]))
                else:
                    plan.append(("call", len(results)))
                    results.append(read(o))
                    self.meta.append((o.shape, o.dtype))
            else:
                plan.append(("const", o))
        self.written = []  # (arg index, sub-program output index)
        for i, base in bases:
            if base._cell.version:
                self.written.append((i, len(results)))
                results.append(base._cell.value)
        self.tensor_args = [i for i, _ in bases]
        self.plan = plan
        self.at_call = inference and any(kind == "call" for kind, _ in plan)
        # checks re-armed per call report the graph's user line (Dynamo's stack trace),
        # not a stack walk through autograd's engine and AOT's wrappers on every call
        self.program = lc.subprogram.Subprogram(placeholders, results, GENERATOR,
                                                 captured.checks, site=site)

    def run(self, args: list) -> list:
        inputs = [a._cell.value if type(a) is LazyTensor else cpu_to_core(a)
                  for a in [args[i] for i in self.tensor_args]]
        if self.at_call:  # the code before the call is one program, the call another
            lc.sync(inputs)
        values = self.program(*inputs)
        if self.at_call:
            lc.sync(values)
        for i, j in self.written:
            _write_storage(args[i], values[j])
        out, meta = [], self.meta
        for kind, v in self.plan:
            if kind == "call":  # build: wrap(fresh=True) without re-deriving size and dtype
                out.append(build(values[v], *meta[v]))
            elif kind == "arg":
                out.append(args[v])
            else:
                out.append(v.clone() if isinstance(v, torch.Tensor) else v)
        return out


class _PerCall:
    """A graph that could not be captured (an op needed an input's value, e.g. a CPU
    fallback): run op by op on the lazy tensors each call -- the lazy path's cost,
    eager's semantics."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm

    def run(self, args: list) -> list:
        with torch.no_grad():
            outs = self.gm(*args)
        return list(outs) if isinstance(outs, list | tuple) else [outs]


def _relayout(base: LazyTensor, like: LazyTensor) -> LazyTensor:
    if like._kind == FULL:
        return base
    if like._kind in (REINTERPRET, MATH):  # as_strided on the storage would drop the dtype
        # view's reinterpretation or the conj/neg view's transform: run op by op instead
        raise NotImplementedError("an input that is a dtype view or a conj()/neg view")
    return torch.as_strided(base, like.shape, like.stride(), like.storage_offset())


def _write_storage(t, value: lc.Tensor) -> None:
    if type(t) is LazyTensor:
        cell = t._cell
        cell.value.assign(value)
        cell.version += 1
        if t._kind == FULL:
            t._ver = cell.version
        torch._C._increment_version((t,))
    else:  # a host tensor the graph wrote to
        from .._convert import numpy_to_cpu

        with torch.no_grad():
            t.copy_(numpy_to_cpu(lc.to_numpy(value)).view(t.shape))
