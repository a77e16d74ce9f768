"""The op registry: each primitive declared once with its shape rule and lowering.

``defop`` registers an ``OpDef``; calling an ``OpDef`` traces it (see
``lazycore.trace.call``). A duplicate name raises, so an op lives in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import exact_division
from ..optable import OPS
from ..trace import call


@dataclass(frozen=True, slots=True)
class OpDef:
    """A primitive. ``rule(*avals, **attrs)`` -> Aval (or tuple); ``lower(*jax_values, **attrs)``."""

    name: str
    family: str
    rule: Callable
    lower: Callable
    multi_output: bool = False

    __call__ = call  # ``op(x, y)`` traces: lazycore.trace.call, no frame in between

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def defop(name: str, family: str, rule: Callable, lower: Callable, *,
          multi_output: bool = False, kind: type = OpDef) -> OpDef:
    """``kind``: an ``OpDef`` subclass for an op that rewrites its own calls (``slice``)."""
    if name in OPS:
        raise ValueError(f"op {name!r} is already registered (family {OPS[name].family})")
    op = kind(name, family, rule, lower, multi_output)
    OPS[name] = op
    return op


def get(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"no core op named {name!r}") from None


def interpret(instructions, args, outputs):
    """Run a cut program's ``(op, attrs, operand refs)`` instructions on jax values
    through each op's lowering: the body of ``vjp``, ``scan`` and captured subprograms.
    Here, beside ``OPS``, so the ops that hold a program need nothing above them."""
    env, made = list(args), [None] * len(args)

    def producer(r):  # for exact_division: what computed env[r] (None: an argument)
        return (made[r] or (None, ()))[:2] + (getattr(env[r], "shape", (0,)),)  # a tuple: not

    for op, attrs, refs in instructions:
        if op == "div" and exact_division.needs_guard(env[refs[0]].dtype, refs, producer):
            env.append(exact_division.rounded_once(*[env[r] for r in refs]))
        else:
            env.append(OPS[op].lower(*[env[r] for r in refs], **dict(attrs)))
        made.append((op, refs))
    return tuple(env[o] for o in outputs)
