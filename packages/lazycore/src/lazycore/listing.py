"""A program as text: one line per node with its recording site. Its own module so the
compile dump (``dump``, which ``diagnostics`` calls from inside every sync) and the
user-facing ``debug`` API both use it without ``dump`` importing ``debug`` (which sits
above the runtime)."""

from __future__ import annotations

import numpy as np

from .ir import Aval
from .sources import site_of


def aval_str(aval) -> str:
    return str(aval) if isinstance(aval, Aval) else "(" + ", ".join(map(str, aval)) + ")"


def program_ir_text(program) -> str:
    """A program's listing: one ``%i = op(operands, attrs) : aval`` line per node, with
    the recording ``file:line`` when known, then ``return`` and the outputs."""
    lines = []
    for i, (node, operands) in enumerate(zip(program.nodes, program.operand_positions,
                                             strict=True)):
        args = ", ".join(f"%{p}" for p in operands)
        attrs = ", ".join(f"{k}={v}" for k, v in node.attrs)
        body = node.op
        if node.op in ("param", "const"):
            body += f" {np.asarray(node.value).tolist()}"
        line = f"%{i} = {body}({args}{', ' if args and attrs else ''}{attrs}) : {aval_str(node.aval)}"
        site = None if node.is_leaf else site_of(node)
        lines.append(f"{line}  # {site}" if site else line)
    lines.append("return " + ", ".join(f"%{p}" for p in program.output_positions))
    return "\n".join(lines)
