"""docs/lazy_numpy.md lists the supported functions generated from the dispatch tables."""

from __future__ import annotations

from pathlib import Path

from lazy_numpy import _doc

DOC = Path(__file__).resolve().parents[2] / "docs" / "lazy_numpy.md"


def test_supported_function_list_is_generated_and_current():
    text = DOC.read_text()
    start, end = text.index(_doc.BEGIN), text.index(_doc.END) + len(_doc.END)
    assert text[start:end] == _doc.render(), "run: python -m lazy_numpy._doc"


def test_lists_come_from_the_tables():
    from lazy_numpy._kernels import KERNELS
    from lazy_numpy._registry import FUNCTIONS

    assert len(_doc.ufunc_names()) > 80
    assert set(_doc.ufunc_names()) <= set(KERNELS)
    total = sum(len(v) for v in _doc.function_names().values())
    assert total >= len({id(f) for f in FUNCTIONS}) - 5  # aliases share a name
    assert "inv" in _doc.function_names()["numpy.linalg"]
    assert "rfft" in _doc.function_names()["numpy.fft"]
