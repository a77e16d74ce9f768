"""Shared by every test directory: hypothesis runs derandomized (deterministic CI), and
programs compile before their first run (``LAZYCORE_TIER=compile``) so compile and
cache counters are exact; ``tests/core/test_tiers.py`` covers the other tiers, and
``LAZYCORE_TIER=interpret pytest ...`` runs any suite through the interpreter."""

import os

from hypothesis import settings

os.environ.setdefault("LAZYCORE_TIER", "compile")  # read when lazycore is imported

settings.register_profile("lazytensor", derandomize=True, database=None, deadline=None)
settings.load_profile("lazytensor")
