"""Matrix products, pooling, normalization, softmax, embedding, attention.

Backward ops without a PyTorch decomposition are lowered as the core's lazy VJP of
the forward lowering (``lc.grad``), so they stay exact and fuse with the step.
"""

from __future__ import annotations

import numpy as np
import torch

import lazycore as lc

from .._convert import cpu_to_core, np_dtype, torch_dtype
from .common import OPMATH, D, full_like, in_opmath, num, ops, wrap_dim
from .indexing import SELF_RANGE, checked
from .random import GENERATOR
from .registry import lower


def _same_dtype(name, a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_tname(a.dtype)} != {_tname(b.dtype)}")


def _tname(dt):
    return {D.float32: "float", D.float64: "double", D.float16: "c10::Half",
            D.bfloat16: "c10::BFloat16", D.int64: "long int"}.get(dt, str(dt))


@lower("mm.default")
def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError("self must be a matrix" if a.ndim != 2 else "mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]}"
                           f" and {b.shape[0]}x{b.shape[1]})")
    _same_dtype("mm", a, b)
    return _dot(a, b, ((1,), (0,)), ((), ()))


def _dot(a, b, contracting, batch):
    """Eager's CPU kernels multiply and sum float16/bfloat16 in float32, rounded once."""
    acc = D.float32 if a.dtype in OPMATH else a.dtype
    return num.cast(ops.dot_general(num.cast(a, acc), num.cast(b, acc), contracting=contracting,
                                    batch=batch), a.dtype)


def _scaled(x, factor):
    return x if factor == 1 else ops.mul(x, full_like(x, factor))


def _plus_product(product, x, a, b, beta, alpha):
    """``beta * x + alpha * product(a, b)``. Eager's CPU kernels round it once for float16
    and bfloat16 operands: the products, their sum and the addition stay float32."""
    dtype = a.dtype
    if dtype in OPMATH and b.dtype == dtype:
        a, b = num.cast(a, D.float32), num.cast(b, D.float32)
    out = _scaled(product(a, b), alpha)
    if beta != 0:
        out = ops.add(out, num.broadcast_to(_scaled(num.cast(x, out.dtype), beta), out.shape))
    return num.cast(out, dtype)


@lower("addmm.default", "addmm_.default", "_sparse_addmm.default")  # sparse.mm of dense
def addmm(bias, a, b, *, beta=1, alpha=1):
    return _plus_product(mm, bias, a, b, beta, alpha)


@lower("bmm.default")
def bmm(a, b):
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if a.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    _same_dtype("bmm", a, b)
    return _dot(a, b, ((2,), (1,)), ((0,), (0,)))


@lower("_grouped_mm.default")
def grouped_mm(a, b, offs=None, bias=None, out_dtype=None):
    """One product per group of consecutive rows of ``a`` (2d x 3d), columns of ``b``
    (3d x 2d) or contraction positions (2d x 2d, a product per group); ``offs`` are the
    groups' ends (transformers' MoE experts and their gradients). Every group's product is
    computed and each position keeps its own group's; positions past the last end are 0
    (eager leaves them unwritten)."""
    groups = b.shape[0] if b.ndim == 3 else a.shape[0] if a.ndim == 3 else None
    if offs is None or {a.ndim, b.ndim} not in ({2}, {2, 3}) or bias is not None or \
            out_dtype not in (None, torch_dtype(a.dtype)) or \
            offs.dtype != D.int32 or a.dtype != b.dtype or a.dtype not in (D.float32, *OPMATH) \
            or offs.shape[0] != (groups or offs.shape[0]) or a.shape[-1] != b.shape[-2]:
        return NotImplemented  # 3d x 3d is bmm; eager's errors and unsupported options
    n = a.shape[0] if b.ndim == 3 else b.shape[1] if a.ndim == 3 else a.shape[1]
    group = num.searchsorted(offs, num.arange(n, dtype=offs.dtype), right=True)  # ends <= i
    zero = num.zeros((), a.dtype)
    if b.ndim == 3:  # (M, G, N): row m keeps its group's product
        mine = num.expand_dims(num.one_hot(group, offs.shape[0]), -1)
        return ops.reduce_sum(num.where(mine, _dot(a, b, ((1,), (1,)), ((), ())), zero), axes=(1,))
    mine = num.expand_dims(num.one_hot(group, offs.shape[0], axis=0), 1)  # (G, 1, n)
    if a.ndim == 3:  # (G, M, N): column n keeps its group's product
        return ops.reduce_sum(num.where(mine, _dot(a, b, ((2,), (0,)), ((), ())), zero), axes=(0,))
    return _dot(num.where(mine, a, zero), b, ((2,), (0,)), ((), ()))


@lower("affine_grid_generator.default")
def affine_grid_generator(theta, size, align_corners):
    """Eager's base grid bit for bit: the sampling points of an identity ``theta`` (the
    spatial transformer's initial one) are pixel centres, where one ulp moves
    ``grid_sample``'s floor and so its gradient. The base is eager's own kernel run on the
    host for an identity ``theta`` (exact), a ones column, then one product with
    ``theta``; other sizes keep the decomposition and its checks."""
    d = len(size) - 2
    if d not in (2, 3) or theta.shape != (size[0], d, d + 1):
        return NotImplemented
    eye = torch.eye(d, d + 1, dtype=torch_dtype(theta.dtype))[None]
    base = torch.ops.aten.affine_grid_generator(eye, [1, 1, *size[2:]], align_corners)
    base = torch.nn.functional.pad(base.reshape(-1, d), (0, 1), value=1.0)
    out = _dot(theta, cpu_to_core(base), ((2,), (1,)), ((), ()))  # (N, d, points)
    return ops.reshape(ops.transpose(out, permutation=(0, 2, 1)),
                       new_sizes=(size[0], *size[2:], d))


@lower("baddbmm.default", "baddbmm_.default")
def baddbmm(x, a, b, *, beta=1, alpha=1):
    return _plus_product(bmm, x, a, b, beta, alpha)


@lower("mv.default")
def mv(a, v):
    if a.ndim != 2 or v.ndim != 1 or a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x"
                           f"{a.shape[1] if a.ndim > 1 else 0}), vec ({v.shape[0]})")
    _same_dtype("mv", a, v)
    return _dot(a, v, ((1,), (0,)), ((), ()))


@lower("dot.default")
def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
                           )
    _same_dtype("dot", a, b)
    return ops.dot_general(a, b, contracting=((0,), (0,)), batch=((), ()))


@lower("vdot.default")
def vdot(a, b):
    """``sum(conj(a) * b)``: ``torch.vdot`` and ``torch.linalg.vecdot`` of complex vectors."""
    return dot(ops.conj(a), b)


@lower("linalg_solve_triangular.default")
def linalg_solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    """``MultivariateNormal.log_prob``, QR's backward; batch dimensions broadcast."""
    if a.dtype != b.dtype or not D.is_inexact(a.dtype) or a.ndim < 2 or b.ndim < 2:
        return NotImplemented  # eager's errors
    batch = num.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return ops.triangular_solve(num.broadcast_to(a, batch + a.shape[-2:]), num.broadcast_to(
        b, batch + b.shape[-2:]), left_side=left, lower=not upper, unit_diagonal=unitriangular)


@lower("linalg_qr.default")
def linalg_qr(a, mode="reduced"):
    """Householder QR (LAPACK's geqrf on both sides: the same signs); ``nn.init.orthogonal_``
    of a lazy weight. Mode ``"r"`` (an empty Q) and integer input go to eager."""
    return ops.qr(a, mode=mode) if mode != "r" and D.is_inexact(a.dtype) else NotImplemented


@lower("_cdist_forward.default")
def cdist_forward(x1, x2, p, compute_mode=None):
    """``torch.cdist``'s exact kernel (eager takes it up to 25 rows, or for p != 2)."""
    return num.cdist(x1, x2, p) if x1.dtype == x2.dtype and D.is_inexact(x1.dtype) \
        else NotImplemented


@lower("_cdist_backward.default")
def cdist_backward(grad, x1, x2, p, dist):
    if 0 < p < 1 or not D.is_inexact(x1.dtype):  # a power below 1: eager's own edge cases
        return NotImplemented
    return num.cdist_backward(grad, x1, x2, p, dist)


@lower("linalg_matrix_exp.default")
def linalg_matrix_exp(a):
    """The orthogonal parametrization's map (``nn.utils.parametrizations.orthogonal``) and
    its backward (eager's formula: the exponential of a block matrix). Half and integer
    types and non-square shapes go to eager (its errors)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.dtype.itemsize < 4 \
            or not D.is_inexact(a.dtype):
        return NotImplemented
    # single precision in double (Pade's float32 error was 3x eager's Taylor's)
    wide = np.complex128 if D.is_complex(a.dtype) else np.float64
    return num.cast(ops.matrix_exp(num.cast(a, wide)), a.dtype)


# -- softmax ----------------------------------------------------------------------------

@lower("_softmax.default")
def softmax(x, dim, half_to_float=False):
    if x.ndim == 0:
        return num.full((), 1, x.dtype)
    return in_opmath(num.softmax, x, wrap_dim(dim, x.ndim))



@lower("_safe_softmax.default")
def safe_softmax(x, dim, dtype=None):
    """Softmax with fully masked (all -inf) rows 0, not NaN (attention's): 5 core ops
    instead of the decomposition's 5 dispatched ATen calls."""
    if not x.size or not D.is_floating(x.dtype) or dtype is not None and np_dtype(dtype) != x.dtype:
        return NotImplemented
    d = wrap_dim(dim, x.ndim)
    masked = num.all(ops.eq(x, full_like(x, float("-inf"))), d, keepdims=True)
    return num.where(num.broadcast_to(masked, x.shape), full_like(x, 0), softmax(x, d))

@lower("_log_softmax.default")
def log_softmax(x, dim, half_to_float=False):
    if x.ndim == 0:
        return num.full((), 0, x.dtype)
    return in_opmath(num.log_softmax, x, wrap_dim(dim, x.ndim))


# Backward of (log_)softmax and relu directly, instead of PyTorch's decompositions (which
# dispatch several ATen ops each). Covered: grad, output and input_dtype all one floating
# dtype; half types compute in float32 and round once, as the decompositions do. Anything
# else (mixed dtypes, broadcasting) returns NotImplemented: the decomposition runs.


def _softmax_grad_args(grad, output, dim, input_dtype):
    dt = grad.dtype
    if (output.dtype != dt or grad.shape != output.shape or not D.is_floating(dt)
            or np_dtype(input_dtype) != dt):
        return None
    axis = wrap_dim(dim, grad.ndim)
    if dt in OPMATH:
        grad, output = num.cast(grad, D.float32), num.cast(output, D.float32)
    return grad, output, axis, dt


@lower("_log_softmax_backward_data.default")
def log_softmax_backward(grad, output, dim, input_dtype, log=True):
    covered = _softmax_grad_args(grad, output, dim, input_dtype)
    if covered is None:
        return NotImplemented
    g, out, axis, dt = covered
    return num.cast(num.softmax_backward(g, out, axis, log=log), dt)


@lower("_softmax_backward_data.default")
def softmax_backward(grad, output, dim, input_dtype):
    return log_softmax_backward(grad, output, dim, input_dtype, log=False)


@lower("threshold_backward.default")
def threshold_backward(grad, x, threshold):
    """where(x <= threshold, 0, grad): NaN in ``x`` compares False, so its grad passes."""
    if (grad.dtype != x.dtype or grad.shape != x.shape or not D.is_floating(x.dtype)
            or type(threshold) not in (int, float)):
        return NotImplemented
    return ops.select(ops.le(x, full_like(x, threshold)), full_like(grad, 0), grad)


# -- pooling --------------------------------------------------------------------------------

def _pool_params(x, kernel_size, stride, padding, dilation, nd):
    def tup(v, default=None):
        if v is None or (isinstance(v, list | tuple) and len(v) == 0):
            v = default
        return tuple(v) * nd if isinstance(v, list | tuple) and len(v) == 1 else (
            tuple(v) if isinstance(v, list | tuple) else (v,) * nd)
    k = tup(kernel_size)
    return k, tup(stride, k), tup(padding), tup(dilation, 1)


@lower("max_pool2d_with_indices.default", "max_pool3d_with_indices.default")
def max_pool_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    nd = 3 if len(kernel_size) == 3 or x.ndim == 5 else 2
    batched = x.ndim == nd + 2
    if not batched:
        x = num.expand_dims(x, 0)
    k, s, p, d = _pool_params(x, kernel_size, stride, padding, dilation, nd)
    outs = [num.pool_output_size(*a, ceil_mode)
            for a in zip(x.shape[2:], k, s, p, d, strict=True)]
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). Calculated "
                           f"output size: ({x.shape[1]}x{'x'.join(map(str, outs))}). Output size "
                           "is too small")
    values, index = num.max_pool(x, k, s, p, d, ceil_mode=ceil_mode, return_indices=True)
    if not batched:
        values, index = num.squeeze(values, 0), num.squeeze(index, 0)
    return values, index


@lower("max_pool2d_with_indices_backward.default", "max_pool3d_with_indices_backward.default")
def max_pool_backward(grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return num.max_pool_backward(grad, indices, x.shape, x.ndim - (2 if x.ndim in (4, 5) else 1))


def _avg(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    batched = x.ndim == nd + 2
    if not batched:
        x = ops.reshape(x, new_sizes=(1,) + x.shape)
    k, s, p, _ = _pool_params(x, kernel_size, stride, padding, 1, nd)
    out = num.avg_pool(x, k, s, tuple(p), count_include_pad=count_include_pad,
                       ceil_mode=ceil_mode, divisor_override=divisor_override)
    return out if batched else ops.reshape(out, new_sizes=out.shape[1:])


@lower("avg_pool2d.default")
def avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, 2)


@lower("avg_pool2d_backward.default")
def avg_pool2d_backward(grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return lc.grad([_avg(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override, 2)], [x], [grad])[0]


# -- normalization -----------------------------------------------------------------------------

@lower("native_layer_norm.default")
def native_layer_norm(x, normalized_shape, weight, bias, eps):
    n = len(normalized_shape)
    if tuple(x.shape[x.ndim - n:]) != tuple(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(x.shape)}")
    return num.layer_norm(x, n, weight, bias, eps, return_stats=True)


@lower("native_layer_norm_backward.default")
def native_layer_norm_backward(grad, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    """The core's composite (its decomposition dispatched ~15 ATen calls); mixed dtypes
    decline to that decomposition."""
    return NotImplemented if any(t is not None and t.dtype != x.dtype for t in (
        grad, mean, rstd, weight, bias)) else num.layer_norm_backward(
            grad, x, mean, rstd, len(normalized_shape), weight,
            (output_mask[0], output_mask[1] and weight is not None,
             output_mask[2] and bias is not None))


# -- embedding, dropout ----------------------------------------------------------------------

@lower("embedding.default")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if not D.is_integer(indices.dtype):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{_tname(indices.dtype)} instead (while checking arguments for "
                           "embedding)")
    return checked(indices, weight.shape[0], IndexError, SELF_RANGE, "aten.embedding",
                   num.take(weight, indices, 0), negative=False)


@lower("embedding_renorm.default", "embedding_renorm_.default")
def embedding_renorm(weight, indices, max_norm, norm_type):
    return num.embedding_renorm(weight, indices, max_norm, norm_type)  # F.embedding(max_norm=)


@lower("native_dropout.default")
def native_dropout(x, p, train):
    if not D.is_floating(x.dtype):
        return NotImplemented
    if train is False:
        return x, num.full(x.shape, True, D.bool_)
    return num.dropout(x, float(p), GENERATOR.next_key(), return_mask=True)


@lower("native_dropout_backward.default")
def native_dropout_backward(grad, mask, scale):
    return ops.mul(grad, ops.mul(num.cast(mask, grad.dtype), full_like(grad, scale)))


