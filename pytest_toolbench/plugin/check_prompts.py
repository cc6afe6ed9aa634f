"""``pytest --toolbench-check-prompts --model X``: the pre-flight report (``prompting/check.py``) for the
selected suites, then the session stops: exit 0 when every selected suite gets its official renderer, 1 otherwise
(the report's last line lists them; a WARNING line says where the row's prompt is not the checkpoint's own format).
Nothing is generated and no engine starts; in a single process no test runs and the report's last line is the end.
"""

from __future__ import annotations

from typing import Callable

import pytest

from ..prompting.check import check_prompts
from ..contract.errors import ToolbenchError
from .errors import stop_run
from ..run.context import RunContext


def run_check_prompts(toolbench: RunContext, entries, write_line, forget_run: Callable[[], None],
                      end_plainly: bool = False) -> int:
    """``forget_run``: nothing ran, by design: no summary of "not_run" cases, no report file overwritten.
    ``end_plainly`` (a single process): the report's own last line is the end, no ``pytest.exit`` banner: the exit
    status is returned (0, or 1 when a suite has no official renderer) for the session to end with once no test
    runs; otherwise (an xdist controller) the session stops here with it."""
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
    status = pytest.ExitCode.TESTS_FAILED if report.missing else pytest.ExitCode.OK
    if end_plainly:
        return int(status)
    if report.missing:
        pytest.exit("pytest-toolbench: --toolbench-check-prompts: no official renderer for "
                    + ", ".join(check.suite for check in report.missing), returncode=status)
    pytest.exit("pytest-toolbench: --toolbench-check-prompts: every selected suite gets its official renderer"
                + (" (with warnings)" if report.warnings else ""), returncode=status)
