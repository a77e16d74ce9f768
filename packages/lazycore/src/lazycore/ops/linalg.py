"""Contractions and linear algebra: dot_general, convolution, einsum, decompositions."""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import lax

from ..dtypes import canonical
from ..errors import ShapeError
from ..ir import Aval
from .registry import defop
from .rules import jax_rule, same_dtypes

FAMILY = "linalg"


def _dot_rule(x: Aval, y: Aval, *, contracting, batch, preferred_element_type=None) -> Aval:
    (xc, yc), (xb, yb) = contracting, batch
    dtype = same_dtypes("dot_general", [x, y])
    for a, b in zip(xc, yc, strict=True):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(f"contracting dimensions differ: {x} dim {a} vs {y} dim {b}")
    for a, b in zip(xb, yb, strict=True):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(f"batch dimensions differ: {x} dim {a} vs {y} dim {b}")
    free_x = [s for i, s in enumerate(x.shape) if i not in xc and i not in xb]
    free_y = [s for i, s in enumerate(y.shape) if i not in yc and i not in yb]
    out = preferred_element_type and canonical(preferred_element_type) or dtype
    return Aval(tuple([x.shape[i] for i in xb] + free_x + free_y), out)


def _dot(x, y, *, contracting, batch, preferred_element_type=None):
    return lax.dot_general(x, y, (contracting, batch),
                           precision=lax.Precision.HIGHEST,
                           preferred_element_type=preferred_element_type
                           and canonical(preferred_element_type))


dot_general = defop("dot_general", FAMILY, _dot_rule, _dot)


def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
          dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    return lax.conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
        feature_group_count, batch_group_count, precision=lax.Precision.HIGHEST)


conv_general_dilated = defop("conv_general_dilated", FAMILY, jax_rule(_conv), _conv)


def _einsum(*xs, subscripts):
    return jnp.einsum(subscripts, *xs, precision=lax.Precision.HIGHEST)


einsum = defop("einsum", FAMILY, jax_rule(_einsum), _einsum)

# Decompositions lower through jax.numpy.linalg (itself lax-based).
_LINALG = {
    "cholesky": (jnp.linalg.cholesky, False),
    "inv": (jnp.linalg.inv, False),
    "det": (jnp.linalg.det, False),
    "pinv": (jnp.linalg.pinv, False),
    "matrix_rank": (jnp.linalg.matrix_rank, False),
    "solve": (jnp.linalg.solve, False),
    "slogdet": (lambda x: tuple(jnp.linalg.slogdet(x)), True),
    "qr": (lambda x, *, mode="reduced": tuple(jnp.linalg.qr(x, mode=mode)), True),
    "eigh": (lambda x, *, UPLO="L": tuple(jnp.linalg.eigh(x, UPLO=UPLO)), True),
    "eigvalsh": (lambda x, *, UPLO="L": jnp.linalg.eigvalsh(x, UPLO=UPLO), False),
    "svd": (lambda x, *, full_matrices=True: tuple(jnp.linalg.svd(x, full_matrices=full_matrices)),
            True),
    "svdvals": (lambda x: jnp.linalg.svd(x, compute_uv=False), False),
    "matrix_exp": (jsl.expm, False),  # Pade scaling and squaring; differentiable
    "lstsq": (lambda a, b: tuple(jnp.linalg.lstsq(a, b)), True),
    "triangular_solve": (lambda a, b, *, left_side=True, lower=True, transpose_a=False,
                         unit_diagonal=False: lax.linalg.triangular_solve(
                             a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                             unit_diagonal=unit_diagonal), False),
}

for _name, (_fn, _multi) in _LINALG.items():
    globals()[_name] = defop(f"linalg_{_name}", FAMILY, jax_rule(_fn), _fn, multi_output=_multi)
