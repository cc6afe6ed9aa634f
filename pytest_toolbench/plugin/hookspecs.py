"""Hooks pytest-toolbench declares, so a ``conftest.py`` can add suites or backends and read the final summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..backends.kind import BackendKind
    from ..contract.suite import Backend
    from ..report.compare import Comparison, GateResult
    from ..report.settings import ReportSettings
    from ..run.catalog import Catalog, Registry
    from ..run.summary import RunSummary
    from .options import RunOptions

hookspec = pytest.hookspec


@hookspec
def pytest_toolbench_register(registry: "Registry") -> None:
    """Add benchmarks or backends before collection.

    ``registry.add_benchmark(name, obj)`` makes ``scorer: name`` in a ``suite.yaml`` resolve to ``obj`` (any object
    or module with the Benchmark functions); ``registry.add_backend(name, factory, engine=True)`` adds a
    ``--toolbench-backend`` choice, where ``factory(options)`` returns a Backend built from the run's ``RunOptions``
    (``engine``: its answers are pre-generated into the cache by the process that owns it). See docs/backends.md.
    """


@hookspec(firstresult=True)
def pytest_toolbench_data_dir(config: pytest.Config, suite: str) -> "Any | None":
    """Return the folder holding ``suite``'s data (a ``pathlib.Path``) to override the usual resolution."""


@hookspec
def pytest_toolbench_summary(config: pytest.Config, summary: "RunSummary") -> None:
    """Called once, on the controller, with the run's final summary (a ``RunSummary``) before it is reported."""


@hookspec(firstresult=True)
def pytest_toolbench_backend_kind(config: pytest.Config, name: "str | None") -> "type[BackendKind] | None":
    """Return the backend kind (a ``pytest_toolbench.backends.kind.BackendKind`` subclass) that serves the run, or
    None to leave it to the next implementation. ``name`` is ``--toolbench-backend`` (None when not given: return
    your kind when the run's options ask for it: ``kind.choose(vars(config.option), name)``). Each built-in kind
    implements it (``plugin/backend_kinds.py``: replay ``tryfirst``, gold ``trylast``); a name no implementation
    claims is one usage error listing the choices. Called in every process, xdist workers included (with the name
    the controller chose), before any backend is built."""


@hookspec(firstresult=True)
def pytest_toolbench_make_backend(config: pytest.Config, options: "RunOptions", catalog: "Catalog",
                                  kind: "type[BackendKind]") -> "Backend | None":
    """Build the run's backend and return it, or return None to leave it to the next implementation. ``options``
    is the run's ``RunOptions`` (``options.backend`` its name, ``options.backend_options`` the kind's own options),
    ``catalog`` the loaded suites (``catalog.by_name(name)``), ``kind`` the chosen backend kind. The default
    implementation, called last, is ``kind.build(options, catalog)``; a conftest can return its own object (with the
    ``Backend`` protocol of ``pytest_toolbench.contract.suite``, ``capabilities`` included), e.g. to wrap what
    ``kind.build`` makes. Called only in the process that owns the backend."""


@hookspec
def pytest_toolbench_gates(config: pytest.Config, summary: "RunSummary",
                           comparison: "Comparison | None") -> "list[GateResult] | None":
    """Return extra CI gates (a list of ``pytest_toolbench.report.compare.GateResult``) judged on the final summary and
    the baseline comparison (None without ``--toolbench-baseline``); a missed one fails the run like a built-in
    gate and is listed with them in the terminal, JSON, Markdown and HTML reports."""


@hookspec
def pytest_toolbench_results_document(config: pytest.Config, document: dict) -> None:
    """Add to (or change) the ``--toolbench-json`` document, a dict, before it is written on the controller."""


@hookspec
def pytest_toolbench_writers(config: pytest.Config, settings: "ReportSettings") -> "list[Any] | None":
    """Return the run's outputs: a list of writers (``pytest_toolbench.report.writers.Writer``: ``name``, ``what``,
    ``path`` and ``write(report)``), or None. Called once, on the controller (or the single process), at configure
    time; ``settings`` are the resolved reporting options (``pytest_toolbench.report.settings.ReportSettings``). The
    built-in writers (terminal, ``--toolbench-json``, ``--toolbench-md``, ``--html``, ``--toolbench-eee``) come from
    the plugin's own implementation (``tryfirst``), then yours, in pluggy's order; each is handed the finished run's
    ``RunReport`` once, when the session finishes. See docs/adding-a-writer.md."""
