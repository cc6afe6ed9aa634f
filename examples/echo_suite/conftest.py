"""Registers the ``echo`` benchmark so ``suites/echo/suite.yaml`` can name it (``scorer: echo``)."""

import echo_benchmark


def pytest_toolbench_register(registry):
    registry.add_benchmark("echo", echo_benchmark)


def pytest_toolbench_summary(config, summary):
    # Any conftest can read the final summary, e.g. to push figures to a dashboard.
    config._echo_summary_seen = [suite.name for suite in summary.suites]
