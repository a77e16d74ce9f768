"""What the backend did, in lazycore's metrics and ``LAZYCORE_DEBUG`` log.

Counters: ``dynamo_graphs`` (graphs handed to the backend; ``dynamo_graphs::forward``,
``::backward``, ``::inference``), ``dynamo_recompiles`` (a frame compiled again after
its guards failed), ``dynamo_graph_breaks``, ``dynamo_captures`` (a graph traced into a
sub-program for a new input signature; a second signature of one graph is a recompile
and is listed in ``metrics.recompile_reasons()``), ``dynamo_guards`` (guards Dynamo
installed), ``dynamo_uncaptured`` (a graph whose capture needed an input's value,
e.g. an op with a CPU fallback: it is traced op by op on every call), ``dynamo_calls`` is not kept (the call path stays O(1) and counter-free;
``traced_ops`` counts one ``call`` node per graph call).
"""

from __future__ import annotations

import re
import sys

import lazycore as lc

_BREAKS = [0]
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def user_site(gm) -> str:
    """The user's ``file:line`` of the graph's first op (Dynamo keeps stack traces)."""
    for node in gm.graph.nodes:
        trace = node.meta.get("stack_trace")
        if trace:
            found = _FILE_LINE.findall(trace)
            if found:
                path, line = found[-1]
                return f"{path}:{line}"
    return "<unknown>"


def dynamo_graph(gm, site: str) -> None:
    """One graph from Dynamo (before AOTAutograd splits it)."""
    import torch._dynamo.utils as dynamo_utils
    from torch._guards import CompileContext, TracingContext

    lc.metrics.inc("dynamo_graphs")
    compile_id = CompileContext.current_compile_id()
    recompile = compile_id is not None and (compile_id.frame_compile_id or 0) > 0
    if recompile:
        lc.metrics.inc("dynamo_recompiles")
        lc.metrics.note_recompile(site, f"torch.compile: guards failed, frame recompiled "
                                        f"(compile {compile_id})")
    breaks = sum(dynamo_utils.counters["graph_break"].values())
    if breaks > _BREAKS[0]:
        lc.metrics.inc("dynamo_graph_breaks", breaks - _BREAKS[0])
        _BREAKS[0] = breaks
    guards = 0
    context = TracingContext.try_get()
    if context is not None and context.guards_context is not None:
        guards = len(context.guards_context.dynamo_guards)
        lc.metrics.inc("dynamo_guards", guards)
    _log(f"torch.compile graph {compile_id} at {site}: {_count_ops(gm)} ops, {guards} guards"
         + (" (recompile)" if recompile else ""))


def aot_graph(kind: str, gm, site: str) -> None:
    lc.metrics.inc(f"dynamo_graphs::{kind}")
    _log(f"torch.compile {kind} graph at {site}: {_count_ops(gm)} ATen ops")


def captured(graph, capture, n: int) -> None:
    lc.metrics.inc("dynamo_captures")
    if n > 1:
        lc.metrics.note_recompile(graph.site, f"torch.compile {graph.kind} graph called with "
                                              f"a new input signature ({n} so far)")
    _log(f"torch.compile {graph.kind} graph at {graph.site}: captured {capture.program.n_ops}"
         f" core ops as one sub-program (signature {n})")


def not_captured(graph, error: Exception) -> None:
    lc.metrics.inc("dynamo_uncaptured")
    _log(f"torch.compile {graph.kind} graph at {graph.site}: not captured "
         f"({type(error).__name__}: {error}); its ops are traced on every call")


def _count_ops(gm) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_function")


def _log(line: str) -> None:
    if lc.settings.debug:
        print(f"[lazycore] {line}", file=sys.stderr)
