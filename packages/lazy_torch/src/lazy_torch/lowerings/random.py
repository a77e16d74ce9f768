"""Random ops on the lazy device: drawn from lazy_torch's generator (threefry keys
folded with a counter, both program parameters: drawing every step never recompiles).
Streams are reproducible under ``torch.manual_seed`` but are not CPU PyTorch's."""

from __future__ import annotations

import torch

import lazycore as lc

from .._convert import torch_dtype
from .common import D, full_like, num, ops, to_np
from .creation import on_lazy
from .registry import lower

GENERATOR = lc.random.Generator(0)


def manual_seed(seed: int) -> None:
    GENERATOR.manual_seed(int(seed))


def _uniform(shape, dtype, low=0.0, high=1.0):
    draw_dtype = dtype if dtype in (D.float32, D.float64) else D.float32
    return num.cast(GENERATOR.uniform(shape, draw_dtype, low, high), dtype)


@lower("uniform.default", "uniform_.default")
def uniform(x, from_=0.0, to=1.0, *, generator=None):
    if not D.is_inexact(x.dtype):
        raise RuntimeError("uniform_ only supports floating-point dtypes")
    return _uniform(x.shape, x.dtype, from_, to)


@lower("normal_.default", "normal_functional.default")
def normal_(x, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    draw_dtype = x.dtype if x.dtype in (D.float32, D.float64) else D.float32
    return num.cast(GENERATOR.normal(x.shape, draw_dtype, mean, std), x.dtype)


@lower("bernoulli_.float", "bernoulli.p")
def bernoulli_p(x, p=0.5, *, generator=None):
    u = _uniform(x.shape, D.float32)
    return num.cast(ops.lt(u, full_like(u, p)), x.dtype)


@lower("bernoulli.default")
def bernoulli(x, *, generator=None):
    return num.cast(ops.lt(_uniform(x.shape, D.float32), num.cast(x, D.float32)), x.dtype)


@lower("random_.from", "random_.to", "random_.default")
def random_(x, from_=None, to=None, *, generator=None):
    if to is None and from_ is not None and not isinstance(from_, float):
        from_, to = 0, from_
    if from_ is None:
        from_ = 0
    if to is None:
        to = 2 ** 24 if D.is_floating(x.dtype) else (2 if D.is_bool(x.dtype) else 2 ** 31 - 1)
    return num.cast(GENERATOR.integers(int(from_), int(to), x.shape, D.int64), x.dtype)


def _draw_like(draw):
    """``rand_like``/``randn_like`` (AOTAutograd's dropout is ``rand_like(x) > p``): drawn
    on the lazy generator in float32/float64 and cast, not a CPU fallback reading ``x``."""
    def fn(x, *, dtype=None, device=None, **_):  # layout, pin_memory, memory_format
        dtype = to_np(dtype) if dtype is not None else x.dtype
        if not D.is_floating(dtype) or not on_lazy(device):
            return NotImplemented  # complex draws both parts; integers raise eager's error
        return num.cast(draw(x.shape, dtype if dtype in (D.float32, D.float64) else D.float32),
                        dtype)
    return fn


lower("rand_like.default")(_draw_like(GENERATOR.uniform))
lower("randn_like.default")(_draw_like(GENERATOR.normal))


def _scalar_type(dtype) -> str:
    """PyTorch's name of a scalar type in messages: ``Long``, ``ComplexFloat``."""
    return torch.empty(0, dtype=torch_dtype(dtype)).type().split(".")[-1].removesuffix("Tensor")


@lower("exponential_.default")
def exponential_(x, lambd=1.0, *, generator=None):
    if not D.is_floating(x.dtype):
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_scalar_type(x.dtype)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return num.exponential(GENERATOR.next_key(), x.shape, x.dtype, rate=lambd)


def randperm(n, dtype=None):
    return num.cast(GENERATOR.permutation(n), to_np(dtype) if dtype else D.int64)



@lower("multinomial.default")
def multinomial(probs, num_samples, replacement=False, *, generator=None):
    """Drawn by the core (``numeric.categorical``): ``Categorical.sample`` and ``generate()``'s
    sampling. Eager's errors: argument errors at the call (by eager), the data's (a
    negative, infinite or NaN weight; a row summing to zero) at the next barrier."""
    n = probs.shape[-1] if probs.ndim else 0
    if (probs.ndim not in (1, 2) or not D.is_inexact(probs.dtype) or num_samples <= 0 or n == 0
            or (not replacement and num_samples > n)):
        return NotImplemented  # eager raises its error
    bad_value, bad_sum = num.invalid_weights(probs)
    lc.checks.require(bad_value, RuntimeError,
                      "probability tensor contains either `inf`, `nan` or element < 0",
                      op="aten.multinomial")
    lc.checks.require(bad_sum, RuntimeError,
                      "invalid multinomial distribution (sum of probabilities <= 0)",
                      op="aten.multinomial")
    return num.categorical(GENERATOR.next_key(), probs, int(num_samples), replacement)
