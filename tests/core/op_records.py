"""One table describing every core primitive: inputs, attributes and a NumPy reference.

``test_ops.py`` checks each record for each dtype: the shape rule agrees with the
lowering (IR verification), and values/dtypes match the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, special

F = (np.float32, np.float64)
I = (np.int32, np.int64)  # noqa: E741
U = (np.uint8, np.uint32)
B = (np.bool_,)
NUM = F + I


@dataclass
class OpRecord:
    op: str
    nargs: int
    dtypes: tuple
    ref: Callable
    attrs: dict = field(default_factory=dict)
    domain: str = "normal"  # how to draw inputs: normal, positive, unit, small_int
    shapes: tuple = ((3, 4),)
    rtol: float = 1e-5
    ref_dtype: Callable | None = None  # expected result dtype from input dtype


def _draw(rng, shape, dtype, domain):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = 1 if domain == "positive" else 0 if dtype.kind == "u" or domain == "small_int" else -5
        hi = 4 if domain == "small_int" else 9
        return rng.integers(lo, hi, size=shape).astype(dtype)
    if domain == "positive":
        return (rng.random(shape) * 3 + 0.1).astype(dtype)
    if domain == "unit":
        return (rng.random(shape) * 1.8 - 0.9).astype(dtype)
    if domain == "gt1":
        return (rng.random(shape) * 3 + 1.1).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def draw_inputs(rng, record, dtype):
    return [_draw(rng, s, dtype, record.domain) for s in record.shapes * record.nargs][
        : record.nargs] if len(record.shapes) == 1 else [
        _draw(rng, s, dtype, record.domain) for s in record.shapes]


def _u(op, ref, dtypes=F, domain="normal", **kw):
    return OpRecord(op, 1, dtypes, ref, domain=domain, **kw)


def _b(op, ref, dtypes=NUM, domain="normal", **kw):
    return OpRecord(op, 2, dtypes, ref, domain=domain, **kw)


def _c_div(x, y):
    if x.dtype.kind in "iu":
        return np.trunc(x / np.where(y == 0, 1, y)).astype(x.dtype)
    return x / y


def _c_rem(x, y):
    if x.dtype.kind in "iu":
        return np.fmod(x, np.where(y == 0, 1, y)).astype(x.dtype)
    return np.fmod(x, y)


BOOL_OUT = lambda d: np.dtype(bool)  # noqa: E731

RECORDS = [
    _u("neg", np.negative, NUM), _u("abs", np.abs, NUM), _u("sign", np.sign, NUM),
    _u("exp", np.exp), _u("exp2", np.exp2), _u("log", np.log, domain="positive"),
    _u("log1p", np.log1p, domain="positive"), _u("expm1", np.expm1),
    _u("sqrt", np.sqrt, domain="positive"), _u("rsqrt", lambda x: 1 / np.sqrt(x),
                                                 domain="positive"),
    _u("cbrt", np.cbrt), _u("sin", np.sin), _u("cos", np.cos), _u("tan", np.tan, domain="unit"),
    _u("asin", np.arcsin, domain="unit"), _u("acos", np.arccos, domain="unit"),
    _u("atan", np.arctan), _u("sinh", np.sinh), _u("cosh", np.cosh), _u("tanh", np.tanh),
    _u("asinh", np.arcsinh), _u("acosh", np.arccosh, domain="gt1"),
    _u("atanh", np.arctanh, domain="unit"), _u("logistic", special.expit),
    _u("erf", special.erf), _u("erfc", special.erfc), _u("erf_inv", special.erfinv, domain="unit"),
    _u("lgamma", special.gammaln, domain="positive", rtol=1e-4),
    _u("digamma", special.digamma, domain="positive", rtol=1e-4),
    _u("bessel_i0e", special.i0e), _u("bessel_i1e", special.i1e),
    _u("floor", np.floor), _u("ceil", np.ceil), _u("round_half_even", np.round),
    _u("round_half_away", lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    _u("is_finite", np.isfinite, ref_dtype=BOOL_OUT),
    _u("real", np.real), _u("imag", np.imag), _u("conj", np.conj),
    _u("stop_gradient", lambda x: x, NUM),
    OpRecord("integer_pow", 1, NUM, lambda x: x ** 3, {"y": 3}, rtol=1e-5),
    OpRecord("integer_pow", 1, F, lambda x: x ** -2, {"y": -2}, domain="positive", rtol=1e-5), _u("not", np.invert, I + U + B), _u("population_count", lambda x: np.bitwise_count(x)
                                        .astype(x.dtype), U),
    _b("add", np.add, NUM + B), _b("sub", np.subtract), _b("mul", np.multiply, NUM + B),
    _b("div", _c_div, F), _b("div", _c_div, I, domain="positive"),
    _b("rem", _c_rem, F), _b("rem", _c_rem, I, domain="positive"),
    _b("pow", np.power, F, domain="positive"), _b("pow", np.power, I, domain="small_int"),
    _b("max", np.maximum, NUM + B), _b("min", np.minimum, NUM + B),
    _b("atan2", np.arctan2, F), _b("nextafter", np.nextafter, F),
    _b("and", np.bitwise_and, I + U + B), _b("or", np.bitwise_or, I + U + B),
    _b("xor", np.bitwise_xor, I + U + B),
    _b("shift_left", np.left_shift, U, domain="small_int"),
    _b("shift_right_logical", np.right_shift, U, domain="small_int"),
    _b("shift_right_arithmetic", np.right_shift, I, domain="small_int"),
    _b("igamma", special.gammainc, F, domain="positive", rtol=1e-4),
    _b("igammac", special.gammaincc, F, domain="positive", rtol=1e-4),
    _b("eq", np.equal, NUM + B, ref_dtype=BOOL_OUT), _b("ne", np.not_equal, NUM + B,
                                                         ref_dtype=BOOL_OUT),
    _b("lt", np.less, NUM, ref_dtype=BOOL_OUT), _b("le", np.less_equal, NUM, ref_dtype=BOOL_OUT),
    _b("gt", np.greater, NUM, ref_dtype=BOOL_OUT),
    _b("ge", np.greater_equal, NUM, ref_dtype=BOOL_OUT),
    OpRecord("complex", 2, F, lambda x, y: x + 1j * y),
    OpRecord("clamp", 3, NUM, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)),
    # shape family
    OpRecord("broadcast_in_dim", 1, NUM + B, lambda x: np.broadcast_to(x[:, None, :], (3, 2, 4)),
             {"shape": (3, 2, 4), "broadcast_dimensions": (0, 2)}),
    OpRecord("reshape", 1, NUM, lambda x: x.reshape(2, 6), {"new_sizes": (2, 6)}),
    OpRecord("transpose", 1, NUM, lambda x: x.transpose(1, 0, 2), {"permutation": (1, 0, 2)},
             shapes=((2, 3, 4),)),
    OpRecord("rev", 1, NUM, lambda x: x[::-1, ::-1], {"dimensions": (0, 1)}),
    OpRecord("slice", 1, NUM, lambda x: x[1:3, 0:4:2],
             {"start_indices": (1, 0), "limit_indices": (3, 4), "strides": (1, 2)}),
    OpRecord("concatenate", 2, NUM, lambda x, y: np.concatenate([x, y], 1), {"dimension": 1},
             shapes=((3, 2), (3, 5))),
    OpRecord("pad", 2, F, lambda x, v: np.pad(x, ((1, 2), (0, 1)), constant_values=v),
             {"padding_config": ((1, 2, 0), (0, 1, 0))}, shapes=((3, 4), ())),
    # reductions
    OpRecord("reduce_sum", 1, NUM, lambda x: x.sum(axis=1, dtype=x.dtype), {"axes": (1,)}, rtol=1e-4),
    OpRecord("reduce_prod", 1, F, lambda x: x.prod(axis=(0, 1)), {"axes": (0, 1)}, rtol=1e-4),
    OpRecord("reduce_max", 1, NUM, lambda x: x.max(axis=0), {"axes": (0,)}),
    OpRecord("reduce_min", 1, NUM, lambda x: x.min(axis=1), {"axes": (1,)}),
    OpRecord("reduce_and", 1, B, lambda x: x.all(axis=1), {"axes": (1,)}),
    OpRecord("reduce_or", 1, B, lambda x: x.any(axis=0), {"axes": (0,)}),
    OpRecord("reduce_xor", 1, I, lambda x: np.bitwise_xor.reduce(x, axis=1), {"axes": (1,)}),
    OpRecord("argmax", 1, NUM, lambda x: x.argmax(axis=1), {"axis": 1, "index_dtype": np.int64}),
    OpRecord("argmin", 1, NUM, lambda x: x.argmin(axis=0).astype(np.int32),
             {"axis": 0, "index_dtype": np.int32}),
    OpRecord("cumsum", 1, NUM, lambda x: np.cumsum(x, axis=1, dtype=x.dtype), {"axis": 1},
             rtol=1e-4),
    OpRecord("cumprod", 1, F, lambda x: np.cumprod(x, axis=0), {"axis": 0}, rtol=1e-4),
    OpRecord("cummax", 1, NUM, lambda x: np.maximum.accumulate(x, axis=1), {"axis": 1}),
    OpRecord("cummin", 1, NUM, lambda x: np.minimum.accumulate(x[:, ::-1], axis=1)[:, ::-1],
             {"axis": 1, "reverse": True}),
    OpRecord("cumlogsumexp", 1, F, lambda x: np.logaddexp.accumulate(x, axis=1), {"axis": 1},
             rtol=1e-4),
    OpRecord("reduce_window_max", 1, F,
             lambda x: x.reshape(2, 2, 2, 2).max(axis=(1, 3)),
             {"window_dimensions": (2, 2), "window_strides": (2, 2),
              "padding": ((0, 0), (0, 0))}, shapes=((4, 4),)),
    OpRecord("reduce_window_sum", 1, F,
             lambda x: x[:-1] + x[1:],
             {"window_dimensions": (2, 1), "window_strides": (1, 1),
              "padding": ((0, 0), (0, 0))}, shapes=((4, 3),), rtol=1e-4),
    OpRecord("reduce_window_min", 1, F, lambda x: np.minimum(x[:, :-1], x[:, 1:]),
             {"window_dimensions": (1, 2), "window_strides": (1, 1),
              "padding": ((0, 0), (0, 0))}, shapes=((3, 4),)),
    # linalg
    OpRecord("dot_general", 2, NUM, lambda x, y: x @ y,
             {"contracting": ((1,), (0,)), "batch": ((), ())}, shapes=((3, 4), (4, 5)), rtol=1e-4),
    OpRecord("dot_general", 2, F, lambda x, y: np.einsum("bij,bjk->bik", x, y),
             {"contracting": ((2,), (1,)), "batch": ((0,), (0,))}, shapes=((2, 3, 4), (2, 4, 5)),
             rtol=1e-4),
    OpRecord("einsum", 2, F, lambda x, y: np.einsum("ij,kj->ik", x, y), {"subscripts": "ij,kj->ik"},
             shapes=((3, 4), (5, 4)), rtol=1e-4),
    OpRecord("linalg_inv", 1, F, np.linalg.inv, shapes=((3, 3),), rtol=1e-3),
    OpRecord("linalg_det", 1, F, np.linalg.det, shapes=((3, 3),), rtol=1e-3),
    OpRecord("linalg_solve", 2, F, np.linalg.solve, shapes=((3, 3), (3, 2)), rtol=1e-3),
    OpRecord("linalg_svdvals", 1, F, lambda x: np.linalg.svd(x, compute_uv=False),
             shapes=((4, 3),), rtol=1e-3),
    OpRecord("linalg_eigvalsh", 1, F, lambda x: np.linalg.eigvalsh((x + x.T) / 2),
             shapes=((3, 3),), rtol=1e-3),
    OpRecord("linalg_pinv", 1, F, np.linalg.pinv, shapes=((4, 3),), rtol=1e-3),
    OpRecord("linalg_matrix_exp", 1, F, lambda x: linalg.expm(x), shapes=((3, 3),), rtol=1e-4),
]

# multi-output or specially-checked ops are covered in test_ops_special.py
SPECIAL = {"sort", "top_k", "gather", "scatter", "scatter_add", "scatter_mul", "scatter_min",
           "scatter_max", "dynamic_slice", "dynamic_update_slice", "iota", "convert",
           "bitcast_convert", "select", "conv_general_dilated", "fft", "rng_key", "random_bits",
           "random_uniform", "random_normal", "random_randint", "random_permutation", "nonzero",
           "unique", "unique_all", "vjp", "tuple_get", "clz", "linalg_cholesky", "linalg_qr",
           "linalg_eigh", "linalg_svd", "linalg_slogdet", "linalg_lstsq", "linalg_matrix_rank",
           "linalg_triangular_solve",
           "sharding_constraint",
           "scan",  # tests/core/test_scan.py
           "call"}  # tests/core/test_subprogram.py  # tests/core/test_sharding.py, tests/sharding
