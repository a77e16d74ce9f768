"""What the next sync would compile and run, for lazy_tf tensors: ``ir_text(a, b)``,
``ir_dot``, ``stablehlo_text``, ``hlo_text``, ``fusions``, ``fusion_count``, ``graph_hash``
(the ``lazycore.debug`` tools taking tensors as arguments; see docs/debugging.md).

>>> import tensorflow as tf, lazy_tf as ltf
>>> a = ltf.constant([1.0, 2.0])
>>> print(ltf.debug.ir_text(tf.exp(a)).splitlines()[-2].split(" : ")[0])
%1 = exp(%0)
"""

from __future__ import annotations

import lazycore as _lc

_tools = {name: _lc.debug.frontend_entry(getattr(_lc.debug, name))
          for name in _lc.debug.FRONTEND_TOOLS}
ir_text = _tools["ir_text"]
ir_dot = _tools["ir_dot"]
stablehlo_text = _tools["stablehlo_text"]
hlo_text = _tools["hlo_text"]
fusions = _tools["fusions"]
fusion_count = _tools["fusion_count"]
graph_hash = _tools["graph_hash"]

__all__ = list(_lc.debug.FRONTEND_TOOLS)
