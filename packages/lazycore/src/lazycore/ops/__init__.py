"""The primitive set. Importing this package registers every op family.

Each family module declares its ops with ``defop`` (name, shape rule, lowering side
by side). ``OPS`` maps op names to definitions; ``lazycore.ops.add(x, y)`` traces.
"""

from . import (
    control,
    dynamic,
    elementwise,
    indexing,
    linalg,
    random,
    reduction,
    shape,
    sorting,
    spectral,
)
from .registry import OPS, OpDef, defop, get

# every op as a module attribute (``lazycore.ops.add``) without a __getattr__ call;
# decompositions that shadow builtins (abs, max, pow, slice) are only reachable here
globals().update({name: op for name, op in OPS.items() if name not in ("linalg", "random")})
globals().update({name[len("linalg_"):]: op for name, op in OPS.items()
                  if name.startswith("linalg_")})
# ops whose names are Python keywords
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = (OPS[n] for n in ("and", "or", "xor", "not"))


def __getattr__(name: str) -> OpDef:
    op = OPS.get(name) or OPS.get(f"linalg_{name}")
    if op is None:
        raise AttributeError(f"lazycore.ops has no op {name!r}")
    return op


__all__ = ["OPS", "OpDef", "defop", "get", "dynamic", "elementwise", "indexing", "linalg",
           "random", "reduction", "shape", "sorting", "spectral"]
