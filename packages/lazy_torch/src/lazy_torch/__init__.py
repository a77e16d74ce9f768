"""lazy_torch: lazytensor frontend (placeholder; to be replaced)."""
