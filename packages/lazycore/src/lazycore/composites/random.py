"""Distributions built from the core's uniform draws (``ops.random_*`` give the bits),
and TF's stateless Philox draws (``philox``).

Each takes a key (``lazycore.random.Generator.next_key``), so drawing every step of a
loop never recompiles.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..dtypes import canonical, finfo
from ..loops import scan
from ..tensor import Tensor
from .bits import reinterpret
from .broadcasting import broadcast_to, cast, elementwise, full, where
from .elementwise import isfinite
from .indexing import getitem
from .manipulation import reshape, stack
from .reductions import any as any_
from .reductions import cumulative
from .reductions import sum as reduce_sum
from .sorting import top_k

#: dtypes drawn and inverted in float32 (erfinv in 16 bits is too coarse near the bounds)
_NARROW = frozenset({np.dtype(np.float16), canonical("bfloat16")})


def truncated_normal(key: Tensor, shape, dtype, *, low: float = -2.0,
                     high: float = 2.0) -> Tensor:
    """Standard normal draws restricted to ``[low, high]`` (TF's ``truncated_normal``:
    ``[-2, 2]``, which redraws outside): a uniform draw mapped through the inverse CDF
    of the restricted normal, ``sqrt(2) * erfinv(erf(low/sqrt(2)) + u * (erf(high/sqrt(2))
    - erf(low/sqrt(2))))``, clamped to the bounds that rounding could cross. No rejection
    loop: the shape stays static."""
    if not low < high:
        raise ValueError(f"truncated_normal needs low < high, got [{low}, {high}]")
    dtype = canonical(dtype)
    work = np.dtype(np.float32) if dtype in _NARROW else dtype
    u = ops.random_uniform(key, shape=tuple(int(s) for s in shape), dtype=work)
    lo, hi = (math.erf(b / math.sqrt(2.0)) for b in (low, high))
    p = ops.add(full(u.shape, lo, work), ops.mul(u, full(u.shape, hi - lo, work)))
    z = ops.mul(ops.erf_inv(p), full(u.shape, math.sqrt(2.0), work))
    z = ops.clamp(full(u.shape, low, work), z, full(u.shape, high, work))
    return cast(z, dtype)


def exponential(key: Tensor, shape, dtype, *, rate: float = 1.0) -> Tensor:
    """Exponential draws of mean ``1 / rate``: ``-log1p(-u) / rate`` for a uniform ``u``
    in [0, 1) (finite: ``1 - u > 0``), drawn in float64 for float64, else in float32,
    and cast to ``dtype``."""
    dtype = canonical(dtype)
    work = dtype if dtype == np.dtype(np.float64) else np.dtype(np.float32)
    u = ops.random_uniform(key, shape=tuple(int(s) for s in shape), dtype=work)
    e = ops.neg(ops.log1p(ops.neg(u)))
    return cast(e if rate == 1 else ops.div(e, full(u.shape, rate, work)), dtype)


def categorical(key: Tensor, weights: Tensor, num_samples: int, replacement: bool) -> Tensor:
    """int64 category indices along the last axis of non-negative ``weights``, each drawn
    with its weight's share of the row (``torch.multinomial``); a zero weight is never
    drawn while a positive one is left. With replacement: a uniform draw per sample placed
    in the row's cumulative weights. Without: the ``num_samples`` largest of ``log(w)``
    plus Gumbel noise -- eager's exponential race (the largest ``w / Exp(1)``) in log form;
    zero weights come last, in index order."""
    work = weights.dtype if weights.dtype == np.dtype(np.float64) else np.dtype(np.float32)
    w, batch, n = cast(weights, work), weights.shape[:-1], weights.shape[-1]
    if not replacement:
        u = ops.random_uniform(key, shape=batch + (n,), dtype=work)
        tiny = full(u.shape, finfo(work).tiny, work)
        gumbel = ops.neg(ops.log(ops.neg(ops.log(ops.max(u, tiny)))))
        return top_k(ops.add(ops.log(w), gumbel), num_samples)[1]
    cdf = cumulative("cumsum", w, axis=-1)
    total = reshape(getitem(cdf, (Ellipsis, slice(n - 1, n))), batch + (1, 1))
    u = ops.random_uniform(key, shape=batch + (num_samples, 1), dtype=work)
    target = ops.mul(u, broadcast_to(total, u.shape))
    below = ops.get("not")(ops.lt(broadcast_to(target, batch + (num_samples, n)),
                                  broadcast_to(reshape(cdf, batch + (1, n)), batch + (num_samples, n))))
    count = ops.reduce_sum(cast(below, np.int64), axes=(len(batch) + 1,))
    return ops.min(count, full(count.shape, n - 1, np.int64))


def invalid_weights(weights: Tensor) -> tuple[Tensor, Tensor]:
    """Scalar flags of ``torch.multinomial``'s two data errors: an infinite, NaN or
    negative weight; a row whose weights sum to zero or less."""
    w = weights
    bad = ops.get("or")(ops.get("not")(isfinite(w)), ops.lt(w, full(w.shape, 0, w.dtype)))
    sums = reduce_sum(w, axis=-1)
    return any_(bad), any_(ops.le(sums, full(sums.shape, 0, sums.dtype)))


# -- Philox4x32-10 counter-based draws, as TF's stateless ops (CPU kernels) ------------------
# The seed's two int64 words, through one Philox call under a fixed key, give the key and
# the counter's high words; block g is Philox of counter g: 4 uint32 words, read as 4 values
# (float32, 16-bit floats, int32) or as 2 uint64 (float64: high word first; int64: low first).
_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)


def _e(op: str, a: Tensor, b) -> Tensor:
    return elementwise(op, a, b, dtype=a.dtype)


def _halves(x: Tensor) -> list:
    """A uint64 tensor's low and high uint32 words."""
    return [ops.convert(x, dtype=_U32), ops.convert(_e("shift_right_logical", x, 32), dtype=_U32)]


def _philox(ctr: list, key: list) -> list:
    """Philox4x32-10 on four counter words (uint32, one shape) and two key words (scalars):
    the ten rounds are one loop (unrolled, XLA's CPU fusion recomputes them per word)."""
    r = ops.iota(dtype=_U32, shape=(10,), dimension=0)
    keys = [_e("add", _e("mul", r, w), k) for k, w in zip(key, (0x9E3779B9, 0xBB67AE85),
                                                          strict=True)]

    def one_round(c, k, _):
        lo0, hi0 = _halves(_e("mul", ops.convert(c[0], dtype=_U64), 0xD2511F53))
        lo1, hi1 = _halves(_e("mul", ops.convert(c[2], dtype=_U64), 0xCD9E8D57))
        return [_e("xor", _e("xor", hi1, c[1]), k[0]), lo1,
                _e("xor", _e("xor", hi0, c[3]), k[1]), lo0], []
    return scan(one_round, ctr, keys)[0]


def _bits(seed: Tensor, counters: Tensor, wide, raw: bool = False) -> Tensor:
    """The blocks' words for ``counters`` (uint64), flat: uint32, or with ``wide`` uint64
    from pairs ("high": high word first, "low": low word first). ``raw``: the seed's
    words are the key and the counter's high words themselves (TF's stateful kernels)."""
    s = [w for i in (0, 1) for w in _halves(getitem(reinterpret(
        ops.convert(seed, dtype=np.int64), _U64), i))]
    mix = s if raw else _philox(s, [full((), 0x3EC8F720, _U32), full((), 0x02461E29, _U32)])
    w = reshape(stack(_philox([*_halves(counters), *(
        broadcast_to(m, counters.shape) for m in mix[2:])], mix[:2]), -1), (-1, 2))
    hi, lo = (ops.convert(getitem(w, (slice(None), i)), dtype=_U64)
              for i in ((0, 1) if wide == "high" else (1, 0)))
    return reshape(w, (-1,)) if wide is None else _e("or", _e("shift_left", hi, 32), lo)


def _unit(w: Tensor, dtype) -> Tensor:
    """Floats in [0, 1): the words' low bits as the mantissa of a number in [1, 2), minus 1."""
    fi = finfo(dtype)
    bits = np.dtype(f"uint{fi.bits}")
    m = _e("or", _e("and", ops.convert(w, dtype=bits), (1 << fi.nmant) - 1),
           int(np.array(1, dtype).view(bits)))
    return _e("sub", reinterpret(m, dtype), 1)


def _gaussian(w: Tensor, dtype) -> Tensor:
    """Box-Muller of word pairs (rows of ``w``) in float32 (float64 for float64) as TF
    computes (``2 * M_PI`` a double); its log/sin/cos are glibc's, XLA's differ by ulps."""
    u = _unit(w, np.float64 if dtype == np.float64 else np.float32)
    u1, v1 = (getitem(u, (slice(None), i)) for i in (0, 1))
    v1 = cast(_e("mul", cast(v1, np.float64), 2 * np.pi), u.dtype)
    u2 = ops.sqrt(_e("mul", ops.log(_e("max", u1, 1e-7)), -2))
    return reshape(stack([_e("mul", ops.sin(v1), u2), _e("mul", ops.cos(v1), u2)], 1), (-1,))


def philox(seed: Tensor, shape, dtype, kind: str = "uniform", start: Tensor | None = None
           ) -> Tensor:
    """TF's stateless draws from ``seed`` (two integers): ``kind`` "uniform" (floats in
    [0, 1), or an integer dtype's unsigned bits), "normal" or "truncated": TF gives each
    group of 4 values (2 of float64) 256 blocks and takes the first normals within 2; here
    their first 20 candidates (fewer than a group's size fall within 2 with probability
    < 1e-20). ``start`` (a uint64 scalar): TF's stateful kernels' draws instead (the
    seed pair as Philox's key and counter, the blocks counted from ``start``)."""
    d, shape = canonical(dtype), tuple(int(s) for s in shape)
    n, wide = int(np.prod(shape)), ("low" if d.kind in "iu" else "high") if d.itemsize == 8 \
        else None
    size = 2 if wide else 4  # values per block
    per, stride = (20 // size, 64 * size) if kind == "truncated" else (1, 1)
    at = [ops.iota(dtype=_U64, shape=(-(-n // size), per), dimension=i) for i in (0, 1)]
    w = _bits(seed, reshape(_e("add", _e("mul", at[0], stride), at[1] if start is None else
                               _e("add", at[1], start)), (-1,)), wide, start is not None)
    if kind == "uniform":
        raw = w if d.kind in "iu" else _unit(w, d)
    else:
        raw = _gaussian(reshape(w, (-1, 2)), d)
    if kind == "truncated":  # the j-th candidate within 2 of each group is its value j
        c = reshape(raw, (-1, 20, 1))
        ok = _e("lt", ops.abs(c), 2)
        rank = cumulative("cumsum", ops.convert(ok, dtype=np.int32), 1)
        hit = _e("and", ok, _e("eq", _e("sub", rank, 1), ops.iota(
            dtype=np.int32, shape=(1, 1, size), dimension=2)))
        raw = reduce_sum(where(hit, c, 0), 1)
    raw = raw if d.kind in "iu" else cast(raw, d)
    return reshape(getitem(reshape(raw, (-1,)), slice(0, n)), shape)
