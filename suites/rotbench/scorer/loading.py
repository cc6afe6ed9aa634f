"""RoTBench's data files (``<Turn>/<level>.json``) read into cases: one per record, ids by position in the file.

The reader is RoTBench's format library (:mod:`pytest_toolbench.scorer_lib.rotbench`), shared with the suites that
reuse RoTBench data; this module picks the turns and levels of the suite's ``options``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.rotbench import DATA_SCHEMA, LEVELS, SCENARIOS, TURNS, read_cases
from pytest_toolbench.contract.suite import Case

__all__ = ["TURNS", "LEVELS", "SCENARIOS", "DATA_SCHEMA", "load_cases"]



def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    options = definition.get("options") or {}
    turns = options.get("turns") or list(TURNS)
    levels = options.get("levels") or list(LEVELS)
    return tl_failures.mark_cases(read_cases(Path(data_dir), turns, levels), definition)
