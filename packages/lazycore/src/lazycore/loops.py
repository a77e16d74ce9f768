"""``scan(body, init, xs, consts)``: a loop recorded as ONE ``scan`` node (the op is in
``ops.control``; see its docstring for why). The body is traced once on placeholder
leaves with ``subprogram``'s capture, so this builder sits above the capture and the
autodiff cut, while the op itself stays with the other ops below them."""

from __future__ import annotations

from .autodiff import TRAILS, _cut_program
from .dtypes import is_inexact
from .errors import ShapeError
from .ir import Aval, Frozen, independent_of
from .ops.control import residual_avals, scan_op
from .random import Generator
from .subprogram import CaptureError, capturing, placeholder
from .tensor import Tensor


def scan(body, init, xs, consts=(), *, reverse: bool = False, save: bool = True):
    """Run ``body(carry, x, consts) -> (new_carry, y)`` over the leading axis of ``xs``.

    ``init``, ``xs``, ``consts``: lists of ``lazycore.Tensor``; each ``xs`` entry has the
    loop length as its first dimension, the body sees one slice. ``new_carry`` must have
    ``init``'s shapes and dtypes. Returns (final carry list, list of stacked ``y``s, each
    with the loop length first). ``reverse``: run from the last slice to the first (the
    ``y``s are still stacked in input order). Records one node, whatever the length.
    ``save``: the loop also outputs what ``grad`` needs (``ops.control.scan_vjp``); off for
    a loop whose backward the caller writes."""
    init, xs, consts = list(init), list(xs), list(consts)
    if not xs:
        raise ValueError("scan needs at least one sequence in xs")
    length = xs[0].shape[0] if xs[0].ndim else None
    for x in xs:
        if not x.ndim or x.shape[0] != length:
            raise ShapeError(f"scan: every xs entry needs the loop length {length} first, "
                             f"got {x.aval}", op="scan")
    holders = ([placeholder(t.aval, "carry") for t in init]
               + [placeholder(Aval(x.shape[1:], x.dtype), "x") for x in xs]
               + [placeholder(c.aval, "const") for c in consts])
    n_carry, n_x, draws = len(init), len(xs), Generator.draws
    with capturing() as captured:
        new_carry, ys = body(holders[:n_carry], holders[n_carry:n_carry + n_x],
                             holders[n_carry + n_x:])
    new_carry, ys = list(new_carry), list(ys)
    if Generator.draws != draws:  # its key is made once: every step would repeat one draw
        raise ShapeError("scan: the body draws random numbers, which one loop node would "
                         "repeat at every step; draw them outside as a sequence", op="scan")
    if captured.checks:
        raise ShapeError("scan: a body that registers data checks (index bounds) is not "
                         "supported", op="scan")
    if len(new_carry) != n_carry:
        raise ShapeError(f"scan: the body returned {len(new_carry)} carries for {n_carry}",
                         op="scan")
    for a, b in zip(init, new_carry, strict=True):
        if a.aval != b.aval:
            raise ShapeError(f"scan: the body changed a carry from {a.aval} to {b.aval}",
                             op="scan")
    in_nodes = [h.node for h in holders]
    out_nodes = [t.node for t in new_carry + ys]
    program, leaves, _, outs = _cut_program(out_nodes, in_nodes, independent_of(out_nodes, in_nodes))
    for leaf in leaves:
        if leaf.op == "failed" and not isinstance(leaf.value, CaptureError):  # an
            # enclosing capture's placeholder is an operand like any other
            raise ShapeError(f"scan: the body depends on a value that failed: {leaf.value}",
                             op="scan")
    out_avals = (tuple(t.aval for t in new_carry)
                 + tuple(Aval((length,) + t.shape, t.dtype) for t in ys))
    operands = init + xs + consts + [Tensor(n) for n in leaves]
    save = (save and any(is_inexact(t.dtype) for t in operands)
            and any(is_inexact(a.dtype) for a in out_avals))
    spec = (program, outs, n_carry, n_x, len(consts) + len(leaves), length, reverse, save)
    if save:
        out_avals += residual_avals(Frozen(spec + (out_avals,)), tuple(t.aval for t in operands))
    values = scan_op(*operands, spec=Frozen(spec + (out_avals,)))
    for v in values[:len(outs)] if save else ():
        TRAILS[v.node] = tuple(t.node for t in values[len(outs):])
    return list(values[:n_carry]), list(values[n_carry:len(outs)])
