"""Indexing primitives: dynamic slice/update, gather, scatter (set/add/mul/min/max).

Dimension numbers are passed as plain tuples of ints (hashable attributes) and
rebuilt into ``lax`` structures in the lowering. ``mode`` is "clip", "fill" or
"promise_in_bounds" as in ``lax.GatherScatterMode``.
"""

from __future__ import annotations

from jax import lax

from .registry import defop
from .rules import jax_rule

FAMILY = "indexing"


def _dynamic_slice(x, *starts, slice_sizes):
    return lax.dynamic_slice(x, starts, slice_sizes)


dynamic_slice = defop("dynamic_slice", FAMILY, jax_rule(_dynamic_slice), _dynamic_slice)


def _dynamic_update_slice(x, update, *starts):
    return lax.dynamic_update_slice(x, update, starts)


dynamic_update_slice = defop("dynamic_update_slice", FAMILY, jax_rule(_dynamic_update_slice),
                             _dynamic_update_slice)


def _gather(x, indices, *, offset_dims, collapsed_slice_dims, start_index_map, slice_sizes,
            operand_batching_dims=(), start_indices_batching_dims=(), mode="clip",
            fill_value=None):
    dnums = lax.GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=collapsed_slice_dims,
        start_index_map=start_index_map, operand_batching_dims=operand_batching_dims,
        start_indices_batching_dims=start_indices_batching_dims)
    return lax.gather(x, indices, dnums, slice_sizes, mode=mode, fill_value=fill_value)


gather = defop("gather", FAMILY, jax_rule(_gather), _gather)

_SCATTERS = {
    "scatter": lax.scatter,
    "scatter_add": lax.scatter_add,
    "scatter_mul": lax.scatter_mul,
    "scatter_min": lax.scatter_min,
    "scatter_max": lax.scatter_max,
}


def _make_scatter(fn):
    def lower(x, indices, updates, *, update_window_dims, inserted_window_dims,
              scatter_dims_to_operand_dims, operand_batching_dims=(),
              scatter_indices_batching_dims=(), mode="fill", indices_are_sorted=False,
              unique_indices=False):
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=update_window_dims, inserted_window_dims=inserted_window_dims,
            scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
            operand_batching_dims=operand_batching_dims,
            scatter_indices_batching_dims=scatter_indices_batching_dims)
        return fn(x, indices, updates, dnums, mode=mode, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices)
    return lower


for _name, _fn in _SCATTERS.items():
    _lower = _make_scatter(_fn)
    globals()[_name] = defop(_name, FAMILY, jax_rule(_lower), _lower)
