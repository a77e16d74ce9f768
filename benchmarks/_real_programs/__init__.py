"""Published NumPy programs, written the way their authors wrote them.

Each module holds one program and what the ``real_programs`` benchmark and
``tests/numpy/test_real_programs.py`` need to run it:

- ``SOURCE``: where the program was published and the size it was published at.
- ``SIZES``: ``{"tiny": ..., "published": ..., "10x": ...}`` keyword arguments of
  ``make_inputs`` (``10x``: ten times the published array size).
- ``make_inputs(**size) -> dict``: host inputs (NumPy arrays and Python scalars).
- ``STATE``: the inputs the program updates in place (given fresh to every run).
- ``program(np, inputs)``: the author's code with ``np`` the NumPy module it uses, so
  the same function runs with NumPy and with ``namespace.LAZY_NP`` over inputs wrapped
  by ``lnp.asarray``. Returns the arrays/scalars to compare. A line that had to change to
  run lazily carries a ``# CHANGED:`` comment (each is a lazy_numpy bug to fix).
- ``iterations(inputs)``: loop iterations in one run (warm time is quoted per iteration).
"""

PROGRAMS = ("game_of_life", "mandelbrot", "softmax_loss", "softmax_regression",
            "two_layer_net", "nbody", "kmeans", "heat_diffusion", "black_scholes",
            "mnist_scratch")
