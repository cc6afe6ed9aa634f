"""pytest-html's hooks and the HTML writer: one object, registered by the built-in writers (``plugin/writers.py``) on
the controller only, and only when pytest-html is active (``--html``), so the hook names are known. It holds no run
state: the title comes at configure time, each row's record and request on its report, and the finished run's report
as any writer gets it (``write``); what the page shows is rendered by ``report/html.py`` from plain values."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

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
    """The HTML writer (``report/writers.py``): pytest-html writes the page; :meth:`write` hands it the summary
    section's report. ``path``: ``--html`` as given (for the run's closing lines), ``page``: that file, absolute."""

    name = "html"
    what = "HTML"

    def __init__(self, title: str, path: Path | None = None, page: Path | None = None):
        self.title = title  # pytest-html asks for it at session start, before any figure exists
        self.path = path
        self.page = page  # the page pytest-html writes (absolute)
        #: the finished run's report: None until the run hands it over, and when no case ran or the run was
        #: interrupted before any case was scored (then the page is left as it was)
        self.report: "RunReport | None" = None

    def write(self, report: "RunReport") -> None:
        self.report = report
        return None  # pytest-html writes the page (and names it) in its own session finish

    def keep_previous(self) -> bool:
        """An interrupted run whose other files were left as they were (no case scored, or none collected)
        leaves the page as it was too."""
        return self.report is None

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
        if self.report is not None:
            prefix.append(html.summary_html(self.report))
