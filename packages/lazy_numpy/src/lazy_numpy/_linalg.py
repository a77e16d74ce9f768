"""Products, ``np.linalg`` and ``np.fft`` on the core's contraction, decomposition and
FFT ops. Integer inputs are computed in float64 as NumPy's linalg does.

Value-dependent failures (a singular matrix) raise NumPy's ``LinAlgError`` at the next
barrier, not at the call: the check runs in the compiled program (``_checked``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

import lazycore as lc

from ._array import LazyArray
from ._convert import tensor
from ._fallback import NotLazy
from ._reductions import store
from ._registry import implements
from ._shape import tensors_of

num = lc.numeric
ops = lc.ops
LinAlgError = np.linalg.LinAlgError
_not, _and = ops.get("not"), ops.get("and")


def _lazy(a):
    return a if isinstance(a, LazyArray) else LazyArray(tensor(a))


# -- products -----------------------------------------------------------------------------

@implements(np.dot)
def dot(a, b, out=None):
    x, y = tensors_of([a, b])
    if x.ndim == 0 or y.ndim == 0:
        return np.multiply(LazyArray(x), LazyArray(y), out=out)
    if y.ndim <= 2:
        return store(_matmul(x, y), out)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} "
                         f"(dim {x.ndim - 1}) != {y.shape[-2]} (dim {y.ndim - 2})")
    return store(num.tensordot(x, y, ((x.ndim - 1,), (y.ndim - 2,))), out)


def _matmul(x, y):
    if x.dtype == np.bool_:
        r = num.matmul(num.cast(x, np.int32), num.cast(y, np.int32))
        return ops.ne(r, num.full(r.shape, 0, r.dtype))
    if x.shape[-1] != y.shape[0 if y.ndim == 1 else -2]:
        raise ValueError(f"shapes {x.shape} and {y.shape} not aligned")
    return num.matmul(x, y)


@implements(np.vdot)
def vdot(a, b, /):
    x, y = tensors_of([a, b])
    x, y = num.reshape(x, (-1,)), num.reshape(y, (-1,))
    if x.shape != y.shape:
        raise ValueError("cannot reshape array: vectors have different lengths")
    if x.dtype.kind == "c":
        x = ops.conj(x)
    return LazyArray(num.sum(ops.mul(x, y), dtype=x.dtype))


@implements(np.inner)
def inner(a, b, /):
    x, y = tensors_of([a, b])
    if x.ndim == 0 or y.ndim == 0:
        return np.multiply(LazyArray(x), LazyArray(y))
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("shapes not aligned: last dimensions must match")
    return LazyArray(num.tensordot(x, y, ((x.ndim - 1,), (y.ndim - 1,))))


@implements(np.outer)
def outer(a, b, out=None):
    return np.multiply.outer(np.ravel(_lazy(a)), np.ravel(_lazy(b)), out=out)


@implements(np.linalg.outer)
def linalg_outer(x1, x2, /):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError("Input arrays must be one-dimensional")
    return outer(x1, x2)


@implements(np.tensordot, np.linalg.tensordot)
def tensordot(a, b, axes=2):
    x, y = tensors_of([a, b])
    if isinstance(axes, int) and axes > min(x.ndim, y.ndim):
        raise ValueError("shape-mismatch for sum")
    return LazyArray(num.tensordot(x, y, axes))


@implements(np.einsum)
def einsum(*operands, out=None, optimize=False, dtype=None, casting="safe", order="K"):
    if not operands or not isinstance(operands[0], str):
        raise NotLazy("einsum (sublist form)")
    subscripts, arrays = operands[0], operands[1:]
    ts = tensors_of(arrays, dtype)
    if ts and ts[0].dtype == np.bool_:
        raise NotLazy("einsum(bool)")
    return store(num.einsum(subscripts, *ts), out)


@implements(np.kron)
def kron(a, b):
    return LazyArray(lc.numeric.kron(*tensors_of([a, b])))


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    x, y = tensors_of([a, b])
    if axis is not None or (axisa, axisb, axisc) != (-1, -1, -1) or \
            x.shape[-1] != 3 or y.shape[-1] != 3:
        raise NotLazy("cross")
    xa, ya = _lazy(x), _lazy(y)
    a0, a1, a2 = (xa[..., i] for i in range(3))
    b0, b1, b2 = (ya[..., i] for i in range(3))
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


# -- np.linalg --------------------------------------------------------------------------------

def _float(a, square=False, min_ndim=2):
    x = tensor(a)
    if x.ndim < min_ndim:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    if x.dtype.kind in "biu" or x.dtype == np.float16:
        x = num.cast(x, np.float64 if x.dtype != np.float16 else np.float32)
    return x


def _linalg(name, *tensors, **attrs):
    return ops.get(f"linalg_{name}")(*tensors, **attrs)


def _checked(results, message: str, op: str, given=None):
    """The first of ``results`` (core tensors), with NumPy's ``LinAlgError(message)`` raised
    at the next barrier (failing them all) if it holds inf/NaN that no inf/NaN in ``given`` explains: XLA returns
    them where LAPACK reports a singular, indefinite or unconverged matrix."""
    bad = _not(num.all(num.isfinite(results[0])))
    if given is not None:
        bad = _and(bad, num.all(num.isfinite(given)))
    lc.checks.require(bad, LinAlgError, message, op=op, guards=results)
    return results[0]


@implements(np.linalg.inv)
def inv(a):
    return LazyArray(_checked([_linalg("inv", _float(a, square=True))], "Singular matrix", "inv"))


@implements(np.linalg.det)
def det(a):
    return LazyArray(_linalg("det", _float(a, square=True)))


SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


@implements(np.linalg.slogdet)
def slogdet(a):
    sign, logdet = _linalg("slogdet", _float(a, square=True))
    return SlogdetResult(LazyArray(sign), LazyArray(logdet))


@implements(np.linalg.solve)
def solve(a, b):
    x = _float(a, square=True)
    y = tensor(b)
    dt = np.result_type(x.dtype, y.dtype if y.dtype.kind in "fc" else np.float64)
    x, y = num.cast(x, dt), num.cast(y, dt)
    if y.ndim == 1:
        if y.shape[0] != x.shape[-1]:
            raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0")
        r = _linalg("solve", x, ops.reshape(y, new_sizes=(y.shape[0], 1)))
        return LazyArray(num.reshape(_checked([r], "Singular matrix", "solve", y), r.shape[:-1]))
    if y.shape[-2] != x.shape[-1]:
        raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0")
    return LazyArray(_checked([_linalg("solve", x, y)], "Singular matrix", "solve", y))


@implements(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    x = _float(a, square=True)  # NaN in, NaN out (no error), as NumPy
    c = _checked([_linalg("cholesky", x)], "Matrix is not positive definite", "cholesky", x)
    return np.linalg.matrix_transpose(LazyArray(c)).conj() if upper else LazyArray(c)


QRResult = namedtuple("QRResult", ["Q", "R"])


@implements(np.linalg.qr)
def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise NotLazy("qr")
    q, r = _linalg("qr", _float(a), mode="complete" if mode == "complete" else "reduced")
    return LazyArray(r) if mode == "r" else QRResult(LazyArray(q), LazyArray(r))


SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


@implements(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    x = _float(a)
    if not compute_uv:
        return svdvals(x)
    u, s, vh = _linalg("svd", x, full_matrices=bool(full_matrices))
    _checked([s, u, vh], "SVD did not converge", "svd")
    return SVDResult(LazyArray(u), LazyArray(s), LazyArray(vh))


@implements(np.linalg.svdvals)
def svdvals(x, /):
    return LazyArray(_checked([_linalg("svdvals", _float(x))], "SVD did not converge", "svd"))


EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


@implements(np.linalg.eigh)
def eigh(a, UPLO="L"):  # noqa: N803 - NumPy's name
    w, v = _linalg("eigh", _float(a, square=True), UPLO=UPLO)
    return EighResult(LazyArray(w), LazyArray(v))


@implements(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):  # noqa: N803 - NumPy's name
    return LazyArray(_linalg("eigvalsh", _float(a, square=True), UPLO=UPLO))


@implements(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    if rcond is not None or rtol is not np._NoValue or hermitian:
        raise NotLazy("pinv")
    return LazyArray(_linalg("pinv", _float(a)))


@implements(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803 - NumPy's name
    x = tensor(A)
    if x.ndim < 2 or tol is not None or rtol is not None or hermitian:
        raise NotLazy("matrix_rank")
    return LazyArray(_linalg("matrix_rank", _float(x)))


@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    if not isinstance(n, int | np.integer):
        raise TypeError("exponent must be an integer")
    x = tensor(a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    if n < 0:
        x, n = inv(x)._t, -n
    if n == 0:
        eye = num.broadcast_to(num.eye(x.shape[-1], dtype=x.dtype), x.shape)
        return LazyArray(eye)
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else num.matmul(result, base)
        n >>= 1
        if n:
            base = num.matmul(base, base)
    return LazyArray(result)


@implements(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = arrays[0]
    for a in arrays[1:]:
        result = np.dot(result, a)
    return store(tensor(result), out)


@implements(np.linalg.matmul)
def linalg_matmul(x1, x2, /):
    return np.matmul(x1, x2)


@implements(np.linalg.vecdot)
def linalg_vecdot(x1, x2, /, *, axis=-1):
    return np.vecdot(x1, x2, axis=axis) if axis != -1 else np.vecdot(x1, x2)


@implements(np.linalg.trace)
def linalg_trace(x, /, *, offset=0, dtype=None):
    return np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@implements(np.linalg.diagonal)
def linalg_diagonal(x, /, *, offset=0):
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    a = _lazy(x)
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    if axis is None and ord is None:
        flat = a.ravel()
        r = np.sqrt(np.sum((flat.conj() * flat).real))
        return r.reshape((1,) * a.ndim) if keepdims else r
    if axis is None:
        axis = tuple(range(a.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    absx = np.abs(a)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return np.sqrt(np.sum((a.conj() * a).real, axis=axes, keepdims=keepdims))
        if ord == np.inf:
            return np.max(absx, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return np.min(absx, axis=axes, keepdims=keepdims)
        if ord == 0:
            return np.sum((a != 0).astype(absx.dtype), axis=axes, keepdims=keepdims)
        if ord == 1:
            return np.sum(absx, axis=axes, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return np.sum(absx ** ord, axis=axes, keepdims=keepdims) ** (1.0 / ord)
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    r0, r1 = (ax % a.ndim for ax in axes)
    if ord in (None, "fro"):
        return np.sqrt(np.sum((a.conj() * a).real, axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        red = np.max if ord in (1, np.inf) else np.min
        inner_ax, outer_ax = (r0, r1) if ord in (1, -1) else (r1, r0)
        s = np.sum(absx, axis=inner_ax, keepdims=True)
        r = red(s, axis=outer_ax, keepdims=True)
        return r if keepdims else np.squeeze(r, axis=(r0, r1))
    raise NotLazy("norm")


# -- np.fft -------------------------------------------------------------------------------------

def _fft_input(a, real_input):
    x = tensor(a)
    if real_input:
        if x.dtype.kind == "c":
            raise TypeError("x must be a real sequence")
        return num.cast(x, np.float32 if x.dtype == np.float32 else np.float64)
    return num.cast(x, np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128)


def _fftn(a, s, axes, norm, kind):
    """``kind``: fft / ifft / rfft / irfft over ``axes`` (the last axis is the real one)."""
    x = _fft_input(a, kind == "rfft")
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(num.normalize_axes(ax, x.ndim)[0] for ax in axes)
    if s is None:
        s = [x.shape[ax] for ax in axes]
        if kind == "irfft":
            s[-1] = 2 * (x.shape[axes[-1]] - 1)
    return num.fftn(x, kind, axes, s, norm)


def _fft1(kind):
    def impl(a, n=None, axis=-1, norm=None, out=None):
        return store(_fftn(a, None if n is None else [n], (axis,), norm, kind), out)
    impl.__name__ = kind
    return impl


def _fft2(kind):
    def impl(a, s=None, axes=(-2, -1), norm=None, out=None):
        return store(_fftn(a, s, axes, norm, kind), out)
    return impl


for _kind in ("fft", "ifft", "rfft", "irfft"):
    implements(getattr(np.fft, _kind))(_fft1(_kind))
    implements(getattr(np.fft, _kind + "2"))(_fft2(_kind))
    implements(getattr(np.fft, _kind + "n"))(
        (lambda k: lambda a, s=None, axes=None, norm=None, out=None:
         store(_fftn(a, s, axes, norm, k), out))(_kind))


@implements(np.fft.fftshift)
def fftshift(x, axes=None):
    t = tensor(x)
    axes = tuple(range(t.ndim)) if axes is None else (axes,) if isinstance(axes, int) else axes
    return LazyArray(num.roll(t, [t.shape[ax] // 2 for ax in axes], list(axes)))


@implements(np.fft.ifftshift)
def ifftshift(x, axes=None):
    t = tensor(x)
    axes = tuple(range(t.ndim)) if axes is None else (axes,) if isinstance(axes, int) else axes
    return LazyArray(num.roll(t, [-(t.shape[ax] // 2) for ax in axes], list(axes)))

