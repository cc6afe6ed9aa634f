"""RoTBench's data files (``<Turn>/<level>.json``) read into cases: one per record, ids by position in the file.

The reader is RoTBench's format library (:mod:`pytest_toolbench.scorer_lib.rotbench`), shared with the suites that
reuse RoTBench data; this module picks the turns and levels of the suite's ``options``.
"""

from __future__ import annotations

from pathlib import Path

from pytest_toolbench.scorer_lib.rotbench import DATA_SCHEMA, LEVELS, SCENARIOS, TURNS, read_cases
from pytest_toolbench.contract.suite import Case, SuiteContext

__all__ = ["TURNS", "LEVELS", "SCENARIOS", "DATA_SCHEMA", "load_cases"]



def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    options = definition.get("options") or {}
    turns = options.get("turns") or list(TURNS)
    levels = options.get("levels") or list(LEVELS)
    return context.bind(read_cases(Path(data_dir), turns, levels))
