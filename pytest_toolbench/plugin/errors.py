"""Where a core error becomes pytest's: a :class:`ToolbenchError` (the core's one kind of set-up problem) is
reported once, as a usage error or as the run's stop, instead of as a traceback or thousands of failing tests."""

from __future__ import annotations

from typing import NoReturn

import pytest

from ..contract.errors import ToolbenchError, UsageProblem


def load_error(error: ToolbenchError) -> str:
    """The one line an error is reported with (a :class:`UsageProblem` words its line itself)."""
    return str(error) if isinstance(error, UsageProblem) else f"pytest-toolbench: {error}"


def usage_error(error: ToolbenchError) -> pytest.UsageError:
    """The usage error to raise (``from None``) at configure time."""
    return pytest.UsageError(load_error(error))


def stop_run(error: ToolbenchError) -> NoReturn:
    """Stop the session with the error's line and pytest's usage-error status (after collection)."""
    pytest.exit(load_error(error), returncode=pytest.ExitCode.USAGE_ERROR)
