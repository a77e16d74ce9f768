"""Tier 0: run a program op by op, without compiling it.

XLA compiles a program before its first run (tens of milliseconds to seconds); an
eager ``jax.lax`` call compiles each new (primitive, shapes) pair on its own (~30 ms
each on CPU). So on CPU the interpreter runs each op with a NumPy kernel from
``KERNELS`` when one applies, on the program's own buffers (``np.asarray`` of a CPU
``jax.Array`` is a view), and falls back to the op's ``jax.lax`` lowering, dispatched
eagerly, for the rest (and on other backends for every op). The lowering is the one
the compiled program uses, so the two tiers share one definition of every op.

A NumPy kernel is used only where NumPy's semantics are XLA's: a kernel declines
(returns ``None``) for a dtype or case where they differ (float->int casts of NaN,
integer division by zero, empty max-reductions, float16/bfloat16 arithmetic), and a
result whose shape or dtype is not the node's aval is discarded for the lowering's.
Values then agree to the rounding of the kernels (tests run both tiers against the
same eager oracle).
"""

from __future__ import annotations

import functools

import jax
import numpy as np

from .dtypes import canonical
from .lowering import Program
from .ops.registry import OPS
from .ops.sorting import _flip_key

#: dtypes whose NumPy arithmetic is XLA's (float16/bfloat16: XLA may compute in f32)
_NUMPY_DTYPES = frozenset(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64, np.complex64, np.complex128))

KERNELS: dict = {}


def kernel(*names):
    def register(fn):
        for name in names:
            KERNELS[name] = fn
        return fn
    return register


def run(program: Program, numpy_kernels: bool | None = None) -> tuple:
    """The program's outputs (``jax.Array``s on the default device), computed op by op.

    ``numpy_kernels``: use ``KERNELS`` (default: on the CPU backend only)."""
    if numpy_kernels is None:
        numpy_kernels = jax.default_backend() == "cpu"
    with np.errstate(all="ignore"):  # IEEE results, as XLA gives them, without warnings
        return _run(program, numpy_kernels)


def _run(program: Program, numpy_kernels: bool) -> tuple:
    nodes, operand_positions = program.nodes, program.operand_positions
    env: list = [None] * len(nodes)
    release, last_read = _releases(program)
    outputs = set(program.output_positions)
    viewed: set = set()  # ids of arrays some other value is a view of (never updated in place)
    for i, node in enumerate(nodes):
        for p in release[i]:  # operands whose last reader ran: keep the peak near eager's
            env[p] = None
        op = node.op
        if op == "data":
            env[i] = node.value
        elif op in ("param", "const"):
            value = np.asarray(node.value, dtype=node.aval.dtype)
            env[i] = np.broadcast_to(value, node.aval.shape) if value.shape != node.aval.shape \
                else value
        elif op == "failed":
            raise node.value
        elif op == "tuple_get":
            env[i] = env[operand_positions[i][0]][node.attrs[0][1]]
        else:
            positions = operand_positions[i]
            operands = [env[p] for p in positions]
            owned = (op in _CONSUMING and last_read[positions[0]] == i
                     and positions[0] not in outputs and positions.count(positions[0]) == 1
                     and _owned(operands[0], viewed))
            env[i] = _run_op(node, operands, numpy_kernels, owned)
            _note_view(env[i], viewed)
    return tuple(_to_device(env[p]) for p in program.output_positions)


#: ops whose NumPy kernel may write into its first operand when nothing reads it later
#: (``x[...] = v`` in a loop: no copy of the whole array per write, as NumPy)
_CONSUMING = frozenset({"dynamic_update_slice", "scatter", "scatter_add"})


def _owned(value, viewed: set) -> bool:
    """An intermediate NumPy array no other value shares memory with."""
    return (type(value) is np.ndarray and value.flags.owndata and value.flags.writeable
            and value.flags.c_contiguous and id(value) not in viewed)


def _note_view(value, viewed: set) -> None:
    if type(value) is np.ndarray and not value.flags.owndata:
        base = value.base
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        viewed.add(id(base))


def _releases(program: Program) -> tuple[list[tuple[int, ...]], list[int]]:
    """For each position ``i``: the values no node from ``i`` on reads (and that are no
    output), so the interpreter drops them before running ``i``. Without this every
    intermediate of the program stays alive until it ends (a 40M-element elementwise
    program held ~9x eager's memory)."""
    n = len(program.nodes)
    last_read = list(range(n))
    for i, positions in enumerate(program.operand_positions):
        for p in positions:
            last_read[p] = i
    keep = set(program.output_positions)
    release: list[list[int]] = [[] for _ in range(n + 1)]
    for p, i in enumerate(last_read):
        if p not in keep:
            release[i + 1].append(p)
    return [tuple(r) for r in release[:n]], last_read


def _run_op(node, operands: list, numpy_kernels: bool, owned: bool = False):
    attrs = dict(node.attrs) if node.attrs else {}
    if numpy_kernels:
        fn = KERNELS.get(node.op)
        if fn is not None and _numpy_ok(node, operands):
            if owned:
                attrs["owned"] = True  # the kernel may write into its first operand
            try:
                out = fn(*[np.asarray(o) for o in operands], **attrs)
            except Exception:  # noqa: BLE001 - the lowering decides what is an error
                out = None
            many = type(node.aval) is tuple  # a multi-output op's kernel gives a tuple
            outs = tuple(np.asarray(o) for o in (out if many else (out,))) if out is not None \
                else ()
            if outs and all(o.shape == a.shape and o.dtype == a.dtype for o, a in zip(
                    outs, node.aval if many else (node.aval,), strict=True)):
                return outs if many else outs[0]
    try:
        attrs.pop("owned", None)
        if node.op in _JIT_OPS:
            return _jitted(node.op, node.attrs)(*[_to_jax(o) for o in operands])
        return OPS[node.op].lower(*[_to_jax(o) for o in operands], **attrs)
    except Exception as e:
        e.lazy_op = node.op  # the runtime names it in its error, as for a compiled program
        raise


#: Ops whose lowering is itself a program of many primitives (a ``vjp`` node runs its
#: forward sub-program under ``jax.vjp``): one jit of the op compiles once per shapes,
#: where eager dispatch would compile each of its primitives on its own.
_JIT_OPS = frozenset({"vjp"})


@functools.lru_cache(maxsize=256)
def _jitted(op: str, attrs: tuple):
    return jax.jit(functools.partial(OPS[op].lower, **dict(attrs)))


def _numpy_ok(node, operands) -> bool:
    avals = node.aval if type(node.aval) is tuple else (node.aval,)  # tuple: multi-output
    return all(a.dtype in _NUMPY_DTYPES for a in avals + tuple(operands))


def _to_jax(value):
    return value if isinstance(value, jax.Array) else jax.device_put(value)


def _to_device(value):
    """A ``jax.Array`` that owns its buffer (never a view of another value's buffer,
    which a later program may donate)."""
    if isinstance(value, jax.Array):
        return value
    return jax.device_put(np.require(value, requirements="CO"))  # C order, owning its data


# -- kernels: NumPy where its semantics are XLA's --------------------------------------

def _ufunc(fn, kinds: str):
    """An elementwise kernel for dtype kinds ``kinds`` (``b`` bool, ``iu`` integers,
    ``f`` float, ``c`` complex); other kinds decline."""
    def run(*xs, **_):
        if xs[0].dtype.kind not in kinds:
            return None
        return fn(*xs)
    return run


_FLOAT = "fc"
for _name, _fn in {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "expm1": np.expm1,
    "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "div": np.true_divide,  # integers: XLA rounds toward zero
    "pow": np.power,
}.items():
    KERNELS[_name] = _ufunc(_fn, _FLOAT)
for _name, _fn in {"floor": np.floor, "ceil": np.ceil, "round_half_even": np.rint,
                   "is_finite": np.isfinite, "rem": np.fmod, "atan2": np.arctan2,
                   "logistic": lambda x: 1 / (1 + np.exp(-x))}.items():
    KERNELS[_name] = _ufunc(_fn, "f")
for _name, _fn in {"neg": np.negative, "abs": np.abs, "sub": np.subtract}.items():
    KERNELS[_name] = _ufunc(_fn, "iufc")
KERNELS.update(sign=_ufunc(np.sign, "iuf"), max=_ufunc(np.maximum, "biuf"),
               min=_ufunc(np.minimum, "biuf"))
for _name, _fn in {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
                   "not": np.invert}.items():
    KERNELS[_name] = _ufunc(_fn, "biu")
for _name, _fn in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                   "gt": np.greater, "ge": np.greater_equal, "stop_gradient": lambda x: x,
                   "real": np.real, "conj": np.conj,
                   "imag": lambda x: np.imag(x) if x.dtype.kind == "c" else np.zeros_like(x),
                   "add": lambda x, y: np.logical_or(x, y) if x.dtype == bool else x + y,
                   "mul": lambda x, y: np.logical_and(x, y) if x.dtype == bool else x * y,
                   }.items():
    KERNELS[_name] = _ufunc(_fn, "biufc")


@kernel("select")
def _select(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


@kernel("clamp")
def _clamp(lo, x, hi):
    if x.dtype.kind not in "iuf":
        return None
    return np.minimum(np.maximum(x, lo), hi)


@kernel("integer_pow")
def _integer_pow(x, *, y):
    if x.dtype.kind not in "iufc":
        return None
    return np.power(x, x.dtype.type(y)) if y >= 0 else 1 / np.power(x, x.dtype.type(-y))


@kernel("convert")
def _convert(x, *, dtype):
    dtype = canonical(dtype)
    if dtype not in _NUMPY_DTYPES:
        return None
    if dtype == np.bool_:
        return x != 0  # complex: either part nonzero (as the lowering does)
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = x.real  # numpy/torch drop the imaginary part (as the lowering does)
    if x.dtype.kind in "fc" and dtype.kind in "iu":
        return None  # NaN/inf/out of range: XLA's conversion, not C's
    return x.astype(dtype)


@kernel("broadcast_in_dim")
def _broadcast_in_dim(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), tuple(shape))


@kernel("reshape")
def _reshape(x, *, new_sizes):
    return np.reshape(x, tuple(new_sizes))


@kernel("transpose")
def _transpose(x, *, permutation):
    return np.transpose(x, tuple(permutation))


@kernel("rev")
def _rev(x, *, dimensions):
    return np.flip(x, axis=tuple(dimensions)) if dimensions else x


@kernel("slice")
def _slice(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(lo, hi, st) for lo, hi, st in
                   zip(start_indices, limit_indices, strides, strict=True))]


@kernel("concatenate")
def _concatenate(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


@kernel("pad")
def _pad(x, value, *, padding_config):
    if any(lo < 0 or hi < 0 or interior for lo, hi, interior in padding_config):
        return None
    return np.pad(x, [(lo, hi) for lo, hi, _ in padding_config], constant_values=value)


@kernel("iota")
def _iota(*, dtype, shape, dimension):
    dtype = canonical(dtype)
    if dtype not in _NUMPY_DTYPES:
        return None
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(expanded),
                           tuple(shape))


def _reduction(numeric, boolean, needs_elements: bool):
    def run(x, *, axes):
        axes = tuple(axes)
        if needs_elements and any(x.shape[a] == 0 for a in axes):
            return None  # XLA gives the identity (-inf, ...); NumPy raises
        if x.dtype == np.bool_:
            return boolean(x, axis=axes) if boolean is not None else None
        if x.dtype.kind not in "iufc":
            return None
        return numeric(x, axes)
    return run


KERNELS.update(
    reduce_sum=_reduction(lambda x, a: np.sum(x, axis=a, dtype=x.dtype), np.any, False),
    reduce_prod=_reduction(lambda x, a: np.prod(x, axis=a, dtype=x.dtype), np.all, False),
    reduce_max=_reduction(lambda x, a: None if x.dtype.kind == "c" else np.max(x, axis=a),
                          np.any, True),
    reduce_min=_reduction(lambda x, a: None if x.dtype.kind == "c" else np.min(x, axis=a),
                          np.all, True),
    reduce_and=_reduction(lambda x, a: None if x.dtype.kind not in "iu"
                          else np.bitwise_and.reduce(x, axis=a), np.all, False),
    reduce_or=_reduction(lambda x, a: None if x.dtype.kind not in "iu"
                         else np.bitwise_or.reduce(x, axis=a), np.any, False))


def _argext(fn):
    def run(x, *, axis, index_dtype):  # NaN wins, the first occurrence wins: as in lax
        if x.dtype.kind not in "biuf":
            return None
        return fn(x, axis=axis).astype(canonical(index_dtype))
    return run


# data-dependent sizes: eager jnp.nonzero/unique compile once per count (0.2-0.8 s each)
KERNELS.update(
    nonzero=lambda x, size: tuple(i.astype(np.int64) for i in np.nonzero(x)),
    unique=lambda x, size: np.unique(x),
    unique_all=lambda x, size: (lambda v, i, r, c: (
        v, i.astype(np.int64), r.reshape(x.shape).astype(np.int64), c.astype(np.int64)))(
        *np.unique(x, return_index=True, return_inverse=True, return_counts=True)),
    argmax=_argext(np.argmax), argmin=_argext(np.argmin))


@kernel("sort")
def _sort(*xs, dimension, is_stable=True, num_keys=1, descending=False):
    """lax.sort's order (stable; -0.0 equals 0.0; NaN last), the payloads carried; an
    unstable sort may order equal keys otherwise, so it declines."""
    if not is_stable:
        return None
    keys = [_flip_key(k) if descending else k for k in xs[:num_keys]]
    order = np.lexsort(keys[::-1], axis=dimension)
    return tuple(np.take_along_axis(x, order, axis=dimension) for x in xs)


def _cumulative(ufunc):
    def run(x, *, axis, reverse=False):  # floats: XLA's scan adds in another order
        if x.dtype.kind not in "iu" or not x.ndim:
            return None
        flip = functools.partial(np.flip, axis=axis) if reverse else (lambda a: a)
        return flip(ufunc.accumulate(flip(x), axis=axis, dtype=x.dtype))
    return run


KERNELS.update(cumsum=_cumulative(np.add), cumprod=_cumulative(np.multiply),
               cummax=_cumulative(np.maximum), cummin=_cumulative(np.minimum))


def _shift(fn, kind=None):
    """``fn`` on the bits read as ``kind`` (``i``: XLA's arithmetic shift replicates the
    top bit of unsigned values too); an amount outside [0, width): XLA's result, not C's."""
    def run(x, y):
        if x.dtype.kind not in "iu" or ((y < 0) | (y >= 8 * x.dtype.itemsize)).any():
            return None
        as_ = np.dtype(f"{kind or x.dtype.kind}{x.dtype.itemsize}")
        return fn(x.view(as_), y.astype(as_)).view(x.dtype)
    return run


KERNELS.update(shift_left=_shift(np.left_shift), shift_right_arithmetic=_shift(
    np.right_shift, "i"), shift_right_logical=_shift(np.right_shift, "u"))


@kernel("complex")
def _complex(x, y):
    out = np.empty(x.shape, np.result_type(x, np.complex64))
    out.real, out.imag = x, y
    return out


@kernel("dot_general")
def _dot_general(x, y, *, contracting, batch, preferred_element_type=None):
    if preferred_element_type is not None and canonical(preferred_element_type) != x.dtype:
        return None
    if x.dtype.kind not in "iufc":
        return None
    (xc, yc), (xb, yb) = contracting, batch
    x_free = [i for i in range(x.ndim) if i not in xc and i not in xb]
    y_free = [i for i in range(y.ndim) if i not in yc and i not in yb]
    b = [x.shape[i] for i in xb]
    m = [x.shape[i] for i in x_free]
    n = [y.shape[i] for i in y_free]
    k = int(np.prod([x.shape[i] for i in xc], dtype=np.int64))
    nb, nm, nn = (int(np.prod(s, dtype=np.int64)) for s in (b, m, n))
    lhs = np.transpose(x, list(xb) + x_free + list(xc)).reshape(nb, nm, k)
    rhs = np.transpose(y, list(yb) + list(yc) + y_free).reshape(nb, k, nn)
    return np.matmul(lhs, rhs).reshape(b + m + n)


@kernel("gather")
def _gather(x, indices, *, offset_dims, collapsed_slice_dims, start_index_map, slice_sizes,
            operand_batching_dims=(), start_indices_batching_dims=(), mode="clip",
            fill_value=None):
    """XLA's gather (index vector in the last dimension of ``indices``), clip mode only:
    each start index is clamped so its whole window lies inside the operand."""
    if operand_batching_dims or start_indices_batching_dims or mode != "clip" \
            or indices.dtype.kind not in "iu" or x.ndim == 0:
        return None
    batch_shape = indices.shape[:-1]
    starts = np.zeros((int(np.prod(batch_shape, dtype=np.int64)), x.ndim), np.int64)
    starts[:, list(start_index_map)] = indices.reshape(-1, indices.shape[-1])
    starts = np.clip(starts, 0, np.array(x.shape) - np.array(slice_sizes))
    n = starts.shape[0]
    grids = []
    for d, size in enumerate(slice_sizes):
        shape = [1] * (x.ndim + 1)
        shape[d + 1] = size
        grids.append(starts[:, d].reshape([n] + [1] * x.ndim)
                     + np.arange(size).reshape(shape))
    windows = x[tuple(grids)]  # (n, *slice_sizes)
    kept = [s for d, s in enumerate(slice_sizes) if d not in collapsed_slice_dims]
    windows = windows.reshape(tuple(batch_shape) + tuple(kept))
    n_batch = len(batch_shape)
    out_ndim = n_batch + len(kept)
    batch_axes = iter(range(n_batch))
    perm = [n_batch + offset_dims.index(j) if j in offset_dims else next(batch_axes)
            for j in range(out_ndim)]
    return np.transpose(windows, perm)


@kernel("dynamic_update_slice")
def _dynamic_update_slice(x, update, *starts, owned=False):
    """As ``lax.dynamic_update_slice``: a negative start counts from the end (once), then
    XLA clamps it so the whole update lies inside the operand."""
    if update.dtype != x.dtype or any(s.dtype.kind not in "iu" for s in starts):
        return None
    out = x if owned else np.array(x, copy=True)
    out[_window(x.shape, update.shape, starts)] = update
    return out


@kernel("dynamic_slice")
def _dynamic_slice(x, *starts, slice_sizes):
    return x[_window(x.shape, slice_sizes, starts)]  # a view, as _slice's


def _window(shape, widths, starts) -> tuple:
    """Each start counted from the end once if negative, then clamped so the whole
    window lies inside (XLA's dynamic slices)."""
    lows = [min(max(int(s) + n if int(s) < 0 else int(s), 0), n - w)
            for n, w, s in zip(shape, widths, starts, strict=True)]
    return tuple(slice(lo, lo + w) for lo, w in zip(lows, widths, strict=True))


def _point_scatter(combine):
    """Scatter of single elements (``x[i, j] = v`` / ``+= v`` at full index vectors in
    the last dimension of ``indices``): ``mode="fill"`` drops out-of-range updates,
    ``"clip"`` clamps them, as XLA. ``combine``: None to replace -- declined when two
    updates of different values hit one element (XLA leaves their order unspecified;
    equal ones are the padding of ``write_elements``) -- else the ufunc whose
    ``.at`` applies the updates in order, as XLA:CPU does."""
    def run(x, indices, updates, *, update_window_dims, inserted_window_dims,
            scatter_dims_to_operand_dims, operand_batching_dims=(),
            scatter_indices_batching_dims=(), mode="fill", indices_are_sorted=False,
            unique_indices=False, owned=False):
        if (update_window_dims or operand_batching_dims or scatter_indices_batching_dims
                or tuple(sorted(inserted_window_dims)) != tuple(range(x.ndim))
                or sorted(scatter_dims_to_operand_dims) != list(range(x.ndim))
                or indices.dtype.kind not in "iu" or updates.dtype != x.dtype
                or indices.shape[-1:] != (x.ndim,) or updates.shape != indices.shape[:-1]
                or x.ndim == 0 or mode not in ("fill", "clip")):
            return None
        flat_idx = indices.reshape(-1, x.ndim).astype(np.int64)
        coords = np.empty_like(flat_idx)
        coords[:, list(scatter_dims_to_operand_dims)] = flat_idx
        bounds = np.array(x.shape, dtype=np.int64)
        if mode == "clip":
            coords = np.clip(coords, 0, bounds - 1)
            values = updates.reshape(-1)
        else:
            inside = ((coords >= 0) & (coords < bounds)).all(axis=1)
            coords, values = coords[inside], updates.reshape(-1)[inside]
        flat = np.ravel_multi_index(tuple(coords.T), x.shape) if len(coords) else \
            np.zeros(0, np.int64)
        out = (x if owned else np.array(x, copy=True)).reshape(-1)
        if combine is None:
            if not _same_where_repeated(flat, values):
                return None
            out[flat] = values
        else:
            combine.at(out, flat, values)
        return out.reshape(x.shape)
    return run


def _same_where_repeated(flat, values) -> bool:
    """Every element written more than once gets one value each time."""
    order = np.argsort(flat, kind="stable")
    ends, ordered = flat[order], values[order]
    repeated = ends[1:] == ends[:-1]
    return bool((ordered[1:][repeated] == ordered[:-1][repeated]).all())


KERNELS.update(scatter=_point_scatter(None), scatter_add=_point_scatter(np.add))
