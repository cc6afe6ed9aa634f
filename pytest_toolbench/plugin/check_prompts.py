"""``pytest --toolbench-check-prompts --model X``: the pre-flight report (``backends/prompt_check.py``) for the
selected suites, then the session stops: exit 0 when every selected suite gets its official renderer, 1 otherwise
(the report's last line lists them). Nothing is generated and no engine starts."""

from __future__ import annotations

from typing import Callable

import pytest

from ..backends.prompt_check import check_prompts
from ..contract.errors import ToolbenchError
from .errors import stop_run
from ..run.context import RunContext


def run_check_prompts(toolbench: RunContext, entries, write_line, forget_run: Callable[[], None]) -> None:
    """``forget_run``: nothing ran, by design: no summary of "not_run" cases, no report file overwritten."""
    suites = sorted({suite.name for suite, _, _ in entries})
    if not suites:
        pytest.exit("pytest-toolbench: --toolbench-check-prompts: no benchmark case selected",
                    returncode=pytest.ExitCode.NO_TESTS_COLLECTED)
    if not toolbench.uses_engine:
        pytest.exit(f"pytest-toolbench: --toolbench-check-prompts needs a model backend (--model or "
                    f"--toolbench-backend openai), not {toolbench.options.backend}",
                    returncode=pytest.ExitCode.USAGE_ERROR)
    try:
        report = check_prompts(toolbench.backend(), suites)
    except ToolbenchError as error:
        stop_run(error)
    for line in report.lines():
        write_line(line)
    forget_run()
    if report.missing:
        pytest.exit("pytest-toolbench: --toolbench-check-prompts: no official renderer for "
                    + ", ".join(check.suite for check in report.missing), returncode=pytest.ExitCode.TESTS_FAILED)
    pytest.exit("pytest-toolbench: --toolbench-check-prompts: every selected suite gets its official renderer",
                returncode=pytest.ExitCode.OK)
