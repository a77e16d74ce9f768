"""Generates the supported-function list of ``docs/lazy_numpy.md`` from the dispatch tables.

Run ``python -m lazy_numpy._doc [path/to/docs/lazy_numpy.md]`` to rewrite the section
between the ``BEGIN/END GENERATED`` markers; ``tests/numpy/test_docs.py`` fails when
the page is stale, so the list is never hand-kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BEGIN = "<!-- BEGIN GENERATED: supported functions (python -m lazy_numpy._doc) -->"
END = "<!-- END GENERATED -->"


def ufunc_names() -> list[str]:
    from ._kernels import KERNELS

    return sorted(n for n in KERNELS if isinstance(getattr(np, n, None), np.ufunc))


def ufunc_methods() -> dict[str, list[str]]:
    from ._ufuncs import _ACCUMULATORS, _REDUCERS

    return {"reduce": sorted(_REDUCERS), "accumulate": sorted(_ACCUMULATORS),
            "outer": ["every ufunc above"], "at": ["add", "subtract"]}


def function_names() -> dict[str, list[str]]:
    from ._registry import FUNCTIONS, qualname

    groups: dict[str, set[str]] = {"numpy": set(), "numpy.linalg": set(), "numpy.fft": set()}
    for func in FUNCTIONS:
        name = qualname(func)
        if name.startswith("linalg."):
            groups["numpy.linalg"].add(name[7:])
        elif name.startswith("fft."):
            groups["numpy.fft"].add(name[4:])
        else:
            groups["numpy"].add(name)
    return {k: sorted(v) for k, v in groups.items()}


def array_api_names() -> list[str]:
    from . import array_api

    return sorted(n for n in dir(array_api) if not n.startswith("_") and callable(
        getattr(array_api, n)) and n not in ("LazyArray",) and not isinstance(
        getattr(array_api, n), type))


def _names(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def render() -> str:
    from . import random
    from ._array import METHOD_ALIASES, LazyArray

    lines = [BEGIN, "", f"### Ufuncs ({len(ufunc_names())}, traced through `__array_ufunc__`)",
             "", _names(ufunc_names()), "", "Ufunc methods:", ""]
    for method, names in ufunc_methods().items():
        lines.append(f"- `.{method}`: {_names(names) if names[0] != 'every ufunc above' else names[0]}")
    for group, names in function_names().items():
        lines += ["", f"### `{group}` functions ({len(names)}, through `__array_function__`)",
                  "", _names(names)]
    own = sorted(n for n in vars(LazyArray) if not n.startswith("_"))
    methods = sorted(set(own) | set(METHOD_ALIASES))
    lines += ["", f"### `LazyArray` methods and attributes ({len(methods)})", "",
              _names(methods)]
    gen = sorted(n for n in vars(random.Generator) if not n.startswith("_"))
    lines += ["", "### `lnp.random`", "", "Every `numpy.random` function and `Generator`/"
              f"`RandomState` method, NumPy's draws; a LazyArray stays lazy in {_names(gen)}"]
    api = array_api_names()
    lines += ["", f"### Array API namespace ({len(api)} functions, plus `linalg` and `fft`)",
              "", _names(api), "", END]
    return "\n".join(lines)


def update(path: Path) -> bool:
    """Rewrite the generated section; returns True when the file changed."""
    text = path.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    new = text[:start] + render() + text[end:]
    if new != text:
        path.write_text(new)
    return new != text


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/lazy_numpy.md")
    print(("updated " if update(target) else "up to date: ") + str(target))
