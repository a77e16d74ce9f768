"""``torch.compile(model, backend="lazytensor")``: Dynamo graphs run on the lazy device.

The backend is found by name through the ``torch_dynamo_backends`` entry point of the
``lazy_torch`` distribution; importing this module registers it too (a source checkout
without the installed entry point) and makes Dynamo see lazy tensors as tensors, which
any backend needs (``backend="eager"`` or ``"aot_eager"`` on lazy tensors: import this
module first).
"""

from __future__ import annotations

from ._fakeable import install as _install
from .backend import lazytensor

backend = lazytensor

_install()


def _register() -> None:
    from torch._dynamo.backends import registry

    if "lazytensor" not in registry._COMPILER_FNS:
        registry._lazy_import()  # discovers entry points first
        if registry._BACKENDS.get("lazytensor") is None:
            registry.register_backend(lazytensor, name="lazytensor")


_register()

__all__ = ["backend", "lazytensor"]
