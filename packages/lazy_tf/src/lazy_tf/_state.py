"""Mutable frontend state shared by the tape and the dispatcher (no imports: no cycles)."""

from __future__ import annotations

active_tapes: list = []     # GradientTapes inside their ``with`` block, innermost last
stopped: list[int] = [0]    # >0 while some tape's ``stop_recording()`` is active
capture: list = [None]      # the ``_capture._Trace`` of the tf.function being captured
keras: dict = {"enabled": False, "original": None}  # ``lazy_tf.keras.enable()``'s state
