"""lazy_numpy: lazytensor frontend (placeholder; to be replaced)."""
