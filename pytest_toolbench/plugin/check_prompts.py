"""``pytest --toolbench-check-prompts --model X``: the pre-flight report (``backends/prompt_check.py``) for the
selected suites, then the session stops: exit 0 when every selected suite gets its official renderer, 1 otherwise
(the report's last line lists them). Nothing is generated and no engine starts."""

from __future__ import annotations

import pytest

from ..contract.errors import ToolbenchError
from ..run.context import RunContext, load_error


def run_check_prompts(toolbench: RunContext, entries, write_line) -> None:
    suites = sorted({suite.name for suite, _, _ in entries})
    if not suites:
        pytest.exit("pytest-toolbench: --toolbench-check-prompts: no benchmark case selected",
                    returncode=pytest.ExitCode.NO_TESTS_COLLECTED)
    if not toolbench.uses_engine:
        pytest.exit(f"pytest-toolbench: --toolbench-check-prompts needs a model backend (--model or "
                    f"--toolbench-backend openai), not {toolbench.options.backend}",
                    returncode=pytest.ExitCode.USAGE_ERROR)
    from ..backends.prompt_check import check_prompts

    try:
        report = check_prompts(toolbench.backend(), suites)
    except ToolbenchError as error:
        pytest.exit(load_error(error), returncode=pytest.ExitCode.USAGE_ERROR)
    for line in report.lines():
        write_line(line)
    _no_run_report(toolbench)
    if report.missing:
        pytest.exit("pytest-toolbench: --toolbench-check-prompts: no official renderer for "
                    + ", ".join(check.suite for check in report.missing), returncode=pytest.ExitCode.TESTS_FAILED)
    pytest.exit("pytest-toolbench: --toolbench-check-prompts: every selected suite gets its official renderer",
                returncode=pytest.ExitCode.OK)


def _no_run_report(toolbench: RunContext) -> None:
    """Nothing ran, by design: no summary of "not_run" cases, no report file overwritten."""
    from ..report.run import RUN_KEY
    from ..run.ledger import Ledger

    toolbench.ledger = Ledger()
    if RUN_KEY in toolbench.config.stash:
        del toolbench.config.stash[RUN_KEY]
