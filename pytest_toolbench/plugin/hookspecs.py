"""Hooks pytest-toolbench declares, so a ``conftest.py`` can add suites or backends and read the final summary."""

from __future__ import annotations

import pytest

hookspec = pytest.hookspec


@hookspec
def pytest_toolbench_register(registry):
    """Add benchmarks or backends before collection.

    ``registry.add_benchmark(name, obj)`` makes ``scorer: name`` in a ``suite.yaml`` resolve to ``obj`` (any object
    or module with the Benchmark functions); ``registry.add_backend(name, factory)`` adds a ``--backend`` choice,
    where ``factory(options)`` returns a Backend. See README, "Adding a suite".
    """


@hookspec(firstresult=True)
def pytest_toolbench_data_dir(config, suite):
    """Return the folder holding ``suite``'s data (a ``pathlib.Path``) to override the usual resolution."""


@hookspec
def pytest_toolbench_summary(config, summary):
    """Called once, on the controller, with the run's final summary (a ``RunSummary``) before it is reported."""


@hookspec(firstresult=True)
def pytest_toolbench_make_backend(config, options, catalog):
    """Build the run's backend for ``options.backend`` (a ``RunOptions``) and return it, or return None to leave it
    to the next implementation. The default implementation, called last, builds the built-ins (gold, replay, vllm,
    openai) and the factories added with ``registry.add_backend``; a conftest can return its own object (with the
    ``Backend`` protocol of ``pytest_toolbench.contract.suite``, ``capabilities`` included) for such a name, e.g. to wrap the
    vLLM engine. The name itself must be a built-in or registered one (so a typo is one usage error)."""


@hookspec
def pytest_toolbench_gates(config, summary, comparison):
    """Return extra CI gates (a list of ``pytest_toolbench.report.compare.GateResult``) judged on the final summary and
    the baseline comparison (None without ``--toolbench-baseline``); a missed one fails the run like a built-in
    gate and is listed with them in the terminal, JSON, Markdown and HTML reports."""


@hookspec
def pytest_toolbench_results_document(config, document):
    """Add to (or change) the ``--toolbench-json`` document, a dict, before it is written on the controller."""
