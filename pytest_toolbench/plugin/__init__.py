"""pytest entry point (``pytest11``): the hooks, each one line into the run's session (``plugin/session.py``).

Importing this module must stay cheap: no vllm, torch or transformers (engine backends import them lazily).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import hookspecs, options, writers
from ..backends.kind import BackendKind
from ..contract.suite import Backend
from ..run.catalog import Catalog
from .backend_kinds import register_builtin_kinds
from .report_options import place_html_report
from .collection import run_case_protocol
from .session import ToolbenchSession, backend_kinds, reject_moved_rootdir, toolbench_session


# -- set-up ----------------------------------------------------------------------------------------------------
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)
    # Each built-in backend is a small plugin: its kind (options, capabilities) and its pytest_toolbench_backend_kind.
    register_builtin_kinds(pluginmanager)
    # The built-in writers are a plugin too: their pytest_toolbench_writers, as a user's own writer would be added.
    if not pluginmanager.is_registered(writers):
        pluginmanager.register(writers, "toolbench-writers")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    options.add_run_options(parser, backend_kinds(pluginmanager))
    writers.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # The earliest point after the plugin's options are known and before any conftest or test path is used.
    reject_moved_rootdir(early_config)


def pytest_cmdline_main(config: pytest.Config) -> None:
    place_html_report(config)  # before pytest-html's pytest_configure opens the file


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    ToolbenchSession.configure(config)


@pytest.hookimpl(trylast=True)
def pytest_toolbench_make_backend(config: pytest.Config, options: "options.RunOptions", catalog: Catalog,
                                  kind: type[BackendKind]) -> Backend:
    """The default, called last: what the chosen kind builds."""
    return kind.build(options, catalog)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    return toolbench_session(config).report_header()


def pytest_unconfigure(config: pytest.Config) -> None:
    toolbench_session(config).unconfigure()


# -- collection ------------------------------------------------------------------------------------------------
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    return toolbench_session(parent.config).collect_file(file_path, parent)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    toolbench_session(session.config).collection_finished(session)


# -- xdist (called only where pytest-xdist runs: the controller) ------------------------------------------------
@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    toolbench_session(node.config).configure_node(node)


@pytest.hookimpl(optionalhook=True, trylast=True)
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    toolbench_session(node.config).node_collection_finished(node, ids)


# -- running ---------------------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    return run_case_protocol(item, nextitem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    return ToolbenchSession.attach_record(item, call, (yield))


# -- the end (each test report goes to the session's ReportHandler, registered at configure) --------------------
@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    toolbench_session(session.config).finish(session, exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    toolbench_session(config).terminal_summary(terminalreporter)
