"""TensorFlow comes from the user's choice of package: ``tensorflow`` or
``tensorflow-cpu`` (both provide the ``tensorflow`` module). lazy_tf depends on neither,
so installing it never pulls a second TensorFlow next to the one a user has; the extras
``lazy_tf[cpu]`` / ``lazy_tf[tensorflow]`` install one. This module runs first on import
and names the fix when TensorFlow is missing or of a release lazy_tf was not built for.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util

#: The TensorFlow release line lazy_tf's tables and tests are written against.
SUPPORTED = "2.21"
_INSTALL = ("pip install 'lazy_tf[cpu]' (tensorflow-cpu) or 'lazy_tf[tensorflow]'"
            f" (tensorflow), or install TensorFlow {SUPPORTED}.x yourself")


def installed_distribution() -> str | None:
    """Which package provides ``tensorflow`` here (``tensorflow`` / ``tensorflow-cpu``)."""
    for name in ("tensorflow", "tensorflow-cpu"):
        try:
            importlib.metadata.version(name)
            return name
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def check() -> None:
    if importlib.util.find_spec("tensorflow") is None:
        raise ImportError(f"lazy_tf needs TensorFlow, which is not installed: {_INSTALL}")
    import tensorflow as tf

    version = getattr(tf, "__version__", "")
    if version.split(".")[:2] != SUPPORTED.split("."):
        raise ImportError(f"lazy_tf supports TensorFlow {SUPPORTED}.x, found {version}"
                          f" ({installed_distribution() or 'tensorflow'}): {_INSTALL}")


check()
