"""PyTorch's own OpInfo database over float32 samples: lazy == eager CPU.

Counted: ``pass`` (through direct lowerings or ``torch._decomp`` decompositions),
``fallback`` (correct, but at least one op ran on the CPU fallback: not counted as
lowered), ``skipped`` (the list below, each with its reason). Deselect with
``-m "not opinfo"``.
"""

from __future__ import annotations

import pytest

from .opinfo_sweep import summary, sweep

# op key (name[.variant]) -> why it is skipped. Reasons come from running the sweep.
SKIP: dict[str, str] = {
}

MIN_PASSING = 300


@pytest.mark.opinfo
def test_opinfo_sweep(dev):
    results, errors = sweep(SKIP, dev)
    counts = summary(results)
    print(f"\nOpInfo float32: {counts}")
    assert not errors, "ops failing outside the skip list:\n" + "\n".join(
        f"  {k}: {v}" for k, v in errors.items())
    assert counts.get("pass", 0) >= MIN_PASSING, counts
