"""The small plugin objects the session registers, and what the hooks talk to where the plugin is not set up: each
reaches the run's session (``plugin/session.py``'s ``ToolbenchSession``, not imported here: the session imports
this module) it was made with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


class ReportHandler:
    """The one handler of test and collection reports, on the controller or the single process (pytest hands a
    report to its hooks without the config, so the session is reached through this object)."""

    def __init__(self, session: Any):
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.session.log_report(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.session.collect_report(report)


class WorkerCollection:
    """Worker only: ``tryfirst``, so the manifest file exists before xdist's own ``pytest_collection_finish``
    reports this worker's ids to the controller (which reads the file then)."""

    def __init__(self, session: Any):
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.session.write_worker_manifest(session)


class InactiveSession:
    """What the hooks talk to where the plugin is not set up (``--help``, ``--version``, a configure error): nothing
    happens."""

    def report_header(self) -> None:
        return None

    def collect_file(self, file_path: Path, parent: pytest.Collector) -> None:
        return None

    def collection_finished(self, session: pytest.Session) -> None:
        return None

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        return None

    def terminal_summary(self, reporter: Any) -> None:
        return None

    def unconfigure(self) -> None:
        return None

    def configure_node(self, node: Any) -> None:
        return None

    def node_collection_finished(self, node: Any, ids: list[str]) -> None:
        return None
