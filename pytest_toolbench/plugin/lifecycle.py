"""The run's steps between collection and the first test, shared by a single process and the xdist controller:
the selection, a check that the backend can be built, one-line failures, and pre-generation."""

from __future__ import annotations

import pytest

from . import collection
from ..contract.errors import ToolbenchError
from ..run.session import ToolbenchSession, load_error


def selected_items(session: ToolbenchSession, items: list[pytest.Item]):
    """(nodeid, loaded suite, case) for every selected benchmark item."""
    return [(item.nodeid, session.catalog.by_name(item.case.suite), item.case)
            for item in items if isinstance(item, collection.CaseItem)]


def selected_cases(session: ToolbenchSession, items: list[pytest.Item]):
    return [(suite, case) for _, suite, case in selected_items(session, items)]


def check_backend(toolbench: ToolbenchSession) -> None:
    """Build an on-the-spot backend (gold, replay, a conftest's) before any test: a backend that cannot be built is
    one error, not a failure per case. Engine backends are built by pre-generation, which reports the same way."""
    if toolbench.uses_engine or not toolbench.expected or not toolbench.expected["cases"]:
        return
    try:
        toolbench.backend()
    except ToolbenchError as error:
        pytest.exit(load_error(error), returncode=pytest.ExitCode.USAGE_ERROR)


def one_line_failures(config: pytest.Config, only_cases: bool) -> None:
    """A failed benchmark case is a measurement, not a broken test: when every selected item is a benchmark case
    and ``--tb`` was not given, the failures section is left out (``--tb=no``), and so are pytest's short-summary
    lines of failed tests unless ``-r`` was given (they cut each reason to the terminal's width and list every
    failure): the plugin's "toolbench failures" section lists them instead, each reason whole, a bounded number per
    suite and error type (``report/failures.py``); the full messages live in the JSON and HTML. It also spares
    pytest's failures section, whose per-failure scan of every report is quadratic in failures. Any ``--tb=...``
    brings the long form back, e.g. for a ``-k`` selection of a few cases; ``-rf`` brings pytest's lines back."""
    if not only_cases:  # collection errors and ordinary tests keep pytest's sections
        return
    if not _given(config, "--tb"):
        config.option.tbstyle = "no"
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not _given(config, "-r") and reporter is not None and "f" in getattr(reporter, "reportchars", ""):
        reporter.reportchars = reporter.reportchars.replace("f", "")  # read from here by the short summary


def _given(config: pytest.Config, prefix: str) -> bool:
    """Whether an option starting with ``prefix`` is on the command line, in addopts or in PYTEST_ADDOPTS."""
    import os
    import shlex

    words = list(config.invocation_params.args) + list(config.getini("addopts"))
    words += shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    if prefix == "-r":  # -r CHARS, -rCHARS, --report-chars
        return any(str(word).startswith("-r") and not str(word).startswith("--") or str(word) == "-r"
                   or str(word).startswith("--report-chars") for word in words)
    return any(str(word).startswith(prefix) for word in words)


def terminal_writer(config: pytest.Config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return reporter.write_line if reporter else (lambda line: None)


class TerminalLines:
    """Lines for the terminal reporter, plus one updating status line (carriage return) when the terminal is a TTY;
    a kept line first ends the status line. ``status`` is None off a terminal (CI logs get plain lines)."""

    def __init__(self, config: pytest.Config):
        self.reporter = config.pluginmanager.get_plugin("terminalreporter")
        self._open = False
        tty = bool(self.reporter is not None and getattr(self.reporter, "isatty", False))
        self.status = self._status if tty else None

    def _status(self, text: str) -> None:
        self.reporter.rewrite(text, erase=True)
        self._open = True

    def end(self) -> None:
        """Leave the status line as it is and start a new one (before an error message, say)."""
        if self._open:
            self.reporter.write("\n")
            self._open = False

    def line(self, text: str) -> None:
        if self.reporter is None:
            return
        if self._open:
            self.reporter.rewrite(text, erase=True)  # the final figures replace the updating line
            self.reporter.write("\n")
            self._open = False
            return
        self.reporter.write_line(text)


def run_pregeneration(toolbench: ToolbenchSession, entries, write_line) -> None:
    """Generate once; a failure is reported once and stops the run, never as N test errors."""
    lines = TerminalLines(toolbench.config)
    if lines.reporter is None or write_line != lines.reporter.write_line:
        lines.status = None  # a caller's own writer: plain lines only
    try:
        try:
            toolbench.pregenerate(entries, lines.line if lines.status else write_line, status=lines.status)
        finally:
            lines.end()
    except ToolbenchError as error:  # a CacheError too: it names the file and the fix
        pytest.exit(load_error(error), returncode=pytest.ExitCode.USAGE_ERROR)
    except Exception as error:  # an engine crash: report once, the cache keeps what was committed
        from ..run.cache_layout import CacheLayout

        if type(error).__module__ == "sqlite3":  # not expected past GenerationCache; still, name the file
            where = CacheLayout.at(toolbench.options.cache_dir).generations
            pytest.exit(f"pytest-toolbench: the generation cache {where} failed: {type(error).__name__}: {error} "
                        "(move it aside or point --toolbench-cache to another folder)",
                        returncode=pytest.ExitCode.INTERNAL_ERROR)
        pytest.exit(f"pytest-toolbench: generation failed: {type(error).__name__}: {error}",
                    returncode=pytest.ExitCode.INTERNAL_ERROR)
