"""The run's steps between collection and the first test, shared by a single process and the xdist controller:
the selection, a check that the backend can be built, one-line failures, and pre-generation."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import threading
from pathlib import Path

import pytest

from .collection import CaseItem
from ..contract.errors import ToolbenchError
from .errors import stop_run
from ..run.context import RunContext
from ..run.cache_layout import CacheLayout
from ..run.generation import pregenerate
from ..run.progress import COMMITTING, STOP_REQUESTED, earlier_generation_runs, remember_generation_run
from ..run.requests import unavailable
from ..report import preflight


def selected_items(toolbench: RunContext, items: list[pytest.Item]):
    """(nodeid, loaded suite, case, sample) for every selected benchmark item (sample: None without
    ``--toolbench-repeat``)."""
    return [(item.nodeid, toolbench.catalog.by_name(item.case.suite), item.case, item.sample)
            for item in items if isinstance(item, CaseItem)]


def selected_cases(toolbench: RunContext, items: list[pytest.Item]):
    """(loaded suite, case, sample) of every selected benchmark item: what pre-generation answers."""
    return [(suite, case, sample or 0) for _, suite, case, sample in selected_items(toolbench, items)]


def check_backend(toolbench: RunContext) -> None:
    """Build an on-the-spot backend (gold, replay, a conftest's) before any test: a backend that cannot be built is
    one error, not a failure per case. Engine backends are built by pre-generation, which reports the same way."""
    if toolbench.uses_engine or not toolbench.ledger.has_selection():
        return
    try:
        toolbench.backend()
    except ToolbenchError as error:
        stop_run(error)


def check_gates(toolbench: RunContext, settings, suite_cases, forget_run=lambda: None) -> None:
    """Before generation: stop with a usage error (exit 4) when a gate cannot pass whatever the answers are, or the
    baseline shares no case with the selection (``report/preflight.py``). ``suite_cases``: (loaded suite, case) of
    every selected case. Needs the backend built for an on-the-spot backend (``check_backend``), to know whether it
    hands out finished conversations (replay); an engine backend is never built here. ``forget_run``: called before
    the stop, so that no summary of "not_run" cases is printed and no report file is overwritten."""
    if settings is None or not (settings.thresholds or settings.baseline is not None):
        return
    backend = None if toolbench.uses_engine or not toolbench.ledger.has_selection() else toolbench.backend()
    planned: dict[str, tuple[object, list]] = {}
    for suite, case in suite_cases:
        planned.setdefault(suite.name, (suite, []))[1].append(preflight.PlannedCase(
            case.case_id, case.category, unavailable(suite, case, backend)))
    suites = {}
    for name, (suite, cases) in planned.items():
        facts = toolbench.ledger.suite_facts(name)
        source = dict(facts.data_source) if facts is not None else {}
        suites[name] = preflight.PlannedSuite(
            name, cases, aggregate=suite.benchmark.aggregate, is_sample=source.get("kind") == "samples",
            description=str(source.get("description") or ""),
            available_by_category=dict(facts.available.by_category) if facts is not None else {})
    found = preflight.problems(settings, suites, {"limit": toolbench.options.data.limit})
    if found:
        forget_run()
        pytest.exit("pytest-toolbench: " + "\npytest-toolbench: ".join(found), returncode=pytest.ExitCode.USAGE_ERROR)


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
    words = list(config.invocation_params.args) + list(config.getini("addopts"))
    words += shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    if prefix == "-r":  # -r CHARS, -rCHARS, --report-chars
        return any(str(word).startswith("-r") and not str(word).startswith("--") or str(word) == "-r"
                   or str(word).startswith("--report-chars") for word in words)
    return any(str(word).startswith(prefix) for word in words)


def terminal_writer(config: pytest.Config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return reporter.write_line if reporter else (lambda line: None)


def fit_width(text: str, width: int) -> str:
    """``text`` cut to ``width - 1`` characters (the last column left free: writing into it wraps on some
    terminals), an ellipsis marking the cut."""
    room = max(width - 1, 1)
    return text if len(text) <= room else text[:room - 1] + "…"


class TerminalLines:
    """Lines for the terminal reporter, plus one updating status line (carriage return) when the terminal is a TTY;
    a kept line first ends the status line. ``status`` is None off a terminal (CI logs get plain lines)."""

    def __init__(self, config: pytest.Config):
        self.reporter = config.pluginmanager.get_plugin("terminalreporter")
        self._open = False
        tty = bool(self.reporter is not None and getattr(self.reporter, "isatty", False))
        self.status = self._status if tty else None

    def _status(self, text: str) -> None:
        # One physical line, or the carriage return goes back to the start of the last wrapped piece only and the
        # redraw leaves the rest on screen; pytest's erase pads the rest of the line with blanks.
        self.reporter.rewrite(fit_width(text, self.width()), erase=True)
        self._open = True

    def width(self) -> int:
        writer = getattr(self.reporter, "_tw", None)
        width = getattr(writer, "fullwidth", None)
        if not isinstance(width, int) or width <= 0:
            width = shutil.get_terminal_size().columns
        return width

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


@contextlib.contextmanager
def stop_on_interrupt():
    """Ctrl-C during generation: KeyboardInterrupt at once, as Python does, and the stop flag of ``run.progress``
    set, so that should an engine swallow the exception the next progress report raises it again (generation stops
    within one engine step). The previous handler comes back afterwards."""
    STOP_REQUESTED.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        STOP_REQUESTED.set()
        if not COMMITTING.is_set():  # else raised once the answers being written are in
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        STOP_REQUESTED.clear()


def run_pregeneration(toolbench: RunContext, entries, config: pytest.Config, unsaved_dir: Path | None = None) -> None:
    """Generate once, writing to the terminal of ``config``; a failure is reported once and stops the run, never as
    N test errors. ``unsaved_dir``: on an xdist controller, the folder where answers the cache file could not take
    are handed to the workers."""
    lines = TerminalLines(config)
    write_line = terminal_writer(config)
    try:
        try:
            with stop_on_interrupt():
                pregenerate_selection(toolbench, entries, lines.line if lines.status else write_line,
                                      status=lines.status, unsaved_dir=unsaved_dir)
        finally:
            lines.end()
    except ToolbenchError as error:  # a CacheError too: it names the file and the fix
        stop_run(error)
    except Exception as error:  # an engine crash: report once, the cache keeps what was committed
        if type(error).__module__ == "sqlite3":  # not expected past GenerationCache; still, name the file
            where = CacheLayout.at(toolbench.options.cache.cache_dir).generations
            pytest.exit(f"pytest-toolbench: the generation cache {where} failed: {type(error).__name__}: {error} "
                        "(move it aside or point --toolbench-cache to another folder)",
                        returncode=pytest.ExitCode.INTERNAL_ERROR)
        pytest.exit(f"pytest-toolbench: generation failed: {type(error).__name__}: {error}",
                    returncode=pytest.ExitCode.INTERNAL_ERROR)


def pregenerate_selection(toolbench: RunContext, entries, write_line, status=None,
                          unsaved_dir: Path | None = None) -> None:
    """Generate every missing answer once, before any test runs (engine backends only)."""
    if not toolbench.uses_engine or not entries:
        return
    options = toolbench.options
    suites = sorted({entry[0].name for entry in entries})
    repeat = options.generation.repeat
    what = (f"{len(entries)} cases" if repeat == 1 else
            f"{len(entries)} samples ({len({(e[0].name, e[1].case_id) for e in entries})} cases x {repeat})")
    # Opened first, before any engine starts: a corrupt file is moved aside now, or (offline) is one error.
    cache = toolbench.cache()
    shown = 0

    def show_notes() -> None:
        nonlocal shown
        for note in cache.notes[shown:]:
            write_line(f"toolbench: {note}")
        shown = len(cache.notes)

    show_notes()
    runs_file = CacheLayout.at(options.cache.cache_dir).generation_runs
    if options.cache.offline:
        write_line(f"toolbench: --toolbench-offline: {what} of {', '.join(suites)} "
                   "will be scored from the cache only")
        earlier = earlier_generation_runs(runs_file, toolbench.fingerprint())
        if earlier:  # the report keeps how the cached answers were produced
            toolbench.pregeneration = {"offline": True, "earlier_runs": earlier}
        return
    write_line(f"toolbench: pre-generating answers for {what} of {', '.join(suites)} "
               f"with {options.backend} ({options.model})")
    before = len(cache)
    try:
        stats = pregenerate(entries, toolbench.backend(), cache, toolbench.fingerprint(),
                            options.generation.max_tokens, progress=lambda line: write_line(f"toolbench: {line}"),
                            status=(lambda line: status(f"toolbench: {line}")) if status else None)
    except KeyboardInterrupt:
        # pytest stops the run (exit 2); the report says it was interrupted and never replaces an earlier one
        # with a run that scored nothing (report/run.py)
        committed = max(len(cache) - before, 0)
        toolbench.interrupted = f"during generation, with {committed} new answers committed to the cache"
        write_line(f"toolbench: interrupted (Ctrl-C): generation stopped; the {committed} answers generated so far "
                   f"are committed to {cache.path}, and the same command goes on from them")
        raise
    finally:
        show_notes()
    toolbench.pregeneration = stats.to_json()
    earlier = earlier_generation_runs(runs_file, toolbench.fingerprint()) if stats.cached else []
    if earlier:  # answers read from the cache: the figures of the runs that generated them
        toolbench.pregeneration["earlier_runs"] = earlier
    if stats.generated:
        remember_generation_run(runs_file, toolbench.fingerprint(), toolbench.pregeneration)
    unsaved = len(cache.unsaved)
    if unsaved:
        toolbench.pregeneration["unsaved"] = unsaved
        if toolbench.role == "controller" and unsaved_dir is not None:
            # The workers score, and cannot see this process's memory: hand them a file of their own.
            cache.save_unsaved(CacheLayout.unsaved(unsaved_dir))
            show_notes()
    rounds = f" in {stats.rounds} rounds" if stats.rounds else ""
    write_line(f"toolbench: {stats.generated} generated, {stats.cached} from cache{rounds}, "
               f"{stats.seconds:.1f}s" + (f"; {unsaved} kept in memory only, not saved to {cache.path}"
                                          if unsaved else ""))
