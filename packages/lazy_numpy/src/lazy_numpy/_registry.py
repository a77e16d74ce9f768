"""The ``__array_function__`` table: NumPy function -> lazy implementation.

Implementations register with ``@implements(np.sum)`` and take NumPy's signature.
An implementation raises ``NotLazy`` for arguments it cannot trace; then (as for
any function not in the table) the call runs in real NumPy on materialized data,
counted as ``fallback::numpy.<name>``.
"""

from __future__ import annotations

from . import _fallback
from ._convert import HostOnlyDtype, numpy_errors
from ._fallback import NotLazy

FUNCTIONS: dict = {}

# functions that write into one of their arguments: position of that argument
IN_PLACE: dict = {}


def implements(*np_funcs):
    def register(impl):
        for f in np_funcs:
            if FUNCTIONS.get(f) is impl:
                continue
            if f in FUNCTIONS:
                raise ValueError(f"{qualname(f)} is already implemented")
            FUNCTIONS[f] = impl
        return impl
    return register


def qualname(func) -> str:
    module = getattr(func, "__module__", "numpy") or "numpy"
    module = module.replace("numpy._core.", "numpy.").replace("numpy.lib._", "numpy.")
    name = getattr(func, "__name__", repr(func))
    if module.startswith("numpy.linalg"):
        return f"linalg.{name}"
    if module.startswith("numpy.fft"):
        return f"fft.{name}"
    return name


# reductions of an unsettled boolean selection (``_masked``; it imports ``_indexing``,
# which imports this module, so it is loaded at the first call)
_SELECTIONS: dict = {}


@numpy_errors
def array_function(func, types, args, kwargs):
    if not _SELECTIONS:
        from ._masked import REDUCERS
        _SELECTIONS.update(REDUCERS)
    selection = _SELECTIONS.get(func)
    if selection is not None and args:
        result = selection(*args, **kwargs)
        if result is not NotImplemented:
            return result
    impl = FUNCTIONS.get(func)
    if impl is not None:
        try:
            return impl(*args, **kwargs)
        except (NotLazy, HostOnlyDtype):  # np.where(mask, 'yes', 'no'): NumPy's array
            pass
    outs = []
    if kwargs.get("out") is not None:
        out = kwargs["out"]
        outs.extend(out if isinstance(out, tuple) else (out,))
    if func in IN_PLACE and len(args) > IN_PLACE[func]:
        outs.append(args[IN_PLACE[func]])
    return _fallback.run(qualname(func), func, args, kwargs, outs)
