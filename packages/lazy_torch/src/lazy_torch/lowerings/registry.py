"""The ONE table: ATen (and prims) overload -> lowering onto core ops/composites.

A lowering takes the op's arguments with every tensor already a ``lazycore.Tensor``
and returns core tensors (or a list/tuple of them). For an in-place overload
(``add_``) it returns the new value of ``self``; the dispatcher checks, casts and
writes it. Returning ``NotImplemented`` defers to the next strategy (a
``torch._decomp`` decomposition, then the CPU fallback).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

LOWERINGS: dict = {}


def overload(spec: str):
    """``"add.Tensor"`` / ``"prims.add.default"`` -> the OpOverload (None if absent)."""
    ns = torch.ops.aten
    if spec.startswith("prims."):
        ns, spec = torch.ops.prims, spec[len("prims."):]
    name, _, ov = spec.partition(".")
    packet = getattr(ns, name, None)
    if packet is None:
        return None
    return getattr(packet, ov or "default", None)


def lower(*specs: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for spec in specs:
            op = overload(spec)
            if op is None:
                continue  # not in this torch build
            if op in LOWERINGS:
                raise ValueError(f"duplicate lowering for {spec}")
            LOWERINGS[op] = fn
        return fn
    return register
