"""The op table: op name -> ``OpDef``, filled by ``ops.registry.defop``.

It sits below both sides of the core: the lowering side (``lowering``, ``interpreter``)
reads an op's lowering by name from here without importing the op package, whose
``OpDef`` calls into the tracer (``trace`` itself reaches ``lowering``).
"""

from __future__ import annotations

OPS: dict = {}
