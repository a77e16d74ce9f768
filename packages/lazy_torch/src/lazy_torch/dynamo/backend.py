"""The ``lazytensor`` Dynamo backend: ``torch.compile(model, backend="lazytensor")``.

Dynamo hands over an FX graph; AOTAutograd splits it into ATen forward and backward
graphs (or one inference graph); each becomes a ``LazyGraph``, which records one
sub-program call per invocation on the lazy tensors it is given. No graph is run on the
host: outputs are lazy and are computed at the step's barrier with everything else, by
the same compile cache, persistent cache, metrics and debug log as the lazy path.
"""

from __future__ import annotations

import torch
from torch._dynamo.backends.common import aot_autograd

from . import _recurrent, _report
from ._graph import LazyGraph


def _compiler(kind: str, site_of):
    def compile_graph(gm, example_inputs):
        site = site_of(gm)
        _report.aot_graph(kind, gm, site)
        return LazyGraph(gm, kind, site)
    return compile_graph


class _Sites:
    """The user's file:line of the Dynamo graph being compiled (AOT graphs of one Dynamo
    graph are reported at its site; the backward is compiled on its first call)."""

    current = "<unknown>"

    def __call__(self, gm) -> str:
        site = _report.user_site(gm)
        return self.current if site == "<unknown>" else site


_sites = _Sites()
_aot = aot_autograd(fw_compiler=_compiler("forward", _sites),
                    bw_compiler=_compiler("backward", _sites),
                    inference_compiler=_compiler("inference", _sites),
                    # an optimizer step's writes stay in the graph (aten.copy_ into its
                    # inputs): the capture sees them and writes the new values into the
                    # callers' storage directly, instead of one dispatched copy_ per
                    # parameter and state tensor after every call
                    keep_inference_input_mutations=True)


def _host_literals(gm) -> None:
    """``torch.tensor(data, device=lazy)`` in a graph becomes ``torch.tensor(data).to(lazy)``.

    ``torch.tensor`` builds its result below every dispatch mode and only then lifts it;
    on the lazy device that is a real lazy tensor, which AOTAutograd's functional and
    fake modes refuse as an unknown subclass (Hugging Face's KV cache starts from
    ``torch.tensor([], device=...)``). Built on the host, the literal is lifted as a CPU
    tensor and moved by ``aten._to_copy``, which every mode traces."""
    changed = False
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not torch.tensor:
            continue
        device = node.kwargs.get("device")
        if device is None or torch.device(device).type != "lazy":
            continue
        node.kwargs = {k: v for k, v in node.kwargs.items() if k != "device"}
        with gm.graph.inserting_after(node):
            moved = gm.graph.call_method("to", (node, device))
        node.replace_all_uses_with(moved, delete_user_cb=lambda user, moved=moved: user is not moved)
        moved.meta = dict(node.meta)
        changed = True
    if changed:
        gm.recompile()


def lazytensor(gm, example_inputs, *, mode=None, options=None):
    """Dynamo backend: lower the graph through lazy_torch's ATen table, lazily.

    ``mode`` and ``options`` are accepted because ``torch.compile`` passes them and
    Hugging Face's ``CompileConfig`` sets ``mode="reduce-overhead"`` (CUDA graphs): every
    call is one recorded node already, so no mode changes anything; no option exists."""
    if options:
        raise ValueError(f"the lazytensor backend takes no options, got {sorted(options)}")
    _host_literals(gm)
    _recurrent.rewrite(gm)
    _sites.current = _report.user_site(gm)
    _report.dynamo_graph(gm, _sites.current)
    return _aot(gm, example_inputs)
