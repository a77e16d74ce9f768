"""Classic NumPy workloads, written exactly as a NumPy user would (no lazy_numpy imports)."""
