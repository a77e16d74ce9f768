"""``torch._foreach_*`` (optimizers' multi-tensor paths): one per-tensor op per element.

Each foreach overload is mapped once (cached) onto the per-element overload that
eager's own ``CompositeExplicitAutograd`` slow kernel calls (``_foreach_add_.List``
-> ``add_.Tensor``, ``_foreach_addcdiv_.ScalarList`` -> ``addcdiv_.default`` with
``value=``, ``_foreach_maximum_.List`` -> ``clamp_min_.Tensor``, ``_foreach_norm`` ->
``linalg_vector_norm``, ...). An element whose arguments hold a lazy tensor goes
straight to lazy_torch's handler for that overload (``_dispatch.dispatch``), without
a round trip through PyTorch's dispatcher and ``__torch_dispatch__``; so it takes the
same lowering (and in-place/view semantics) as the single-tensor optimizer path.
Elements with no lazy tensor (CPU step counters) run eagerly as before. An overload
whose per-element schema does not line up argument by argument (names, types,
defaults) keeps the old behaviour: calling the ATen packet per element.
"""

from __future__ import annotations

import torch

from .. import _tensor
from .._tensor import LazyTensor

aten = torch.ops.aten

_VALUE_KWARG = ("addcmul", "addcdiv")
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

_PLANS: dict = {}
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
    """The per-element OpOverload a foreach overload runs (None: the packet fallback)."""
    plan = _PLANS.get(func, _MISSING)
    if plan is _MISSING:
        plan = _PLANS[func] = _plan(func)
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
    plan = _PLANS.get(func, _MISSING)
    if plan is _MISSING:
        plan = _PLANS[func] = _plan(func)
    n = _check(func, args, kwargs)
    if plan is None or n is None:
        return _by_packet(func, args, kwargs)
    names = func._schema.arguments
    specs = plan.specs
    fixed_pos, fixed_kw, each_pos, each_kw = {}, {}, [], []
    for i, a in enumerate(args):
        _place(specs[names[i].name], a, fixed_pos, fixed_kw, each_pos, each_kw)
    for key, a in kwargs.items():
        spec = specs.get(key)
        if spec is None:
            return _by_packet(func, args, kwargs)
        _place(spec, a, fixed_pos, fixed_kw, each_pos, each_kw)
    npos = len(fixed_pos) + len(each_pos)
    if sorted([*fixed_pos, *(j for j, _ in each_pos)]) != list(range(npos)):
        return _by_packet(func, args, kwargs)  # a gap: an omitted positional argument
    base = [fixed_pos.get(j) for j in range(npos)]
    elem = plan.elem
    dispatch = _tensor._dispatch
    out = []
    for k in range(n):
        pos = base.copy()
        for j, seq in each_pos:
            pos[j] = seq[k]
        kw = fixed_kw.copy() if fixed_kw else {}
        for key, seq in each_kw:
            kw[key] = seq[k]
        route = _route(pos, kw)
        if route:
            out.append(dispatch(elem, tuple(pos), kw))
        else:
            out.append(elem(*pos, **kw))
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


def _by_packet(func, args, kwargs):
    """The per-element ATen packet through the dispatcher (overloads without a plan)."""
    name = func._schema.name.split("::")[1][len("_foreach_"):]
    packet = getattr(aten, name)
    names = [a.name for a in func._schema.arguments]
    lists = {}
    for i, a in enumerate(args):
        arg_name = names[i] if i < len(names) else ""
        if isinstance(a, torch.Tensor) and arg_name == "scalars":
            lists[i] = a.tolist()
        elif isinstance(a, list | tuple):
            lists[i] = a
    n = len(next(iter(lists.values())))
    out = []
    for k in range(n):
        elem = [lists[i][k] if i in lists else a for i, a in enumerate(args)]
        kw = {key: (v[k] if isinstance(v, list | tuple) else v) for key, v in kwargs.items()}
        if name.rstrip("_") in _VALUE_KWARG and len(elem) == 4:
            kw["value"] = elem.pop()  # foreach passes the scalar positionally
        out.append(packet(*elem, **kw))
    return None if name.endswith("_") else out


from . import optim  # noqa: E402,F401 - registers the fused optimizer steps
