"""lazy_tf: lazytensor frontend (placeholder; to be replaced)."""
