"""lazytensor benchmarks: every frontend against what its users would otherwise run.

``python -m benchmarks`` (or ``nox -s bench``) runs each module here that defines
``run(quick: bool) -> list[dict]`` and writes ``benchmarks/results/latest.json`` plus a
markdown report; ``--quick`` runs everything at tiny sizes (CI). See docs/performance.md.
"""
