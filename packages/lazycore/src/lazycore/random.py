"""Random number state: a seed and a counter per generator, both program parameters.

Each draw folds the counter into the seed's key inside the program, so a training
loop that draws every step compiles once. Streams are reproducible for a seed within
lazycore (they are not the host framework's bit streams).
"""

from __future__ import annotations

import numpy as np

from . import ops
from .tensor import Tensor
from .trace import scalar


def _affine(x: Tensor, scale: float, shift: float) -> Tensor:
    from .composites.broadcasting import full

    return ops.add(ops.mul(x, full(x.shape, scale, x.dtype)), full(x.shape, shift, x.dtype))


class Generator:
    draws = 0  # keys made by every generator: ``loops.scan`` refuses a body that draws

    def __init__(self, seed: int = 0):
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> Generator:
        self.seed = int(seed) & 0x7FFFFFFFFFFFFFFF
        self.counter = 0
        return self

    def next_key(self) -> Tensor:
        key = ops.rng_key(scalar(self.seed, np.int64, bake=False),
                          scalar(self.counter, np.int64, bake=False))
        self.counter += 1
        Generator.draws += 1
        return key

    def uniform(self, shape, dtype=np.float32, low=0.0, high=1.0) -> Tensor:
        u = ops.random_uniform(self.next_key(), shape=tuple(shape), dtype=dtype)
        return u if (low, high) == (0.0, 1.0) else _affine(u, high - low, low)

    def normal(self, shape, dtype=np.float32, mean=0.0, std=1.0) -> Tensor:
        z = ops.random_normal(self.next_key(), shape=tuple(shape), dtype=dtype)
        return z if (mean, std) == (0.0, 1.0) else _affine(z, std, mean)

    def integers(self, low: int, high: int, shape, dtype=np.int64) -> Tensor:
        return ops.random_randint(self.next_key(), scalar(low, dtype, bake=False),
                                  scalar(high, dtype, bake=False), shape=tuple(shape),
                                  dtype=dtype)

    def permutation(self, n: int) -> Tensor:
        return ops.random_permutation(self.next_key(), n=n)

    def bits(self, shape, dtype=np.uint32) -> Tensor:
        return ops.random_bits(self.next_key(), shape=tuple(shape), dtype=dtype)


default_generator = Generator(0)


def seed(value: int) -> None:
    default_generator.manual_seed(value)
