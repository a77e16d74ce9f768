"""Shared by every test directory: hypothesis runs derandomized (deterministic CI), and
programs compile before their first run (``LAZYCORE_TIER=compile``) so compile and
cache counters are exact; ``tests/core/test_tiers.py`` covers the other tiers, and
``LAZYCORE_TIER=interpret pytest ...`` runs any suite through the interpreter."""

import os

import pytest
from hypothesis import settings

os.environ.setdefault("LAZYCORE_TIER", "compile")  # read when lazycore is imported

settings.register_profile("lazytensor", derandomize=True, database=None, deadline=None)
settings.load_profile("lazytensor")


@pytest.fixture(params=["compile", "interpret"])
def tier(request):
    """The test once per execution tier (compiled program, interpreter): both are held to
    the same eager oracle. Background compiles are waited for before the tier is restored."""
    import lazycore as lc

    old = lc.settings.tier
    lc.configure(tier=request.param)
    try:
        yield request.param
    finally:
        lc.tiers.wait_compiles()
        lc.configure(tier=old)
