"""IR / HLO text for lazy tensors: what the next sync would compile and run."""

from __future__ import annotations

import lazycore as lc

from ._tensor import read


def ir_text(*tensors) -> str:
    """A readable listing of the pending graph computing ``tensors``."""
    return lc.debug.ir_text([read(t) for t in tensors])


def stablehlo_text(*tensors) -> str:
    return lc.debug.stablehlo_text([read(t) for t in tensors])


def hlo_text(*tensors) -> str:
    """Optimized HLO (after XLA fusion)."""
    return lc.debug.hlo_text([read(t) for t in tensors])
