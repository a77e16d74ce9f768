"""Composites: ops built from primitives, shared by every frontend.

Grouped by family; ``lazycore.numeric`` re-exports them as one namespace.
"""
