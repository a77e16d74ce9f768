"""``torch.autocast("lazy")``: PyTorch's CPU autocast policy on the lazy device.

PyTorch registers autocast kernels per device in C++ (``AutocastCPU``, ``AutocastCUDA``,
...) and none for ``AutocastPrivateUse1``, so without these kernels every op under
``torch.autocast("lazy")`` fails. The policy is the one eager PyTorch applies under
``torch.autocast("cpu")`` -- the eager run this project can compare against -- so a
program gives the same dtypes with ``device="cpu"`` and ``device="lazy"``. The set of
ops is read from PyTorch itself (every op with an ``AutocastCPU`` kernel); the small
lower-precision and promote lists below say which of them do not run in float32.

The cast rules are autocast's own: only floating tensors on the lazy device are cast,
never float64; lower-precision ops cast to the autocast dtype, float32 ops to float32,
promote ops to the widest floating dtype among their tensor arguments.
"""

from __future__ import annotations

import torch

_KEY = "AutocastPrivateUse1"
_LIB = None

# ops PyTorch's CPU autocast runs in the lower-precision dtype (autocast_mode.cpp)
LOWER_PRECISION = frozenset({
    "_addmm_activation", "_convolution.deprecated", "_native_multi_head_attention", "addbmm",
    "addmm", "baddbmm", "bmm", "conv1d", "conv1d.padding", "conv2d", "conv2d.padding",
    "conv3d", "conv3d.padding", "conv_tbc", "conv_transpose1d", "conv_transpose2d.input",
    "conv_transpose3d.input", "linalg_vecdot", "linear", "matmul", "mkldnn_rnn_layer", "mm",
    "prelu", "scaled_dot_product_attention",
})
# ops that run in the widest floating dtype of their inputs
PROMOTE = frozenset({"cat", "stack", "index_copy"})
# every other op with an AutocastCPU kernel runs in float32


def _eligible(t) -> bool:
    return (isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64
            and t.device.type == "lazy")


def _cast(v, dtype):
    if _eligible(v) and v.dtype != dtype:
        return v.to(dtype)
    if isinstance(v, list | tuple) and any(_eligible(x) for x in v):
        return type(v)(_cast(x, dtype) for x in v)
    return v


def _widest(args, kwargs):
    widest = None
    for v in (*args, *kwargs.values()):
        for t in (v if isinstance(v, list | tuple) else (v,)):
            if _eligible(t):
                widest = t.dtype if widest is None else torch.promote_types(widest, t.dtype)
    return widest


_EXCLUDE = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)


def _kernel(op, policy: str):
    def run(*args, **kwargs):
        if policy == "lower":
            dtype = torch.get_autocast_dtype("lazy")
        elif policy == "fp32":
            dtype = torch.float32
        else:
            dtype = _widest(args, kwargs)
        if dtype is not None:
            args = tuple(_cast(a, dtype) for a in args)
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            return op(*args, **kwargs)
    return run


def _overload(qualified: str):
    name, _, overload = qualified.partition("::")[2].partition(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return None
    return getattr(packet, overload or "default", None)


def install() -> None:
    """Register the policy for every op PyTorch's CPU autocast covers."""
    global _LIB
    if _LIB is not None:
        return
    fallthrough = torch.library.Library("_", "IMPL")
    fallthrough.fallback(torch.library.fallthrough_kernel, _KEY)  # every other op: no cast
    lib = torch.library.Library("aten", "IMPL")
    for qualified in torch._C._dispatch_get_all_op_names():
        if not (qualified.startswith("aten::")
                and torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "AutocastCPU")):
            continue
        op = _overload(qualified)
        if op is None:
            continue
        short = qualified[len("aten::"):]
        policy = ("lower" if short in LOWER_PRECISION else "promote" if short in PROMOTE
                  else "fp32")
        lib.impl(short, _kernel(op, policy), _KEY)
    _LIB = (lib, fallthrough)
