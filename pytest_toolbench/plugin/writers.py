"""The built-in writers, registered the way any writer is: this module is a small plugin (registered by the entry
point's ``pytest_addhooks``) whose ``pytest_toolbench_writers`` returns the terminal summary and, as the options ask,
the JSON results, the Markdown summary, the HTML page and the Every Eval Ever export (``report/writers.py``,
docs/adding-a-writer.md). It also adds the one option of the export, ``--toolbench-eee``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..report.eee import EeeWriter
from ..report.facts import report_title
from ..report.json_results import JsonWriter
from ..report.markdown import MarkdownWriter
from ..report.settings import ReportSettings
from ..report.terminal import TerminalWriter
from .html import HtmlHooks
from .session import toolbench_session

HTML_PLUGIN = "toolbench-html"


def add_options(parser: pytest.Parser) -> None:
    """The export's option, last in the reporting group (called by the entry point's ``pytest_addoption``)."""
    group = parser.getgroup("toolbench-reporting", "pytest-toolbench: reporting")
    group.addoption("--toolbench-eee", dest="toolbench_eee", default=None, metavar="DIR",
                    help="Export the run to Every Eval Ever (schema 0.3.0) under DIR: per suite, an aggregate JSON "
                         "(every figure with its standard error and 95%% interval) and a JSONL of its samples, "
                         "laid out as data/SUITE/DEVELOPER/MODEL/ (a bare folder name goes to reports/).")


@pytest.hookimpl(tryfirst=True)
def pytest_toolbench_writers(config: pytest.Config, settings: ReportSettings) -> list[Any]:
    writers: list[Any] = [TerminalWriter()]
    if settings.json_path:
        writers.append(JsonWriter(settings.json_path, lambda document: config.hook.pytest_toolbench_results_document(
            config=config, document=document)))
    if settings.markdown_path:
        writers.append(MarkdownWriter(settings.markdown_path))
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        # the HTML writer gets data only: its title now, the run report when the run finishes
        page = Path(os.path.expandvars(config.option.htmlpath)).expanduser()  # as pytest-html reads it
        hooks = HtmlHooks(report_title(None, toolbench_session(config).toolbench.options), settings.html_path,
                          Path.cwd() / page)
        config.pluginmanager.register(hooks, HTML_PLUGIN)
        writers.append(hooks)
    if settings.eee_path:
        writers.append(EeeWriter(settings.eee_path))
    return writers
