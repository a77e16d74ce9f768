"""The user's line that caused something: the first frame outside lazycore and the
frontends. A bottom module (it imports nothing of lazycore), so the checks, the
diagnostics, the source recorder and the runtime all name sites without importing
each other."""

from __future__ import annotations

import os
import sys

_internal_paths: list[str] = [os.path.dirname(os.path.abspath(__file__))]
_internal_files: dict[str, bool] = {}  # filename -> under a registered internal path


def _call_site() -> str:
    frame = sys._getframe(1)
    internal = _internal_files
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = internal.get(filename)
        if inside is None:
            if len(internal) > 4096:
                internal.clear()
            inside = internal[filename] = any(filename.startswith(p) for p in _internal_paths)
        if not inside:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def register_internal_path(path: str) -> None:
    """Frames under ``path`` are skipped when naming the user code that caused a sync."""
    path = os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else path
    if path not in _internal_paths:
        _internal_paths.append(path)
        _internal_files.clear()
