"""The shipped suites' scorers, imported the way collection imports them (``suites/<name>/scorer/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolbench.run.catalog import import_scorer

SUITES = Path(__file__).resolve().parents[1] / "suites"


def scorer(suite: str, module: str = "") -> Any:
    """``scorer("bfcl")`` is the bfcl scorer package; ``scorer("bfcl", "checker")`` one of its modules."""
    return import_scorer(SUITES / suite, module)


def option_refusal(suite: str, **overrides: Any) -> str:
    """The core's one-line refusal of ``--toolbench-suite-option`` values for a shipped suite (its suite.yaml
    schemas), or "" when every value is accepted."""
    from pytest_toolbench.contract.definition import OptionError, load_definition, with_options

    try:
        with_options(load_definition(SUITES / suite / "suite.yaml"), overrides)
    except OptionError as error:
        return error.usage_line()
    return ""
