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
from ..backends.kind import BackendKind, kinds_of, registered_kind
from ..contract.suite import Backend
from ..run import ledger, records
from ..run.catalog import Catalog, Registry
from ..run.context import RUN_CONTEXT_KEY, RunContext, run_context
from .check_prompts import run_check_prompts
from .lifecycle import (check_backend, one_line_failures, run_pregeneration, selected_cases, selected_items,
                        terminal_writer)
from ..run.role import is_worker, process_role, worker_input

#: (relative, absolute): the relative TOOLBENCH_DATA this run replaced with its absolute form (see ``options.anchor_data_env``)
DATA_ENV_KEY = pytest.StashKey["tuple[str, str] | None"]()



def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    import importlib

    from .. import backends

    pluginmanager.add_hookspecs(hooks)
    # Each built-in backend is a small plugin: its kind (options, capabilities) and its pytest_toolbench_backend_kind.
    for name in backends.BUILTIN_PLUGINS:
        module = importlib.import_module(f"{backends.__name__}.{name}")
        if not pluginmanager.is_registered(module):
            pluginmanager.register(module, f"toolbench-backend-{name}")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    options.add_run_options(parser, backend_kinds(pluginmanager))


def backend_kinds(pluginmanager: pytest.PytestPluginManager) -> list[type[BackendKind]]:
    """The backend kinds the registered plugins declare (``BACKEND_KIND``), in registration order."""
    return kinds_of(pluginmanager.list_name_plugin())


def choose_backend(config: pytest.Config, registry: Registry, name: str | None) -> type[BackendKind]:
    """The kind that serves the run: a backend added through ``registry.add_backend`` by its name, else what the
    ``pytest_toolbench_backend_kind`` implementations return; a name none claims is one usage error."""
    if name is not None and name in registry.backends:
        return registered_kind(name, registry.backends[name], name in registry.engine_backends)
    kind = config.hook.pytest_toolbench_backend_kind(config=config, name=name)
    if kind is None:
        known = [kind.name for kind in backend_kinds(config.pluginmanager)] + list(registry.backends)
        raise pytest.UsageError(f"--toolbench-backend {name!r}: unknown backend (choose from {', '.join(known)})")
    return kind


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # The earliest point after the plugin's options are known and before any conftest or test path is used.
    moved = options.rootdir_moved_by(early_config)
    if moved:
        raise pytest.UsageError(moved)


def pytest_cmdline_main(config: pytest.Config) -> None:
    from .report_options import place_html_report

    place_html_report(config)  # before pytest-html's pytest_configure opens the file


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("help", False) or config.getoption("version", False):
        return
    role = process_role(config)
    registry = Registry()
    config.hook.pytest_toolbench_register(registry=registry)
    if role == "worker":
        shipped = worker_input(config)["options"]
        kind = choose_backend(config, registry, shipped["backend"])
        run_options = options.RunOptions.from_json(shipped, kind)
    else:
        kind = choose_backend(config, registry, config.getoption("toolbench_backend"))
        others = [other for other in backend_kinds(config.pluginmanager) if other is not kind]
        run_options = options.resolve(config, kind, others)
    # Once, after the options (whose errors quote the value as given) and before xdist starts workers (they inherit
    # the environment): a relative TOOLBENCH_DATA is made absolute against the invocation folder, put back at
    # unconfigure.
    relative = options.anchor_data_env(config.invocation_params.dir)
    config.stash[DATA_ENV_KEY] = (relative, os.environ[options.DATA_ENV]) if relative is not None else None
    toolbench = RunContext(config, run_options, kind, role, registry)
    config.stash[RUN_CONTEXT_KEY] = toolbench
    if role != "worker" and not config.getoption("collectonly"):
        toolbench.model_note = check_model(kind, run_options)
    _register_markers(config, toolbench, warn=role != "worker")
    if role != "worker":
        config.pluginmanager.register(ResultCollector(toolbench), "toolbench-results")
        _register_reports(config, toolbench)
    if role == "controller":
        from .xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(toolbench), "toolbench-xdist")
    elif role == "worker":
        from .xdist import WorkerManifest

        config.pluginmanager.register(WorkerManifest(toolbench), "toolbench-manifest")


def check_model(kind: type[BackendKind], run_options: options.RunOptions) -> str | None:
    """The model (or endpoint) must be there before anything starts: one usage error naming it and the fix, in
    seconds, instead of a traceback after minutes. Returns a line for the header (e.g. cached copy used offline)."""
    from ..backends.model_source import ModelUnavailable, check_endpoint

    try:
        note = kind.check_model(run_options)
        user_base_url = run_options.generation.user_base_url
        if user_base_url and not run_options.cache.offline:
            check_endpoint("--toolbench-user-base-url", user_base_url)
        return note
    except ModelUnavailable as error:
        raise pytest.UsageError(f"pytest-toolbench: {error}") from None


def _register_markers(config: pytest.Config, toolbench: RunContext, warn: bool) -> None:
    """Every marker of the run's suites, described, before collection (``pytest --markers``, ``--strict-markers``,
    also on xdist workers, whose ``-m`` check may name a suite they rule out); then a ``-m`` expression naming a
    marker no suite or plugin knows gets a warning instead of silently selecting nothing (once: not on workers)."""
    import difflib

    from ..run.context import run_paths

    definitions = toolbench.catalog.definitions_under(run_paths(config))
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


def _register_reports(config: pytest.Config, toolbench: RunContext) -> None:
    from . import report_options
    from ..report.run import RUN_KEY, ReportRun

    import dataclasses

    from ..run.context import run_paths

    settings = report_options.resolve(config)
    definitions = toolbench.catalog.definitions_under(run_paths(config))
    settings = dataclasses.replace(settings, leaderboards=report_options.resolve_leaderboards(
        config, definitions, toolbench.options.data.data_dir))
    run = ReportRun(settings)
    config.stash[RUN_KEY] = run
    config.pluginmanager.register(run, "toolbench-report")
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        from ..report.facts import report_title
        from ..report.html import HtmlReport
        from ..report.run_report import CaseRequests

        # The HTML writer gets data only: its title now, each row's request on the row's report (rendered here,
        # from the catalog), the run report when the session finishes.
        config.pluginmanager.register(CaseRequests(toolbench.catalog, toolbench.ledger.suite_facts),
                                      "toolbench-requests")
        config.pluginmanager.register(HtmlReport(report_title(None, toolbench.options)), HTML_PLUGIN)


@pytest.hookimpl(trylast=True)
def pytest_toolbench_make_backend(config: pytest.Config, options: "options.RunOptions", catalog: Catalog,
                                  kind: type[BackendKind]) -> Backend:
    """The default, called last: what the chosen kind builds."""
    return kind.build(options, catalog)


def pytest_unconfigure(config: pytest.Config) -> None:
    toolbench = run_context(config)
    if toolbench is not None:
        toolbench.close()
    anchored = config.stash.get(DATA_ENV_KEY, None)
    # a run inside another process (pytester) leaves the environment as it found it
    if anchored is not None and os.environ.get(options.DATA_ENV) == anchored[1]:
        os.environ[options.DATA_ENV] = anchored[0]


def pytest_report_header(config: pytest.Config) -> list[str]:
    toolbench = run_context(config)
    if toolbench is None:
        return []
    data_options = toolbench.options.data
    data = f"{data_options.data_dir} ({data_options.data_dir_origin})" if data_options.data_dir else \
        "none given: pinned upstream download, else the shipped samples"
    lines = [f"toolbench: backend {toolbench.kind.describe(toolbench.options)}", f"toolbench: data {data}"]
    if toolbench.model_note:
        lines.append(f"toolbench: {toolbench.model_note}")
    return lines


# -- collection ------------------------------------------------------------------------------------------------
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if collection.is_definition(file_path) and run_context(parent.config) is not None:
        return collection.SuiteFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    toolbench = run_context(config)
    if toolbench is None:
        return
    # The loaded suites live until the end of the run: out of the garbage collector's generations, they cost
    # nothing at each collection pass (pytest itself runs full passes at session end).
    gc.freeze()
    if toolbench.role == "single":
        report_unmatched_keywords(config, toolbench, (name for item in session.items
                                                      for name in (item.nodeid, *(m.name for m in item.own_markers))))
    if config.getoption("collectonly"):
        return
    if toolbench.role == "single":
        entries = selected_items(toolbench, session.items)
        toolbench.ledger.expect(ledger.manifest(entries))
        check_backend(toolbench)
        toolbench.report_selection(terminal_writer(config))
        one_line_failures(config, only_cases=bool(entries) and len(entries) == len(session.items)
                          and not session.testsfailed)
    if config.getoption("toolbench_check_prompts", False) and toolbench.role != "worker":
        run_check_prompts(toolbench, selected_cases(toolbench, session.items), terminal_writer(config))  # exits
    if not toolbench.uses_engine:
        return
    if toolbench.role == "single":
        run_pregeneration(toolbench, selected_cases(toolbench, session.items), terminal_writer(config))


def report_unmatched_keywords(config: pytest.Config, toolbench: RunContext, item_names) -> None:
    """A ``-k`` word that matches nothing collected: a line with the closest names (a typo otherwise selects
    nothing without a word)."""
    if not (config.option.keyword or "").strip():
        return
    from ..run.context import run_paths

    definitions = toolbench.catalog.definitions_under(run_paths(config))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for line in collection.unmatched_keywords(config, definitions, item_names):
        if reporter is not None:
            reporter.write_line(line, yellow=True, bold=True)


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
        if is_worker(item.config):
            # ASCII JSON text of the safe record: pytest serialises report.__dict__ through execnet, which carries
            # a str whatever the model wrote (it cannot carry every int or string a record could otherwise hold).
            report.toolbench_json = records.transport(record)
        else:
            report.toolbench = record
    return report


class ResultCollector:
    """Controller-side (or single-process) collection of per-case records from test reports. ``tryfirst`` so
    the decoded record (``report.toolbench``) is there for every other reporter of the same report."""

    def __init__(self, toolbench: RunContext):
        self.ledger = toolbench.ledger

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = records.from_report(report)
        if record is not None:
            self.ledger.add(record)
        elif report.skipped:
            self.ledger.skip(report.nodeid)


# -- summary ---------------------------------------------------------------------------------------------------
def build_summary(toolbench: RunContext):
    from ..contract import aggregates
    from ..run.summary import SuiteInput, summarize

    benchmarks: dict[str, Any] = {}
    for record in toolbench.ledger.records:
        if record.suite not in benchmarks:
            facts = toolbench.ledger.suite_facts(record.suite)
            benchmark = toolbench.registry.benchmark(facts.scorer, Path(facts.definition))
            design = aggregates.load_or_problem(Path(facts.definition).parent / aggregates.DECLARATION)
            benchmarks[record.suite] = SuiteInput(benchmark, facts.title, facts.data_source, facts.available, design)
    return summarize(toolbench.ledger.records, benchmarks, toolbench.header())


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Aggregate once, on the controller, before any terminal output; conftests see it through a hook."""
    toolbench = run_context(session.config)
    if toolbench is None:
        return
    if toolbench.role == "worker":
        # A worker's terminal summary is printed nowhere, yet pytest would still build its failures section (a scan
        # of every report per failure). The reports were all made already, so their tracebacks are unchanged.
        session.config.option.tbstyle = "no"
        return
    from ..report.run import RUN_KEY

    if exitstatus == pytest.ExitCode.INTERRUPTED and toolbench.interrupted is None:
        toolbench.interrupted = "while the cases were scored"
    case_records = toolbench.ledger.close()
    if case_records:
        toolbench.summary = build_summary(toolbench)
        session.config.hook.pytest_toolbench_summary(config=session.config, summary=toolbench.summary)
    run = session.config.stash.get(RUN_KEY, None)
    if run is not None:  # baseline, gates, the run report, JSON and Markdown files, and the exit status
        report = run.finish(session, toolbench.summary, case_records, toolbench.options.generation.tool_parser)
        html = session.config.pluginmanager.get_plugin(HTML_PLUGIN)
        if html is not None:  # pytest-html writes its page after this hook (trylast), from this report
            html.report = report


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    toolbench = run_context(config)
    if toolbench is None or toolbench.role == "worker":
        return
    from ..report import failures, terminal
    from ..report.run import RUN_KEY

    run = config.stash.get(RUN_KEY, None)
    failure_lines = failures.lines(toolbench.ledger.records, defects_expected=toolbench.kind.reference_answers)
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
    for line in run.kept:
        terminalreporter.write_line(line, yellow=True)
    if toolbench.interrupted:
        terminalreporter.write_line(f"toolbench: INTERRUPTED {toolbench.interrupted}: the figures above cover the "
                                    "cases scored before that, the others have no verdict (not_run)",
                                    red=True, bold=True)
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
