"""pytest entry point (``pytest11``): options, collection of suites into items, scoring, and the summary.

Importing this module must stay cheap: no vllm, torch or transformers (engine backends import them lazily).
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest

from . import collection, hookspecs as hooks, options
from ..run import records
from ..run.catalog import Registry
from .lifecycle import (check_backend, one_line_failures, run_pregeneration, selected_cases, selected_items,
                        terminal_writer)
from ..run.session import SESSION_KEY, ToolbenchSession, get_session

#: (relative, absolute): the relative TOOLBENCH_DATA this run replaced with its absolute form (see ``options.anchor_data_env``)
DATA_ENV_KEY = pytest.StashKey["tuple[str, str] | None"]()



def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_run_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # The earliest point after the plugin's options are known and before any conftest or test path is used.
    moved = options.rootdir_moved_by(early_config)
    if moved:
        raise pytest.UsageError(moved)


def pytest_cmdline_main(config: pytest.Config) -> None:
    from .report_options import place_html_report

    place_html_report(config)  # before pytest-html's pytest_configure opens the file


def _role(config: pytest.Config) -> str:
    if hasattr(config, "workerinput"):
        return "worker"
    if config.getoption("dist", "no") != "no" and not config.getoption("collectonly"):
        return "controller"
    return "single"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("help", False) or config.getoption("version", False):
        return
    role = _role(config)
    registry = Registry()
    config.hook.pytest_toolbench_register(registry=registry)
    if role == "worker":
        run_options = options.RunOptions.from_json(config.workerinput["toolbench"]["options"])
    else:
        run_options = options.resolve(config, known_backends=options.BACKENDS + tuple(registry.backends))
    # Once, after the options (whose errors quote the value as given) and before xdist starts workers (they inherit
    # the environment): a relative TOOLBENCH_DATA is made absolute against the invocation folder, put back at
    # unconfigure.
    relative = options.anchor_data_env(config.invocation_params.dir)
    config.stash[DATA_ENV_KEY] = (relative, os.environ[options.DATA_ENV]) if relative is not None else None
    session = ToolbenchSession(config, run_options, role, registry)
    config.stash[SESSION_KEY] = session
    if role != "worker" and not config.getoption("collectonly"):
        session.model_note = check_model(run_options)
    _register_markers(config, session, warn=role != "worker")
    if role != "worker":
        config.pluginmanager.register(ResultCollector(session), "toolbench-results")
        _register_reports(config, session)
    if role == "controller":
        from .xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(session), "toolbench-xdist")
    elif role == "worker":
        from .xdist import WorkerManifest

        config.pluginmanager.register(WorkerManifest(session), "toolbench-manifest")


def check_model(run_options: options.RunOptions) -> str | None:
    """The model (or endpoint) must be there before anything starts: one usage error naming it and the fix, in
    seconds, instead of a traceback after minutes. Returns a line for the header (e.g. cached copy used offline)."""
    from ..backends.model_source import ModelUnavailable, check_endpoint, locate_model

    try:
        note = None
        if run_options.backend == "vllm" and run_options.model:
            note = locate_model(run_options.model, network=not run_options.offline).note
        elif run_options.backend == "openai" and run_options.base_url and not run_options.offline:
            check_endpoint("--toolbench-base-url", run_options.base_url)
        if run_options.user_base_url and not run_options.offline:
            check_endpoint("--toolbench-user-base-url", run_options.user_base_url)
        return note
    except ModelUnavailable as error:
        raise pytest.UsageError(f"pytest-toolbench: {error}") from None


def _register_markers(config: pytest.Config, session: ToolbenchSession, warn: bool) -> None:
    """Every marker of the run's suites, described, before collection (``pytest --markers``, ``--strict-markers``,
    also on xdist workers, whose ``-m`` check may name a suite they rule out); then a ``-m`` expression naming a
    marker no suite or plugin knows gets a warning instead of silently selecting nothing (once: not on workers)."""
    import difflib

    from ..run.session import run_paths

    definitions = session.catalog.definitions_under(run_paths(config))
    collection.register_suite_markers(config, definitions)
    if not warn:
        return
    known = sorted({line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")})
    for name in collection.unknown_mark_names(config):
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"pytest-toolbench: -m {config.option.markexpr!r} names the marker {name!r}, which no suite, plugin or "
            f"ini file declares, so it selects nothing by that name (`pytest --markers` lists them){hint}"),
            stacklevel=2)


HTML_PLUGIN = "toolbench-html"


def _register_reports(config: pytest.Config, session: ToolbenchSession) -> None:
    from . import report_options
    from ..report.run import RUN_KEY, ReportRun

    import dataclasses

    from ..run.session import run_paths

    settings = report_options.resolve(config)
    definitions = session.catalog.definitions_under(run_paths(config))
    settings = dataclasses.replace(settings, leaderboards=report_options.resolve_leaderboards(
        config, definitions, session.options.data_dir))
    run = ReportRun(settings)
    config.stash[RUN_KEY] = run
    config.pluginmanager.register(run, "toolbench-report")
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        from ..report.facts import report_title
        from ..report.html import HtmlReport
        from ..report.run_report import CaseRequests

        # The HTML writer gets data only: its title now, each row's request on the row's report (rendered here,
        # from the catalog), the run report when the session finishes.
        config.pluginmanager.register(CaseRequests(session.catalog, session.suite_facts), "toolbench-requests")
        config.pluginmanager.register(HtmlReport(report_title(None, session.options)), HTML_PLUGIN)


@pytest.hookimpl(trylast=True)
def pytest_toolbench_make_backend(config: pytest.Config, options, catalog):
    """The built-in backends and the factories registered with ``registry.add_backend``: the default, called last."""
    from ..backends import make_builtin

    session = get_session(config)
    return make_builtin(options, catalog, session.registry.backends if session else {})


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.close()
    anchored = config.stash.get(DATA_ENV_KEY, None)
    # a run inside another process (pytester) leaves the environment as it found it
    if anchored is not None and os.environ.get(options.DATA_ENV) == anchored[1]:
        os.environ[options.DATA_ENV] = anchored[0]


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = get_session(config)
    if session is None:
        return []
    opts = session.options
    if opts.backend == "gold":
        what = "gold (reference answers; no --model given)"
    elif opts.backend == "replay":
        what = f"replay of {opts.replay} (replay mode: {getattr(opts, 'replay_mode', None) or 'per file'})"
    else:
        what = f"{opts.backend}, model {opts.model}, mode {opts.mode}"
    data = f"{opts.data_dir} ({opts.data_dir_origin})" if opts.data_dir else \
        "none given: pinned upstream download, else the shipped samples"
    lines = [f"toolbench: backend {what}", f"toolbench: data {data}"]
    if session.model_note:
        lines.append(f"toolbench: {session.model_note}")
    return lines


# -- collection ------------------------------------------------------------------------------------------------
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if collection.is_definition(file_path) and get_session(parent.config) is not None:
        return collection.SuiteFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    toolbench = get_session(config)
    if toolbench is None:
        return
    # The loaded suites live until the end of the run: out of the garbage collector's generations, they cost
    # nothing at each collection pass (pytest itself runs full passes at session end).
    gc.freeze()
    if config.getoption("collectonly"):
        return
    if toolbench.role == "single":
        entries = selected_items(toolbench, session.items)
        toolbench.expect(toolbench.manifest(entries))
        check_backend(toolbench)
        toolbench.report_replay(terminal_writer(config))
        one_line_failures(config, only_cases=bool(entries) and len(entries) == len(session.items)
                          and not session.testsfailed)
    if not toolbench.uses_engine:
        return
    if toolbench.role == "single":
        run_pregeneration(toolbench, selected_cases(toolbench, session.items), terminal_writer(config))


# -- running ----------------------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    return collection.run_case_protocol(item, nextitem)


# -- reports --------------------------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    if call.when == "call" and collection.RECORD_KEY in item.stash:
        record = item.stash[collection.RECORD_KEY]
        if hasattr(item.config, "workerinput"):
            # ASCII JSON text of the safe record: pytest serialises report.__dict__ through execnet, which carries
            # a str whatever the model wrote (it cannot carry every int or string a record could otherwise hold).
            report.toolbench_json = records.transport(record)
        else:
            report.toolbench = record
    return report


class ResultCollector:
    """Controller-side (or single-process) collection of per-case records from test reports. ``tryfirst`` so
    the decoded record (``report.toolbench``) is there for every other reporter of the same report."""

    def __init__(self, session: ToolbenchSession):
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = records.from_report(report)
        if record is not None:
            self.session.records.append(record)
        elif report.skipped:
            self.session.skipped.add(report.nodeid)


# -- summary ---------------------------------------------------------------------------------------------------
def build_summary(toolbench: ToolbenchSession):
    from ..run.summary import summarize

    benchmarks: dict[str, Any] = {}
    for record in toolbench.records:
        if record["suite"] not in benchmarks:
            facts = toolbench.suite_facts(record["suite"])
            benchmark = toolbench.registry.benchmark(facts["scorer"], Path(facts["definition"]))
            benchmarks[record["suite"]] = (benchmark, facts["title"], facts["data_source"], facts.get("available"))
    return summarize(toolbench.records, benchmarks, toolbench.header())


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Aggregate once, on the controller, before any terminal output; conftests see it through a hook."""
    toolbench = get_session(session.config)
    if toolbench is None:
        return
    if toolbench.role == "worker":
        # A worker's terminal summary is printed nowhere, yet pytest would still build its failures section (a scan
        # of every report per failure). The reports were all made already, so their tracebacks are unchanged.
        session.config.option.tbstyle = "no"
        return
    from ..report.run import RUN_KEY

    toolbench.records.extend(toolbench.not_run_records())
    if toolbench.records:
        toolbench.summary = build_summary(toolbench)
        session.config.hook.pytest_toolbench_summary(config=session.config, summary=toolbench.summary)
    run = session.config.stash.get(RUN_KEY, None)
    if run is not None:  # baseline, gates, the run report, JSON and Markdown files, and the exit status
        report = run.finish(session, toolbench.summary, toolbench.records, toolbench.options.tool_parser)
        html = session.config.pluginmanager.get_plugin(HTML_PLUGIN)
        if html is not None:  # pytest-html writes its page after this hook (trylast), from this report
            html.report = report


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    toolbench = get_session(config)
    if toolbench is None or toolbench.role == "worker":
        return
    from ..report import failures, terminal
    from ..report.run import RUN_KEY

    run = config.stash.get(RUN_KEY, None)
    failure_lines = failures.lines(toolbench.records)
    if failure_lines:
        terminalreporter.section("toolbench failures")
        for line in failure_lines:
            terminalreporter.write_line(line)
    report = run.report if run is not None else None
    if report is not None:
        terminalreporter.section("toolbench summary")
        for line in terminal.render(report):
            terminalreporter.write_line(line)
        samples = terminal.samples_line(report)
        if samples:
            terminalreporter.write_line(samples, yellow=True, bold=True)
    if run is None:
        return
    for what, path in run.written:
        terminalreporter.write_line(f"toolbench: {what} written to {path}")
    for line in run.write_errors:
        terminalreporter.write_line(line, red=True, bold=True)
    if run.not_run:
        terminalreporter.write_line(f"toolbench: no verdict for {len(run.not_run)} selected cases (not_run): "
                                    f"{terminal.case_list(run.not_run)}", red=True, bold=True)
    for line in terminal.gate_lines(run.outcome):
        terminalreporter.write_line(line, red=line.startswith("toolbench gate missed"), bold=True)
    note = run.status_note()
    if note:
        terminalreporter.write_line(note)
