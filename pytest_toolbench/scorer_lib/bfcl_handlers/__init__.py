"""BFCL's local-model handlers (bfcl-eval 2026.3.23) re-implemented as pure functions: which handler a leaderboard
row uses (:mod:`.registry`), the prompt text each handler writes, and how each handler decodes a reply.

A scorer library (importable by the backends, which render, and by the BFCL scorer, which decodes); standard library
only. Checked byte for byte against the official handlers by ``tests/test_bfcl_handlers.py`` on fixtures frozen by
``scripts/make_handler_oracle.py``.
"""

from .registry import REGISTRY_SOURCE, BfclRow, UnknownBfclRow, bfcl_row, bfcl_rows, rows_for_checkpoint

__all__ = ["REGISTRY_SOURCE", "BfclRow", "UnknownBfclRow", "bfcl_row", "bfcl_rows", "rows_for_checkpoint"]
