"""IR and HLO text for pending values: what would run at the next sync."""

from __future__ import annotations

from .ir import format_graph
from .lowering import hlo_text as _hlo
from .lowering import linearize
from .lowering import stablehlo_text as _stablehlo


def _roots(tensors):
    return [t.node for t in tensors]


def ir_text(tensors) -> str:
    """A readable listing of the graph computing ``tensors``."""
    return format_graph(_roots(tensors))


def stablehlo_text(tensors) -> str:
    return _stablehlo(linearize(_roots(tensors)))


def hlo_text(tensors) -> str:
    """Optimized HLO (after XLA fusion)."""
    return _hlo(linearize(_roots(tensors)))


def graph_hash(tensors) -> int:
    return hash(linearize(_roots(tensors)).key)
