"""The suite context (:class:`~pytest_toolbench.contract.suite.SuiteContext`) of a loaded suite, and how the core
calls a scorer with it: ``load_cases(context)`` and ``run_info(context)``, or the forms written before the context,
``load_cases(data_dir, definition)`` and ``run_info(data_dir)``, which are still called that way."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from .. import data
from ..contract.definition import SuiteDefinition
from ..contract.suite import Case, SuiteContext


def suite_context(definition: SuiteDefinition, source: data.DataSource) -> SuiteContext:
    """The context of a suite in this run: its definition (options resolved) and where its data were found."""
    return SuiteContext(source.path, definition.raw, source.kind)


def run_info_of(run_info: Callable[..., Any], context: SuiteContext) -> Mapping[str, Any]:
    """A scorer's optional ``run_info(context)`` (or the older ``run_info(data_dir)``): notes for the run header."""
    parameters = _parameter_names(run_info)
    return run_info(context) if parameters[:1] == ["context"] else run_info(context.data_dir)


def _parameter_names(function: Callable[..., Any]) -> list[str]:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return ["context"]


#: The two forms of ``load_cases`` the catalog calls (``loader_form``).
LOADS_CONTEXT, LOADS_FOLDER_AND_DEFINITION = "context", "data_dir, definition"


def loader_form(load_cases: Callable[..., Any]) -> str | None:
    """How the catalog calls a scorer's ``load_cases``: with the suite's context (``load_cases(context)``, the
    contract's form), with the data folder and the suite.yaml mapping (``load_cases(data_dir, definition)``, the form
    before the context, still called that way), or None when it takes neither."""
    try:
        signature = inspect.signature(load_cases)
    except (TypeError, ValueError):  # a builtin or a callable without one: taken at its word, as the contract says
        return LOADS_CONTEXT
    takes_one, takes_two = _binds(signature, 1), _binds(signature, 2)
    if takes_one and list(signature.parameters)[:1] == ["context"]:
        return LOADS_CONTEXT
    if takes_two:  # (data_dir, definition), also with a default for the definition
        return LOADS_FOLDER_AND_DEFINITION
    return LOADS_CONTEXT if takes_one else None


def _binds(signature: inspect.Signature, count: int) -> bool:
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True


def shown_signature(function: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return "(...)"


def load_suite_cases(benchmark: Any, context: SuiteContext) -> list[Case]:
    """The suite's cases from its scorer, in either form of ``load_cases``, bound to ``context``."""
    if loader_form(benchmark.load_cases) == LOADS_FOLDER_AND_DEFINITION:
        cases = benchmark.load_cases(context.data_dir, dict(context.definition))
    else:
        cases = benchmark.load_cases(context)
    return context.bind(cases)
