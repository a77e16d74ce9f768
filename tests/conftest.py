"""Shared by every test directory: hypothesis runs derandomized (deterministic CI)."""

from hypothesis import settings

settings.register_profile("lazytensor", derandomize=True, database=None, deadline=None)
settings.load_profile("lazytensor")
