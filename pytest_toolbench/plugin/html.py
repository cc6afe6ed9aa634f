"""pytest-html's hooks: registered by the session on the controller only, and only when pytest-html is active
(``--html``), so the hook names are known. They hold no run state: the title, each row's record and request and the
finished run come from the session; what the page shows is rendered by ``report/html.py`` from plain values."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from ..report import html
from ..run.records import from_report as case_record

if TYPE_CHECKING:
    from ..report.run_report import RunReport


def case_extras(report: pytest.TestReport, request: dict[str, Any] | None) -> None:
    """Add a case's details (its record and request) to its report's extras, before pytest-html (``trylast``) reads
    them; called by the session's report handler for each case's call report."""
    from pytest_html import extras  # optional extra: present whenever this plugin is registered

    details = html.case_details(case_record(report), request)
    report.extras = list(getattr(report, "extras", None) or []) + [extras.html(details)]


class HtmlHooks:
    def __init__(self, title: str, run_report: "Callable[[], RunReport | None]", page: Path | None = None,
                 keep_previous: Callable[[], bool] = lambda: False):
        self.title = title  # pytest-html asks for it at session start, before any figure exists
        self.run_report = run_report  # the finished run's report (None until the session finishes, or no case ran)
        self.page = page  # the page pytest-html writes (absolute)
        self.keep_previous = keep_previous  # true once the run ended interrupted before any case was scored

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Iterator[None]:
        """pytest-html writes its page in its own (``trylast``) session finish, whatever the run did. A run
        interrupted before any case was scored leaves the JSON and Markdown files as they were; the page too: on an
        interrupted run the previous page is copied aside first and put back after pytest-html wrote its page of
        ``not_run`` rows (or that page is removed when there was none before)."""
        saved = None
        if exitstatus == pytest.ExitCode.INTERRUPTED and self.page is not None and self.page.is_file():
            handle, name = tempfile.mkstemp(prefix=f".{self.page.name}.", dir=self.page.parent)
            os.close(handle)
            saved = Path(name)
            shutil.copyfile(self.page, saved)
        try:
            result = yield
            if exitstatus == pytest.ExitCode.INTERRUPTED and self.page is not None and self.keep_previous():
                if saved is not None:
                    os.replace(saved, self.page)
                    saved = None
                elif self.page.is_file():
                    self.page.unlink()
        finally:
            if saved is not None:
                saved.unlink(missing_ok=True)
        return result

    def pytest_html_report_title(self, report: Any) -> None:
        report.title = self.title

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = html.TABLE_HEADER_CELLS

    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        cells[2:2] = html.table_row_cells(case_record(report))

    def pytest_html_results_table_html(self, report: Any, data: list[str]) -> None:
        if case_record(report) is not None and report.when == "call":
            data[:] = html.without_repeated_log(data, report.longreprtext)

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str],
                                    session: pytest.Session) -> None:
        report = self.run_report()
        if report is not None:
            prefix.append(html.summary_html(report))
