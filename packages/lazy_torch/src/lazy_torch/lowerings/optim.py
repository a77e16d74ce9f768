"""Fused optimizer steps (``torch.optim.Adam/AdamW/SGD(fused=True)``): ONE node per step.

``aten._fused_adam_`` / ``_fused_adamw_`` / ``_fused_sgd_`` update every parameter of a
group in one call. Lowered per op (``foreach``'s way) they would trace ~10 ops per
parameter every step; here the whole update is traced once per signature (the
tensors' shapes and dtypes, which flags are set) into a ``lazycore.subprogram`` and
every later step records one ``call`` node over the current values, its results written
back into the parameters and states. The hyperparameters (``lr``, betas, ``eps``,
weight decay, momentum) are inputs, so a learning-rate schedule does not recompile.
The math is eager's fused CPU kernel's (``FusedAdamKernel.cpp``/``FusedSGDKernel.cpp``):
scalars in float64, per-element math in the parameter's dtype. The functional
overloads (``_fused_adamw``, what AOTAutograd leaves in a compiled ``opt.step``) return
the new values instead. ``grad_scale``/``found_inf`` (AMP's ``GradScaler``) run the
CPU kernel (counted fallback), as before.
"""

from __future__ import annotations

import numpy as np
import torch

import lazycore as lc

from .._fallback import fallback as _fallback
from .._fallback import store
from .._tensor import LazyTensor, read, wrap
from .special import special

aten = torch.ops.aten
_PROGRAMS: dict = {}
_F64 = torch.float64


def _program(flags: tuple, tensors: list, build):
    """Run the sub-program of ``build`` for these flags and the tensors' avals (traced
    once per signature) on the tensors' current values."""
    values = [read(t) for t in tensors]
    key = (flags, tuple([v.aval for v in values]))
    program = _PROGRAMS.get(key)
    if program is None:
        holders = [lc.subprogram.placeholder(v.aval, f"optimizer input {i}")
                   for i, v in enumerate(values)]
        args = [wrap(h, fresh=True) for h in holders]
        with lc.subprogram.capturing(), torch.no_grad():
            outs = build(args)
        program = lc.subprogram.Subprogram([lc.Tensor(h.node) for h in holders],
                                           [read(o) for o in outs], site="torch.optim fused step")
        if len(_PROGRAMS) > 256:
            _PROGRAMS.pop(next(iter(_PROGRAMS)))
        _PROGRAMS[key] = program
    return program(*values)


def _scalar(value) -> LazyTensor:
    if isinstance(value, torch.Tensor):
        return value.to(device=torch.device("lazy"), dtype=_F64).reshape(())
    return wrap(lc.scalar(float(value), np.float64), fresh=True)


def _lists_lazy(*lists) -> bool:
    return all(type(t) is LazyTensor for ts in lists for t in ts)


# -- Adam / AdamW ----------------------------------------------------------------------------

def _adam_math(adamw: bool, amsgrad: bool, maximize: bool, decay: bool, n: int):
    """build(args) -> new params, exp_avgs, exp_avg_sqs (, max_exp_avg_sqs)."""
    def build(args):
        lr, beta1, beta2, wd, eps = args[:5]
        groups = [args[5 + i * n:5 + (i + 1) * n] for i in range(6 if amsgrad else 5)]
        params, grads, avgs, sqs, steps = groups[:5]
        maxes = groups[5] if amsgrad else [None] * n
        new_p, new_m, new_v, new_max = [], [], [], []
        for p, g, m, v, s, mx in zip(params, grads, avgs, sqs, steps, maxes, strict=True):
            step = s.to(_F64)
            bc1 = 1 - beta1 ** step
            bc2_sqrt = torch.sqrt(1 - beta2 ** step)
            if maximize:
                g = -g
            param = p
            if decay:
                if adamw:
                    param = p * (1 - lr * wd).to(p.dtype)
                else:
                    g = g + p * wd.to(p.dtype)
            m2 = m * beta1.to(m.dtype) + g * (1 - beta1).to(m.dtype)
            v2 = v * beta2.to(v.dtype) + g * g * (1 - beta2).to(v.dtype)
            if amsgrad:
                mx2 = torch.maximum(mx, v2)
                new_max.append(mx2)
                denom = torch.sqrt(mx2) / bc2_sqrt.to(p.dtype) + eps.to(p.dtype)
            else:
                denom = torch.sqrt(v2) / bc2_sqrt.to(p.dtype) + eps.to(p.dtype)
            step_size = (lr / bc1).to(p.dtype)
            new_p.append((param - step_size * m2 / denom).to(p.dtype))
            new_m.append(m2.to(m.dtype))
            new_v.append(v2.to(v.dtype))
        return new_p + new_m + new_v + new_max
    return build


def _adam_values(func, args, kwargs, adamw: bool):
    """(new values per list, lists) or None when the CPU kernel must run."""
    params, grads, avgs, sqs, maxes, steps = (list(a) for a in args[:6])
    amsgrad, maximize = kwargs["amsgrad"], kwargs["maximize"]
    if (kwargs.get("grad_scale") is not None or kwargs.get("found_inf") is not None
            or not params or not _lists_lazy(params, grads, avgs, sqs, steps,
                                             maxes if amsgrad else ())):
        return None
    n = len(params)
    decay = kwargs["weight_decay"] != 0
    tensors = [_scalar(kwargs[k]) for k in ("lr", "beta1", "beta2", "weight_decay", "eps")] \
        + params + grads + avgs + sqs + steps + (maxes if amsgrad else [])
    flags = ("adamw" if adamw else "adam", amsgrad, maximize, decay)
    values = _program(flags, tensors, _adam_math(adamw, amsgrad, maximize, decay, n))
    lists = [params, avgs, sqs] + ([maxes] if amsgrad else [])
    return [values[i * n:(i + 1) * n] for i in range(len(lists))], lists


def _adam_inplace(adamw: bool):
    def handler(func, args, kwargs):
        done = _adam_values(func, args, kwargs, adamw)
        if done is None:
            return _fallback(func, args, kwargs)
        for values, targets in zip(*done, strict=True):
            for t, v in zip(targets, values, strict=True):
                store(t, v)
    return handler


def _adam_functional(adamw: bool):
    def handler(func, args, kwargs):
        done = _adam_values(func, args, kwargs, adamw)
        if done is None:
            return _fallback(func, args, kwargs)
        (new_p, new_m, new_v, *rest), _ = done
        new_max = rest[0] if rest else [read(t) for t in args[4]]
        return ([wrap(v, fresh=True) for v in new_p], list(args[1]),
                [wrap(v, fresh=True) for v in new_m], [wrap(v, fresh=True) for v in new_v],
                [wrap(v, fresh=True) for v in new_max])
    return handler


special(aten._fused_adam_.default, aten._fused_adam_.tensor_lr)(_adam_inplace(False))
special(aten._fused_adamw_.default, aten._fused_adamw_.tensor_lr)(_adam_inplace(True))
special(aten._fused_adam.default, aten._fused_adam.tensor_lr)(_adam_functional(False))
special(aten._fused_adamw.default, aten._fused_adamw.tensor_lr)(_adam_functional(True))


# -- SGD ---------------------------------------------------------------------------------------

def _sgd_math(momentum: bool, first: bool, nesterov: bool, maximize: bool, decay: bool,
              n: int):
    """build(args) -> new params (, momentum buffers)."""
    def build(args):
        lr, wd, mom, damp = args[:4]
        params, grads = args[4:4 + n], args[4 + n:4 + 2 * n]
        bufs = args[4 + 2 * n:4 + 3 * n] if momentum else [None] * n
        new_p, new_b = [], []
        for p, g, b in zip(params, grads, bufs, strict=True):
            if maximize:
                g = -g
            if decay:
                g = g + p * wd.to(p.dtype)
            if momentum:
                b2 = g if first else b * mom.to(b.dtype) + g * (1 - damp).to(b.dtype)
                new_b.append(b2.to(p.dtype))
                g = g + b2 * mom.to(p.dtype) if nesterov else b2
            new_p.append((p - g * lr.to(p.dtype)).to(p.dtype))
        return new_p + new_b
    return build


def _sgd_values(func, args, kwargs):
    params, grads, bufs = (list(a) for a in args[:3])
    momentum = kwargs["momentum"] != 0
    if (kwargs.get("grad_scale") is not None or kwargs.get("found_inf") is not None
            or not params or not _lists_lazy(params, grads, bufs if momentum else ())):
        return None
    n = len(params)
    first, decay = bool(kwargs["is_first_step"]), kwargs["weight_decay"] != 0
    tensors = [_scalar(kwargs[k]) for k in ("lr", "weight_decay", "momentum", "dampening")] \
        + params + grads + (bufs if momentum else [])
    flags = ("sgd", momentum, first, kwargs["nesterov"], kwargs["maximize"], decay)
    values = _program(flags, tensors, _sgd_math(momentum, first, kwargs["nesterov"],
                                              kwargs["maximize"], decay, n))
    lists = [params] + ([bufs] if momentum else [])
    return [values[i * n:(i + 1) * n] for i in range(len(lists))], lists


@special(aten._fused_sgd_.default, aten._fused_sgd_.tensor_lr)
def _sgd_inplace(func, args, kwargs):
    done = _sgd_values(func, args, kwargs)
    if done is None:
        return _fallback(func, args, kwargs)
    for values, targets in zip(*done, strict=True):
        for t, v in zip(targets, values, strict=True):
            store(t, v)


@special(aten._fused_sgd.default, aten._fused_sgd.tensor_lr)
def _sgd_functional(func, args, kwargs):
    done = _sgd_values(func, args, kwargs)
    if done is None:
        return _fallback(func, args, kwargs)
    (new_p, *rest), _ = done
    new_b = rest[0] if rest else [read(t) for t in args[2]]
    return ([wrap(v, fresh=True) for v in new_p], list(args[1]),
            [wrap(v, fresh=True) for v in new_b])
