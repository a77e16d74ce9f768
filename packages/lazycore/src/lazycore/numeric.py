"""One namespace of the composites frontends call (promotion, reductions, indexing, nn...).

Frontends map their API names onto these and onto ``lazycore.ops``; nothing here
knows any frontend.
"""

from __future__ import annotations

from .composites.bits import reinterpret
from .composites.broadcasting import (
    broadcast_shapes,
    broadcast_to,
    cast,
    elementwise,
    full,
    promote,
    where,
)
from .composites.conv import conv
from .composites.creation import (
    arange,
    band_part,
    eye,
    linspace,
    ones,
    tri_mask,
    triangle,
    zeros,
)
from .composites.dynamic import argwhere, count_true, unique
from .composites.dynamic import nonzero_mask as nonzero
from .composites.elementwise import (
    absolute,
    addcdiv,
    addcmul,
    angle,
    checked_power,
    clamp,
    copysign,
    divide_no_nan,
    exp,
    floor_divide,
    floor_divmod,
    floor_mod,
    fmax,
    fmin,
    fmod,
    heaviside,
    hypot,
    isfinite,
    isinf,
    isnan,
    lerp,
    log,
    logaddexp,
    logaddexp2,
    maximum,
    minimum,
    mixed_sign_compare,
    modf,
    nan_to_num,
    ndtri,
    ordered,
    power,
    reciprocal,
    rint,
    round_decimals,
    sign,
    signbit,
    spacing,
    trunc,
    trunc_divide,
    with_part,
    xlog1py,
    xlogy,
)
from .composites.image import hsv_to_rgb, projective_transform, rgb_to_hsv
from .composites.indexing import (
    gather_points,
    getitem,
    host_index,
    index_add,
    index_copy,
    index_fill,
    masked_assign,
    one_hot,
    pad_indexed,
    scatter_along_axis,
    setitem,
    take,
    take_along_axis,
    take_batched,
    write_positions,
)
from .composites.linalg import (
    cdist,
    cdist_backward,
    einsum,
    kron,
    logdet_cholesky,
    matmul,
    tensordot,
)
from .composites.loss_scaling import unscale, update_loss_scale
from .composites.losses import (
    cross_entropy,
    mse_loss,
    nll_loss,
    nll_loss_backward,
    sigmoid_cross_entropy,
    squared_difference,
    target_out_of_range,
)
from .composites.manipulation import (
    broadcast_arrays,
    concatenate,
    diagonal,
    expand_dims,
    flip,
    moveaxis,
    repeat,
    reshape,
    roll,
    split,
    split_sizes,
    squeeze,
    stack,
    tile,
    transpose,
)
from .composites.nn import (
    batch_norm,
    dropout,
    elu,
    embedding_renorm,
    gelu,
    layer_norm,
    layer_norm_backward,
    leaky_relu,
    log_softmax,
    moments,
    relu,
    silu,
    softmax,
    softmax_backward,
    softplus,
    softsign,
)
from .composites.pooling import avg_pool, max_pool, max_pool_backward, pool_output_size
from .composites.random import (
    categorical,
    exponential,
    invalid_weights,
    philox,
    truncated_normal,
)
from .composites.recurrent import (
    gru_cell,
    gru_cell_backward,
    lstm_cell,
    lstm_cell_backward,
    recurrent_layer,
    recurrent_layer_backward,
    shift_steps,
)
from .composites.reductions import (
    all,
    any,
    argmax,
    argmin,
    cumulative,
    l2_normalize,
    logsumexp,
    max,
    mean,
    min,
    normalize_axes,
    prod,
    reduce,
    std,
    sum,
    var,
    vector_norm,
)
from .composites.sorting import (
    argsort,
    histogram,
    lower_median,
    quantile,
    searchsorted,
    sort,
    sort_with_indices,
    top_k,
)
from .composites.spectral import fftn

