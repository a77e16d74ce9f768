"""``torch._foreach_*`` (optimizers' multi-tensor paths): ONE node per call once warm.

Each foreach overload is mapped once (cached) onto the per-element overload that
eager's own ``CompositeExplicitAutograd`` slow kernel calls (``_foreach_add_.List``
-> ``add_.Tensor``, ``_foreach_addcdiv_.ScalarList`` -> ``addcdiv_.default`` with
``value=``, ``_foreach_maximum_.List`` -> ``clamp_min_.Tensor``, ``_foreach_norm`` ->
``linalg_vector_norm``, ...). An element whose arguments hold a lazy tensor goes
straight to lazy_torch's handler for that overload (``_dispatch.dispatch``), without
a round trip through PyTorch's dispatcher; so it takes the same lowering (and
in-place/view semantics) as the single-tensor optimizer path. Elements with no lazy
tensor (CPU step counters) run eagerly as before.

A call whose tensors are all lazy and alias nothing at another position, seen a second
time with the same signature (the tensors' avals, every other argument's value), runs
those elements once on placeholders into a ``lazycore.subprogram`` (``optim.subprogram``):
from then on each call records ONE ``call`` node whose results are stored into the
lists (views write through, versions bump) or returned as new tensors. The trace is the
per-element path itself, so values, dtypes and promotion are the same; a trace that
raises leaves the per-element path to raise eager's error. An overload with no
matching per-element schema (``_foreach_powsum``, ``out=``) runs eager's CPU kernel.
"""

from __future__ import annotations

import functools

import torch

from .. import _tensor
from .._fallback import fallback as _fallback
from .._tensor import LazyTensor, read, wrap, write
from .optim import subprogram

aten = torch.ops.aten

_CIA = torch._C.DispatchKey.CompositeImplicitAutograd
_PLAIN_DISPATCH = torch.Tensor.__torch_dispatch__
_increment_version = torch._C._increment_version

# eager's slow kernels: foreach maximum/minimum are clamp_min/clamp_max per tensor
# (native_functions.yaml), foreach norm is linalg_vector_norm(t, ord, {}, False, dtype)
_RENAME = {"maximum": "clamp_min", "minimum": "clamp_max", "norm": "linalg_vector_norm"}
# per-element overload names to try, in order, for each foreach overload name
_CANDIDATES = {"default": ("default",),
               "List": ("Tensor", "Tensor_Tensor", "default"),
               "Scalar": ("Scalar", "Tensor_Scalar", "default"),
               "ScalarList": ("Scalar", "Tensor_Scalar", "default"),
               "Tensor": ("Tensor", "default"),
               "ScalarAndTensor": ("Scalar",)}

# how one foreach argument becomes the element's argument
_EACH, _SCALARS, _SAME = range(3)  # list indexed per element / packed 1-D scalars / as is

_PROGRAMS: dict = {}  # signature -> Subprogram; False: seen once; None: the trace failed
_MISSING = object()


def is_foreach(func) -> bool:
    return func._schema.name.startswith("aten::_foreach_")


# -- planning (once per foreach overload) -----------------------------------------------------

class _Plan:
    __slots__ = ("elem", "specs", "inplace")

    def __init__(self, elem, specs, inplace):
        self.elem = elem          # the per-element OpOverload
        self.specs = specs        # foreach arg name -> (how, positional index or kwarg name)
        self.inplace = inplace


def _elem_overloads(func):
    name = func._schema.name.split("::")[1][len("_foreach_"):]
    inplace = name.endswith("_")
    base = name[:-1] if inplace else name
    base = _RENAME.get(base, base)
    packet = getattr(aten, base + ("_" if inplace else ""), None)
    if packet is None:
        return []
    out = []
    for ov in _CANDIDATES.get(func._overloadname, ()):
        op = getattr(packet, ov, None) if ov in packet.overloads() else None
        if op is not None:
            out.append(op)
    return out


def _how(farg, earg):
    """How the foreach argument feeds the element's argument (None: they do not fit)."""
    ft, et = farg.type, earg.type
    if isinstance(et, torch.OptionalType) and not isinstance(ft, torch.OptionalType):
        et = et.getElementType()
    if ft == et:
        return _SAME
    if isinstance(ft, torch.ListType) and ft.getElementType() == et:
        return _EACH
    if farg.name == "scalars" and ft == torch.TensorType.get() and et == torch.NumberType.get():
        return _SCALARS
    return None


def _match(func, elem):
    """foreach arg name -> (how, target) when ``elem`` takes exactly the same arguments."""
    fargs = func._schema.arguments
    eargs = elem._schema.arguments
    if len(func._schema.returns) > 1 or len(elem._schema.returns) != 1:
        return None
    by_name = {a.name: j for j, a in enumerate(eargs)}
    positional = [j for j, a in enumerate(eargs) if not a.kwarg_only]
    kwonly = [j for j, a in enumerate(eargs) if a.kwarg_only]
    claimed = {by_name[a.name] for a in fargs if a.name in by_name}
    free_pos = [j for j in positional if j not in claimed]
    free_kw = [j for j in kwonly if j not in claimed]
    specs, used = {}, set()
    for i, fa in enumerate(fargs):
        j = by_name.get(fa.name)
        if j is None:
            if fa.kwarg_only:
                return None
            if i < len(positional) and positional[i] in free_pos:
                j = positional[i]
            elif i >= len(positional) and free_kw:
                j = free_kw.pop(0)
            else:
                return None
        if j in used:
            return None
        used.add(j)
        ea = eargs[j]
        how = _how(fa, ea)
        if how is None:
            return None
        # an omitted foreach argument must mean the element's default
        if fa.has_default_value() and (not ea.has_default_value()
                                       or fa.default_value != ea.default_value):
            return None
        if i == 0 and how != _EACH and fa.type != torch.NumberType.get():
            return None
        specs[fa.name] = (how, ea.name if ea.kwarg_only else j)
    for j, ea in enumerate(eargs):
        if j not in used and not ea.has_default_value():
            return None
    positions = sorted(t for _, t in specs.values() if isinstance(t, int))
    if positions != list(range(len(positions))):
        return None
    return specs


@functools.cache
def _plan(func):
    if func._overloadname not in _CANDIDATES:
        return None
    inplace = func._schema.name.endswith("_")
    for elem in _elem_overloads(func):
        if elem.has_kernel_for_dispatch_key(_CIA):
            continue  # the dispatcher would decompose it before lazy_torch sees it
        specs = _match(func, elem)
        if specs is not None:
            return _Plan(elem, specs, inplace)
    return None


def element_overload(func):
    """The per-element OpOverload a foreach overload runs (None: the CPU fallback)."""
    plan = _plan(func)
    return None if plan is None else plan.elem


# -- eager's argument checks (check_foreach_api_restrictions) ---------------------------------

_TLIST, _SLIST, _PACKED, _SCALAR_TENSOR = range(4)
_KINDS: dict = {}


def _kinds(func):
    """(position, name, kind) of the arguments eager's checks look at."""
    out = []
    tensor = torch.TensorType.get()
    for i, a in enumerate(func._schema.arguments):
        t = a.type
        if isinstance(t, torch.ListType):
            kind = _SLIST if t.getElementType() == torch.NumberType.get() else _TLIST
        elif a.name == "scalars" and t == tensor:
            kind = _PACKED
        elif a.name == "other" and func._overloadname == "Tensor" and t == tensor:
            kind = _SCALAR_TENSOR
        else:
            continue
        out.append((i, a.name, kind))
    return tuple(out)


def _check(func, args, kwargs) -> int | None:
    """Eager's argument checks; returns the number of elements."""
    kinds = _KINDS.get(func)
    if kinds is None:
        kinds = _KINDS[func] = _kinds(func)
    nargs = len(args)
    n = None
    tensor_lists, scalar_lists, packed = [], [], None
    for i, name, kind in kinds:
        v = args[i] if i < nargs else kwargs.get(name)
        if v is None:
            continue
        if kind == _TLIST:
            tensor_lists.append(v)
        elif kind == _SLIST:
            scalar_lists.append(v)
        elif kind == _PACKED:
            packed = v
        elif v.dim() or v.numel() != 1:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {v.dim()} "
                               f"dimensions and {v.numel()} elements.")
    if tensor_lists:
        n = len(tensor_lists[0])
    if packed is not None and n is not None:
        if packed.dim() != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got "
                               f"{packed.dim()} instead.")
        if packed.shape[0] != n:
            raise RuntimeError(f"Expected length of scalars to match input of length {n} but "
                               f"got {packed.shape[0]} instead.")
    if n == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in tensor_lists[1:]:
        if len(other) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} "
                               f"and {len(other)}")
    for other in scalar_lists:
        if len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return n


# -- the handler ----------------------------------------------------------------------------------

def foreach(func, args, kwargs):
    plan = _plan(func)
    n = _check(func, args, kwargs)
    if plan is None or n is None:
        return _fallback(func, args, kwargs)  # no per-element overload (powsum, out=)
    found = _signature(func, args, kwargs)
    program = found and _program(func, plan, n, args, kwargs, *found)
    if not program:
        return _elements(func, plan, n, args, kwargs)
    values = program(*found[1])
    if not plan.inplace:
        return [wrap(v, fresh=True) for v in values]
    for t, v in zip(args[0], values, strict=True):
        write(t, v)  # the trace stored into the placeholder: t's dtype and shape already
    _increment_version(args[0])


def _signature(func, args, kwargs):
    """(key, values) of an all-lazy call: the tensors' avals and the other arguments' reprs
    (-0.0 is not 0.0). None: a tensor is not lazy, or shares storage with a tensor at
    another position (in place, eager's later elements read the earlier writes)."""
    key, values, cells = [func, repr(kwargs)], [], {}
    for a in args:
        for k, t in enumerate(a) if isinstance(a, list | tuple) else ((-1, a),):
            if not isinstance(t, torch.Tensor):
                key.append(repr(t))
            elif type(t) is not LazyTensor or cells.setdefault(id(t._cell), k) != k:
                return None
            else:
                values.append(read(t))
                key.append(values[-1].aval)
    return tuple(key), values


def _program(func, plan, n, args, kwargs, key, values):
    """This signature's ``lazycore.subprogram`` of the elements (ONE ``call`` node per
    call), traced the second time it is seen: a scalar that changes every step (Adam's
    bias corrections) never pays for a trace. Falsy meanwhile, or where the trace failed
    (the elements then raise eager's error, after eager's writes to earlier elements)."""
    program = _PROGRAMS.pop(key, _MISSING)
    if program is False:
        def build(ts):
            swapped = _swap(args, iter(ts))
            out = _elements(func, plan, n, swapped, kwargs)
            return swapped[0] if plan.inplace else out
        try:
            program = subprogram(values, build)
        except Exception:  # noqa: BLE001 - see above
            program = None
    _PROGRAMS[key] = False if program is _MISSING else program
    if len(_PROGRAMS) > 2048:
        del _PROGRAMS[next(iter(_PROGRAMS))]
    return program is not _MISSING and program


def _swap(a, fresh):
    if isinstance(a, list | tuple):
        return [_swap(t, fresh) for t in a]
    return next(fresh) if isinstance(a, torch.Tensor) else a


def _elements(func, plan, n, args, kwargs):
    """Eager's slow kernel: the per-element overload on each element in turn."""
    names = func._schema.arguments
    specs = plan.specs
    fixed_pos, fixed_kw, each_pos, each_kw = {}, {}, [], []
    for i, a in enumerate(args):
        _place(specs[names[i].name], a, fixed_pos, fixed_kw, each_pos, each_kw)
    for key, a in kwargs.items():
        _place(specs[key], a, fixed_pos, fixed_kw, each_pos, each_kw)
    npos = len(fixed_pos) + len(each_pos)
    base = [fixed_pos.get(j) for j in range(npos)]
    elem = plan.elem
    dispatch = _tensor._dispatch
    out = []
    for k in range(n):
        pos = base.copy()
        for j, seq in each_pos:
            pos[j] = seq[k]
        kw = dict(fixed_kw)
        for key, seq in each_kw:
            kw[key] = seq[k]
        out.append(dispatch(elem, tuple(pos), kw) if _route(pos, kw) else elem(*pos, **kw))
    if plan.inplace:
        # eager's slow kernel bumps each tensor's version (its per-element in-place ops
        # pass ADInplaceOrView); under ``__torch_dispatch__`` that layer is already passed
        _increment_version(args[0])
        return None
    return out


def _place(spec, a, fixed_pos, fixed_kw, each_pos, each_kw):
    how, target = spec
    if how == _SAME:
        if isinstance(target, int):
            fixed_pos[target] = a
        else:
            fixed_kw[target] = a
        return
    seq = a.tolist() if how == _SCALARS else a
    if isinstance(target, int):
        each_pos.append((target, seq))
    else:
        each_kw.append((target, seq))


def _route(pos, kw) -> bool:
    """True: straight to lazy_torch's handler (a lazy tensor and nothing else that
    dispatches). False: through PyTorch's dispatcher (plain CPU elements, other
    tensor subclasses), as eager's slow kernel would."""
    lazy = False
    for v in (*pos, *kw.values()) if kw else pos:
        if isinstance(v, torch.Tensor):
            if isinstance(v, LazyTensor):
                lazy = True
            elif type(v).__torch_dispatch__ is not _PLAIN_DISPATCH:
                return False
    return lazy
