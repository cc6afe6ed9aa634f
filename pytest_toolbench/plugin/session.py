"""The plugin's session: one object per pytest process that holds the run and answers every hook.

After syrupy's ``SnapshotSession``: ``plugin/__init__.py`` keeps only hook functions, each one line into this
object, which pytest's config holds under one stash key (:data:`SESSION_KEY`). It owns:

- the run context (``run/context.py``: options, catalog, backend, cache, ledger), built at configure time from plain
  values read off pytest's config (the role, the worker input, the run's paths) and the hooks as callables;
- the run's reporting (``report/run.py``'s :class:`ReportRun`, controller or single process only), fed by the one
  ``tryfirst`` report handler (:meth:`ToolbenchSession.log_report`) that also files the record in the ledger and
  hands each row's request to the HTML writer;
- the run's end as a value (:class:`~pytest_toolbench.report.run.FinishedRun`) that the terminal summary renders.

A ``ToolbenchError`` from the core becomes pytest's usage error or the run's stop here (``plugin/errors.py``), never
in the core.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import os
from pathlib import Path
from typing import Any, Iterable

import pytest

from .check_prompts import run_check_prompts
from .collection import RECORD_KEY, REQUEST_KEY, CaseItem, Markers, SuiteFile, is_definition, \
    unmatched_keywords
from .html import case_extras
from .options import DATA_ENV, anchor_data_env, resolve as resolve_options, rootdir_moved_by
from .report_options import resolve as resolve_report_settings, resolve_leaderboards
from .xdist import is_worker, new_manifest_dir, process_role, read_manifest, remove_manifest_dir, worker_id, \
    worker_input, write_manifest
from ..backends.kind import BackendKind, kinds_of, registered_kind
from ..backends.model_source import ModelUnavailable, check_endpoint
from ..contract.errors import UsageProblem
from ..contract.suite import CaseRecord
from .errors import usage_error
from .handlers import InactiveSession, ReportHandler, WorkerCollection
from .markers import register_markers
from .lifecycle import check_backend, check_gates, one_line_failures, run_pregeneration, selected_cases, selected_items, \
    terminal_writer
from ..report import terminal
from ..report.run import FinishedRun, ReportRun
from ..report.writers import collect as collect_writers
from ..run import case_request, ledger, records
from ..run.catalog import Registry
from ..run.context import RunContext
from ..run.ledger import Ledger
from ..run.options import RunOptions
from ..run.role import WORKER_INPUT_KEY, Role

class ToolbenchSession:
    """The run in this pytest process (``role``: single, xdist controller or worker)."""

    def __init__(self, config: pytest.Config, toolbench: RunContext, run_paths: list[Path],
                 data_env: tuple[str, str] | None):
        self.config = config
        self.toolbench = toolbench
        self.role: Role = toolbench.role
        self.run_paths = run_paths  # the files and folders the run collects from
        self.markers = Markers(config)  # the markers registered with pytest, and one mark per name
        #: (relative, absolute): the relative TOOLBENCH_DATA this run replaced with its absolute form, put back at
        #: unconfigure (see ``anchor_data_env``)
        self.data_env = data_env
        self.report_run: ReportRun | None = None  # controller or single process: the run's reporting
        self.writers: list[Any] = []  # controller or single process: the run's outputs (report/writers.py)
        self.keep_requests = False  # --html: each case's request rides to its row
        self.manifest_dir: Path | None = None  # xdist controller: where workers write their selection
        self.generated = False  # xdist controller: pre-generation ran (once, for the first worker's selection)
        self.summary: Any = None  # the RunSummary, built once at session finish
        self.finished: FinishedRun | None = None  # what the run ended with, once the session finished
        self.check_prompts_status: int | None = None  # --toolbench-check-prompts in a single process: the exit status

    # -- configure ---------------------------------------------------------------------------------------------
    @classmethod
    def configure(cls, config: pytest.Config) -> None:
        """Set the run up (options, backend kind, catalog, markers, reporting) and keep it on the config."""
        if config.getoption("help", False) or config.getoption("version", False):
            return
        role = process_role(config)
        registry = Registry()
        config.hook.pytest_toolbench_register(registry=registry)
        if role == "worker":
            shipped = worker_input(config)["options"]
            kind = choose_backend(config, registry, shipped["backend"])
            run_options = RunOptions.from_json(shipped, kind)
        else:
            kind = choose_backend(config, registry, config.getoption("toolbench_backend"))
            others = [other for other in backend_kinds(config.pluginmanager) if other is not kind]
            run_options = resolve_options(config, kind, others)
        # Once, after the options (whose errors quote the value as given) and before xdist starts workers (they
        # inherit the environment): a relative TOOLBENCH_DATA is made absolute against the invocation folder, put
        # back at unconfigure.
        relative = anchor_data_env(config.invocation_params.dir)
        data_env = (relative, os.environ[DATA_ENV]) if relative is not None else None
        paths = run_paths(config)
        try:
            toolbench = RunContext(
                run_options, kind, role, registry,
                make_backend=lambda run_options, catalog, kind: config.hook.pytest_toolbench_make_backend(
                    config=config, options=run_options, catalog=catalog, kind=kind),
                data_dir_hook=lambda name: config.hook.pytest_toolbench_data_dir(config=config, suite=name),
                check_first=() if role == "worker" else paths, worker_input=worker_input(config),
                pytest_version=pytest.__version__)
        except BaseException as error:
            restore_data_env(data_env)
            if isinstance(error, UsageProblem):
                raise usage_error(error) from None
            raise
        session = config.stash[SESSION_KEY] = cls(config, toolbench, paths, data_env)
        session.start()

    def start(self) -> None:
        config, toolbench, role = self.config, self.toolbench, self.role
        if role != "worker" and not config.getoption("collectonly"):
            toolbench.model_note = check_model(toolbench.kind, toolbench.options)
        definitions = toolbench.catalog.definitions_under(self.run_paths)
        register_markers(config, self.markers, definitions, warn=role != "worker",
                         data_unverified=toolbench.options.data.data_unverified)
        html_active = bool(config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None))
        # a worker keeps each case's request when its controller writes the HTML report
        self.keep_requests = bool(toolbench.worker_input.get("keep_requests")) if role == "worker" else html_active
        if role != "worker":
            settings = resolve_report_settings(config)
            settings = dataclasses.replace(settings, leaderboards=resolve_leaderboards(
                config, definitions, toolbench.options.data.data_dir))
            try:  # the built-in writers (plugin/writers.py) and any a conftest or plugin adds
                writers = collect_writers(config.hook.pytest_toolbench_writers(config=config, settings=settings))
            except ValueError as error:
                raise pytest.UsageError(str(error)) from None
            self.writers = writers
            self.report_run = ReportRun(settings, writers)
            config.pluginmanager.register(ReportHandler(self), "toolbench-reports")
        if role == "controller":
            self.manifest_dir = new_manifest_dir()
        elif role == "worker":
            config.pluginmanager.register(WorkerCollection(self), "toolbench-manifest")

    def unconfigure(self) -> None:
        self.toolbench.close()
        if self.manifest_dir is not None:
            remove_manifest_dir(self.manifest_dir)
        restore_data_env(self.data_env)

    def report_header(self) -> list[str]:
        toolbench = self.toolbench
        data_options = toolbench.options.data
        data = f"{data_options.data_dir} ({data_options.data_dir_origin})" if data_options.data_dir else \
            "none given: pinned upstream download, else the shipped samples"
        lines = [f"toolbench: backend {toolbench.kind.describe(toolbench.options)}", f"toolbench: data {data}"]
        if toolbench.model_note:
            lines.append(f"toolbench: {toolbench.model_note}")
        return lines

    # -- collection --------------------------------------------------------------------------------------------
    def collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if not is_definition(file_path):
            return None
        return SuiteFile.from_parent(parent, path=file_path, toolbench=self.toolbench,
                                                run_paths=self.run_paths, markers=self.markers,
                                                score=self.score_item)

    def collection_finished(self, session: pytest.Session) -> None:
        """A single process: the selection, a check that the backend can be built, one-line failures and
        pre-generation (an xdist controller does the same when its first worker has collected)."""
        config, toolbench = self.config, self.toolbench
        # The loaded suites live until the end of the run: out of the garbage collector's generations, they cost
        # nothing at each collection pass (pytest itself runs full passes at session end).
        gc.freeze()
        if self.role == "single":
            self.report_unmatched_keywords(name for item in session.items
                                           for name in (item.nodeid, *(m.name for m in item.own_markers)))
        if config.getoption("collectonly"):
            return
        if self.role == "single":
            entries = selected_items(toolbench, session.items)
            toolbench.ledger.expect(ledger.manifest(entries))
            check_backend(toolbench)
            toolbench.report_selection(terminal_writer(config))
            one_line_failures(config, only_cases=bool(entries) and len(entries) == len(session.items)
                              and not session.testsfailed)
        if config.getoption("toolbench_check_prompts", False) and self.role != "worker":
            # a single process: the report is the run, no test runs and no exit banner (an xdist controller exits)
            self.check_prompts_status = run_check_prompts(
                toolbench, selected_cases(toolbench, session.items), terminal_writer(config), self.forget_run,
                end_plainly=self.role == "single")
            if session.items:
                config.hook.pytest_deselected(items=list(session.items))
                session.items.clear()
            return
        if self.role == "single":
            self.check_gates((suite, case) for _, suite, case, sample in selected_items(toolbench, session.items)
                             if not sample)
        if not toolbench.uses_engine:
            return
        if self.role == "single":
            run_pregeneration(toolbench, selected_cases(toolbench, session.items), config)

    def check_gates(self, suite_cases: Iterable[Any]) -> None:
        """Before generation: a gate that cannot pass, or a baseline that shares no case with the run, stops the
        run with a usage error (``lifecycle.check_gates``)."""
        if self.report_run is not None:
            check_gates(self.toolbench, self.report_run.settings, suite_cases, self.forget_run)

    def report_unmatched_keywords(self, item_names: Iterable[str]) -> None:
        """A ``-k`` word that matches nothing collected: a line with the closest names (a typo otherwise selects
        nothing without a word)."""
        config = self.config
        if not (config.option.keyword or "").strip():
            return
        definitions = self.toolbench.catalog.definitions_under(self.run_paths)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        for line in unmatched_keywords(config, definitions, item_names):
            if reporter is not None:
                reporter.write_line(line, yellow=True, bold=True)

    def forget_run(self) -> None:
        """Nothing ran, by design (``--toolbench-check-prompts``): no summary of "not_run" cases, no report file
        overwritten."""
        self.toolbench.ledger = Ledger()
        self.report_run = None

    # -- xdist -------------------------------------------------------------------------------------------------
    def configure_node(self, node: Any) -> None:
        """Controller: what each worker is handed before it starts."""
        payload: dict[str, Any] = {"options": self.toolbench.options.to_json(),
                                   "manifest_dir": str(self.manifest_dir), "keep_requests": self.keep_requests}
        if self.toolbench.uses_engine:
            payload["fingerprint"] = self.toolbench.fingerprint()
        node.workerinput[WORKER_INPUT_KEY] = payload

    def write_worker_manifest(self, session: pytest.Session) -> None:
        """Worker: the selected cases (after -k/-m/--lf), for the controller to generate."""
        config = session.config
        write_manifest(worker_input(config)["manifest_dir"], worker_id(config),
                             ledger.manifest(selected_items(self.toolbench, session.items)))

    def node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Controller: the first worker's selection (every worker collects the same, xdist checks it) is the run's:
        the same steps as a single process's collection finish, then pre-generation once."""
        if self.generated or self.manifest_dir is None:
            return
        self.generated = True
        config, toolbench = self.config, self.toolbench
        manifest = read_manifest(self.manifest_dir, node.workerinput["workerid"])
        toolbench.ledger.expect(manifest)
        self.report_unmatched_keywords(ids)
        check_backend(toolbench)
        one_line_failures(config, only_cases=bool(ids) and len(manifest.cases) == len(ids))
        toolbench.report_selection(terminal_writer(config))
        suites = {name: toolbench.catalog.load(Path(facts.definition))
                  for name, facts in manifest.suites.items()}
        self.check_gates((suites[row.suite], suites[row.suite].case(row.case_id)) for row in manifest.cases
                         if not row.sample)
        if not toolbench.uses_engine:
            return
        entries = []
        for row in manifest.cases:
            suite = suites[row.suite]
            entries.append((suite, suite.case(row.case_id), row.sample or 0))
        run_pregeneration(toolbench, entries, config, unsaved_dir=self.manifest_dir)
        # Workers read the cache from here on; the controller needs neither the engine nor a writer any more.
        toolbench.close()

    # -- running -----------------------------------------------------------------------------------------------
    def score_item(self, item: CaseItem) -> CaseRecord:
        """The item's record (kept on the item for its report); with ``--html`` the request it was asked with too."""
        if self.keep_requests:
            record, request = self.toolbench.score_keeping_request(item.case, item.nodeid, item.sample)
            item.stash[REQUEST_KEY] = request
        else:
            record = self.toolbench.score(item.case, item.nodeid, item.sample)
        item.stash[RECORD_KEY] = record
        return record

    @staticmethod
    def attach_record(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> pytest.TestReport:
        """A case's call report carries its record (and with ``--html`` its request): as it is in one process, as
        ASCII JSON text from an xdist worker (pytest serialises ``report.__dict__`` through execnet, which carries
        a str whatever the model wrote, but not every int or string a record could otherwise hold)."""
        if call.when != "call" or RECORD_KEY not in item.stash:
            return report
        record = item.stash[RECORD_KEY]
        keeps_request = REQUEST_KEY in item.stash
        if is_worker(item.config):
            report.toolbench_json = records.transport(record)
            if keeps_request:
                report.toolbench_request_json = case_request.transport(item.stash[REQUEST_KEY])
        else:
            report.toolbench = record
            if keeps_request:
                report.toolbench_request = item.stash[REQUEST_KEY]
        return report

    def log_report(self, report: pytest.TestReport) -> None:
        """The one handler of each test report on the controller (or the single process), ``tryfirst`` so the
        decoded record (``report.toolbench``) is there for every other reporter: the record goes to the ledger,
        a failure to the tally, and a case's request and details to its HTML row."""
        record = records.from_report(report)
        if record is not None:
            self.toolbench.ledger.add(record)
        elif report.skipped:
            self.toolbench.ledger.skip(report.nodeid)
        if self.report_run is not None and report.failed:  # None: --toolbench-check-prompts ran instead
            self.report_run.count_failure(report.when == "call" and record is not None and not record.passed)
        if record is not None and report.when == "call" and self.keep_requests:
            text = getattr(report, "toolbench_request_json", None)
            request = case_request.decode(text) if text is not None else getattr(report, "toolbench_request", None)
            report.toolbench_request = request
            case_extras(report, request)

    def collect_report(self, report: pytest.CollectReport) -> None:
        if self.report_run is not None and report.failed:
            self.report_run.count_failure(scored_case=False)

    # -- the end -----------------------------------------------------------------------------------------------
    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """Aggregate once, on the controller, before any terminal output (conftests see the summary through a
        hook); then the reporting ends the run: gates, files, the exit status."""
        config, toolbench = self.config, self.toolbench
        if self.check_prompts_status is not None:  # --toolbench-check-prompts: its report was the run
            session.exitstatus = self.check_prompts_status
            return
        if self.role == "worker":
            # A worker's terminal summary is printed nowhere, yet pytest would still build its failures section (a
            # scan of every report per failure). The reports were all made already, so their tracebacks are
            # unchanged.
            config.option.tbstyle = "no"
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED and toolbench.interrupted is None:
            toolbench.interrupted = "while the cases were scored"
        case_records = toolbench.ledger.close()
        if case_records:
            self.summary = toolbench.summary()
            config.hook.pytest_toolbench_summary(config=config, summary=self.summary)
        if self.report_run is None:
            return
        self.finished = self.report_run.finish(
            session.exitstatus, self.summary, case_records, toolbench.options.generation.tool_parser,
            extra_gates=lambda summary, comparison: config.hook.pytest_toolbench_gates(
                config=config, summary=summary, comparison=comparison),
            interrupted=toolbench.interrupted, defects_expected=toolbench.kind.reference_answers,
            progress=self._progress_line)
        session.exitstatus = self.finished.exit_status

    def _progress_line(self, text: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):
            reporter.write("\n")  # after xdist's progress dots, which leave the line open
        reporter.write_line(text)

    def terminal_summary(self, reporter: Any) -> None:
        if self.finished is None:
            return
        shown = [line for writer in self.writers if isinstance(writer, terminal.TerminalWriter)
                 for line in writer.lines]
        for line in terminal.run_end(self.finished, shown):
            if line.section:
                reporter.section(line.text)
            else:
                reporter.write_line(line.text, **dict.fromkeys(line.markup, True))


SESSION_KEY = pytest.StashKey[ToolbenchSession]()
INACTIVE = InactiveSession()


def toolbench_session(config: pytest.Config) -> ToolbenchSession | InactiveSession:
    """The session of the run ``config`` belongs to (:data:`INACTIVE` where the plugin is not set up)."""
    return config.stash.get(SESSION_KEY, INACTIVE)


# -- set-up helpers --------------------------------------------------------------------------------------------
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


def check_model(kind: type[BackendKind], run_options: RunOptions) -> str | None:
    """The model (or endpoint) must be there before anything starts: one usage error naming it and the fix, in
    seconds, instead of a traceback after minutes. Returns a line for the header (e.g. cached copy used offline)."""
    try:
        note = kind.check_model(run_options)
        user_base_url = run_options.generation.user_base_url
        if user_base_url and not run_options.cache.offline:
            check_endpoint("--toolbench-user-base-url", user_base_url)
        return note
    except ModelUnavailable as error:
        raise pytest.UsageError(f"pytest-toolbench: {error}") from None


def reject_moved_rootdir(config: pytest.Config) -> None:
    moved = rootdir_moved_by(config)
    if moved:
        raise pytest.UsageError(moved)


def run_paths(config: pytest.Config) -> list[Path]:
    """The files and folders the run collects from (``config.args``; a ``--pyargs`` package name as its folder)."""
    paths = []
    for arg in config.args:
        given = arg.split("::", 1)[0]
        path = config.invocation_params.dir / given
        if not path.exists() and config.getoption("pyargs", False):
            try:
                spec = importlib.util.find_spec(given)
            except (ImportError, ValueError):
                spec = None
            if spec is not None and spec.submodule_search_locations:
                path = Path(list(spec.submodule_search_locations)[0])
            elif spec is not None and spec.origin:
                path = Path(spec.origin)
        paths.append(path)
    return paths


def restore_data_env(data_env: tuple[str, str] | None) -> None:
    # a run inside another process (pytester) leaves the environment as it found it
    if data_env is not None and os.environ.get(DATA_ENV) == data_env[1]:
        os.environ[DATA_ENV] = data_env[0]
