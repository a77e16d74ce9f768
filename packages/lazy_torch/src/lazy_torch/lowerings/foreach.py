"""``torch._foreach_*`` (optimizers' multi-tensor paths): one per-tensor op per element.

The per-element op goes back through the dispatcher, so it takes the same lowering
(and in-place/view semantics) as the single-tensor optimizer path."""

from __future__ import annotations

import torch

aten = torch.ops.aten


_VALUE_KWARG = ("addcmul", "addcdiv")


def is_foreach(func) -> bool:
    return func._schema.name.startswith("aten::_foreach_")


def foreach(func, args, kwargs):
    name = func._schema.name.split("::")[1][len("_foreach_"):]
    packet = getattr(aten, name)
    names = [a.name for a in func._schema.arguments]
    lists = {}
    for i, a in enumerate(args):
        arg_name = names[i] if i < len(names) else ""
        if isinstance(a, torch.Tensor) and arg_name == "scalars":
            lists[i] = a.tolist()
        elif isinstance(a, list | tuple):
            lists[i] = a
    n = len(next(iter(lists.values())))
    out = []
    for k in range(n):
        elem = [lists[i][k] if i in lists else a for i, a in enumerate(args)]
        kw = {key: (v[k] if isinstance(v, list | tuple) else v) for key, v in kwargs.items()}
        if name.rstrip("_") in _VALUE_KWARG and len(elem) == 4:
            kw["value"] = elem.pop()  # foreach passes the scalar positionally
        out.append(packet(*elem, **kw))
    return None if name.endswith("_") else out
