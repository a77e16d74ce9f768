"""``LAZYCORE_DUMP_DIR``: every compiled graph written to disk, to read or diff.

Each compile writes three files named after the HLO module (``lazy_<graph id>``, the
``graph=`` of the sync log line) and a running number:
``<n>-lazy_<id>.ir.txt`` (the lazycore IR, each op with the ``file:line`` that recorded
it when sources are on), ``.stablehlo.mlir`` (what XLA receives) and ``.hlo.txt``
(the optimized HLO after XLA's passes: what runs).
"""

from __future__ import annotations

import itertools
import os

from .config import settings
from .listing import program_ir_text
from .lowering import module_name

_counter = itertools.count(1)


def write(program, lowered, executable, site: str) -> list[str]:
    """Write the three files of one compile; returns their paths."""
    directory = os.path.expanduser(settings.dump_dir)
    os.makedirs(directory, exist_ok=True)
    stem = os.path.join(directory, f"{next(_counter):04d}-{module_name(program)}")
    header = f"// compiled for the sync at {site}\n"
    texts = {".ir.txt": header + program_ir_text(program),
             ".stablehlo.mlir": lowered.as_text(),
             ".hlo.txt": _optimized(executable)}
    paths = []
    for suffix, text in texts.items():
        with open(stem + suffix, "w") as f:
            f.write(text)
        paths.append(stem + suffix)
    return paths


def _optimized(executable) -> str:
    try:
        return executable.as_text() or ""
    except Exception as e:  # noqa: BLE001 - e.g. a deserialized executable without text
        return f"// optimized HLO unavailable: {type(e).__name__}: {e}"
