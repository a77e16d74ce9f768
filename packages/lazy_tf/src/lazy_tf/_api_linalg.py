"""tf.linalg basics: products, decompositions, norms, diagonals."""

from __future__ import annotations

import numpy as np

import lazycore as lc

from ._api_math import composite
from ._convert import np_dtype, same_dtype, static, static_int, to_core
from ._table import FLOAT, INEXACT, NUMERIC, api, require

ops, num = lc.ops, lc.numeric


def swap_last(t, conj=False):
    """The last two axes swapped (conjugated too, if asked, for complex values)."""
    out = ops.transpose(t, permutation=tuple(range(t.ndim - 2)) + (t.ndim - 1, t.ndim - 2))
    return ops.conj(out) if conj and lc.dtypes.is_complex(t.dtype) else out


@api("linalg.matmul", "dot_general", tensors=("a", "b"))
def _matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
            a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False,
            name=None):
    x, y = same_dtype(a, b)
    require(x, NUMERIC, "matmul")
    if x.ndim < 2 or y.ndim < 2:
        raise lc.ShapeError("matmul needs rank >= 2 operands")
    out = num.matmul(swap_last(x, adjoint_a) if transpose_a or adjoint_a else x,
                     swap_last(y, adjoint_b) if transpose_b or adjoint_b else y)
    return out if output_type is None else num.cast(out, np_dtype(output_type))


@api("linalg.matvec", "dot_general", tensors=("a", "b"))
def _matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
            name=None):
    x, v = same_dtype(a, b)
    out = num.matmul(swap_last(x, adjoint_a) if transpose_a or adjoint_a else x,
                     num.expand_dims(v, v.ndim))
    return num.squeeze(out, out.ndim - 1)


@api("tensordot", "dot_general", tensors=("a", "b"))
def _tensordot(a, b, axes, name=None):
    x, y = same_dtype(a, b)
    spec = static(axes)  # [a_axes, b_axes] as a pair
    return num.tensordot(x, y, tuple(spec) if isinstance(spec, list) and len(spec) == 2 and all(
        isinstance(s, list | int) for s in spec) else spec)


def _square(t, what):
    require(t, INEXACT, what)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise lc.ShapeError(f"{what} needs square matrices, got {t.shape}")
    return t


@api("linalg.inv", "linalg_inv", tensors=("input",))
def _inv(input, adjoint=False, name=None):  # noqa: A002
    t = _square(to_core(input), "inv")
    return ops.linalg_inv(swap_last(t, True) if adjoint else t)


# one-matrix APIs: (name, TF's parameter, lowering, computation)
for _tf, _param, _lowers, _fn in [
    ("linalg.det", "input", "linalg_det", lambda t: ops.linalg_det(_square(t, "det"))),
    ("linalg.logdet", "matrix", "logdet_cholesky (composite)",
     lambda t: num.logdet_cholesky(_square(t, "logdet"))),
    ("linalg.cholesky", "input", "linalg_cholesky",
     lambda t: ops.linalg_cholesky(_square(t, "cholesky"))),
    ("linalg.eigh", "tensor", "linalg_eigh", lambda t: tuple(ops.linalg_eigh(_square(t, "eigh")))),
    ("linalg.trace", "x", "diagonal, reduce_sum",
     lambda t: num.sum(num.diagonal(require(t, NUMERIC, "trace"), 0, -2, -1), -1, dtype=t.dtype)),
]:
    api(_tf, _lowers, tensors=(_param,))(composite(_fn, None, _tf))


@api("linalg.solve", "linalg_solve", tensors=("matrix", "rhs"))
def _solve(matrix, rhs, adjoint=False, name=None):
    m, r = same_dtype(matrix, rhs)
    m = _square(m, "solve")
    if r.ndim < 2 or r.shape[-2] != m.shape[-1]:
        raise lc.ShapeError(f"rhs shape {r.shape} does not match matrix {m.shape}")
    return ops.linalg_solve(swap_last(m, True) if adjoint else m, r)


@api("linalg.triangular_solve", "linalg_triangular_solve", tensors=("matrix", "rhs"))
def _triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    m, r = same_dtype(matrix, rhs)
    return ops.linalg_triangular_solve(_square(m, "triangular_solve"), r, left_side=True,
                                       lower=bool(lower), transpose_a=bool(adjoint))


@api("linalg.qr", "linalg_qr", tensors=("input",))
def _qr(input, full_matrices=False, name=None):  # noqa: A002
    return tuple(ops.linalg_qr(require(to_core(input), INEXACT, "qr"),
                               mode="complete" if full_matrices else "reduced"))


@api("linalg.svd", "linalg_svd", tensors=("tensor",))
def _svd(tensor, full_matrices=False, compute_uv=True, name=None):
    t = require(to_core(tensor), INEXACT, "svd")
    if not compute_uv:
        return ops.linalg_svdvals(t)
    u, s, vh = ops.linalg_svd(t, full_matrices=bool(full_matrices))
    return s, u, swap_last(vh, True)  # TF returns (s, u, v) with v, not v^H


@api("linalg.diag_part", "gather (diagonal)", tensors=("input",))
def _diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    if static(k) != 0:
        raise NotImplementedError("diag_part with k != 0 runs eagerly")
    return num.diagonal(to_core(input), 0, -2, -1)


@api("linalg.diag", "eye, mul", tensors=("diagonal",))
def _diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
          align="RIGHT_LEFT"):
    if static(k) != 0 or static(num_rows) != -1 or static(num_cols) != -1:
        raise NotImplementedError("diag with k/num_rows/num_cols runs eagerly")
    d = to_core(diagonal)
    shape = d.shape + (d.shape[-1],)
    return ops.select(num.broadcast_to(num.eye(d.shape[-1], dtype=np.bool_), shape),
                      num.broadcast_to(num.expand_dims(d, d.ndim), shape), num.zeros(shape, d.dtype))


@api("linalg.band_part", "band_part (composite)", tensors=("input",))
def _band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    return num.band_part(to_core(input), static_int(num_lower), static_int(num_upper))


def _norm_core(t, ord, axis, keepdims):
    axes = num.normalize_axes(axis, t.ndim, scalar_axes=()) if axis is not None else tuple(range(t.ndim))
    if ord in ("euclidean", "fro", 2, 2.0) and (len(axes) == 1 or ord != 2 or axis is None):
        return num.vector_norm(t, 2, axes, keepdims)
    if len(axes) == 1 and ord in (1, 1.0, np.inf):
        return num.vector_norm(t, ord, axes, keepdims)
    raise NotImplementedError(f"norm ord={ord} over {len(axes)} axes runs eagerly")


@api("norm", "vector_norm (composite)", tensors=("tensor",))
def _norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    return _norm_core(require(to_core(tensor), INEXACT, "norm"), ord, static(axis), bool(keepdims))


@api("math.l2_normalize", "l2_normalize (composite)", tensors=("x",))
def _l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    return num.l2_normalize(require(to_core(x), FLOAT, "l2_normalize"),
                            static(axis if dim is None else dim), float(epsilon))


@api("linalg.pinv", "linalg_pinv", tensors=("a",))
def _pinv(a, rcond=None, validate_args=False, name=None):
    if rcond is not None:
        raise NotImplementedError("pinv with rcond runs eagerly")
    return ops.linalg_pinv(require(to_core(a), FLOAT, "pinv"))
