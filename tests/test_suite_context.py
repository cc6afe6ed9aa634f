"""The suite context: what a scorer knows of its suite in a run (data folder, definition, options, libraries), handed
to ``load_cases(context)`` and bound to every case by the catalog, so that case payloads carry the benchmark's data
and no run setting. A scorer written before the context (``load_cases(data_dir, definition)``, ``run_info(data_dir)``)
is still called that way; a ``load_cases`` that takes neither form is one error that says what it must take."""

from __future__ import annotations

import pickle
import shutil
import types
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE, REPO
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext
from pytest_toolbench.run import suite_cache
from pytest_toolbench.run.cache_layout import CacheLayout
from pytest_toolbench.run.catalog import Catalog, Registry, import_scorer
from pytest_toolbench.run.suite_binding import loader_form

SHIPPED = sorted(path.parent.name for path in (REPO / "suites").glob("*/suite.yaml"))


def _catalog(root: Path, registry: Registry | None = None, **kwargs) -> Catalog:
    return Catalog(registry or Registry(), None, "", CacheLayout.at(root / "cache").downloads, False, limit=None,
                   **kwargs)


def _echo(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE_SUITE / "suites" / "echo", tmp_path / "echo")
    return tmp_path / "echo" / "suite.yaml"


def test_every_case_is_bound_to_its_suites_context(tmp_path):
    suite = _catalog(tmp_path).load(_echo(tmp_path))
    context = suite.cases[0].context
    assert isinstance(context, SuiteContext)
    assert context.name == "echo" and context.from_samples and context.data_dir == suite.source.path
    assert context.definition == suite.definition.raw and context == suite.context
    assert all(case.context is context and case.suite == "echo" for case in suite.cases)


def test_cached_cases_are_stored_unbound_and_bound_again_on_every_load(tmp_path, monkeypatch):
    definition_path = _echo(tmp_path)
    first = _catalog(tmp_path, suite_cache_dir=tmp_path / "suites").load(definition_path)
    stored = list((tmp_path / "suites").glob("*.pickle"))
    assert stored, "the loaded-suite cache wrote nothing"
    assert b"SuiteContext" not in b"".join(path.read_bytes() for path in stored)
    monkeypatch.setattr(first.benchmark, "load_cases", lambda context: pytest.fail("not read from the cache"))
    again = _catalog(tmp_path, suite_cache_dir=tmp_path / "suites").load(definition_path)
    assert [c.case_id for c in again.cases] == [c.case_id for c in first.cases]
    assert all(case.context == first.cases[0].context for case in again.cases)


def test_the_suite_cache_format_changed_with_the_payloads():
    # Cases cached before the context carried data_dir / tl_failures in their payloads: never read them back.
    assert suite_cache.FORMAT >= 2


def test_a_loader_written_before_the_context_is_still_called_with_folder_and_definition(tmp_path):
    seen = {}

    def load_cases(data_dir, definition):
        seen.update(data_dir=data_dir, definition=definition)
        return [Case("a", "short", {"text": "hi"})]

    def run_info(data_dir):
        return {"folder": Path(data_dir).name}

    old = types.SimpleNamespace(load_cases=load_cases, run_info=run_info, build_request=print, gold_output=print,
                                score=print, aggregate=print)
    registry = Registry()
    registry.add_benchmark("old_echo", old)
    definition_path = _echo(tmp_path)
    definition_path.write_text(definition_path.read_text().replace("scorer: scorer ", "scorer: old_echo "))
    suite = _catalog(tmp_path, registry).load(definition_path)
    assert loader_form(load_cases) == "data_dir, definition"
    assert loader_form(lambda data_dir, definition=None: []) == "data_dir, definition"
    assert loader_form(lambda ctx: []) == loader_form(lambda context, extra=None: []) == "context"
    assert seen["data_dir"] == suite.source.path and seen["definition"]["name"] == "echo"
    assert isinstance(seen["definition"], dict)
    assert suite.cases[0].context == suite.context and suite.cases[0].suite == "echo"
    assert dict(suite.source.info) == {"folder": "samples"}


def test_a_load_cases_of_neither_form_is_one_error_that_teaches_the_contract(tmp_path):
    broken = types.SimpleNamespace(load_cases=lambda data_dir, definition, extra: [], build_request=print,
                                   gold_output=print, score=print, aggregate=print)
    registry = Registry()
    registry.add_benchmark("broken", broken)
    with pytest.raises(DataError) as error:
        registry.benchmark("broken", tmp_path / "suite.yaml")
    message = str(error.value)
    assert "load_cases(data_dir, definition, extra)" in message and "load_cases(context)" in message
    assert "SuiteContext" in message and error.value.field == "scorer"


def test_a_shipped_loader_takes_the_context():
    for name in SHIPPED:
        assert loader_form(import_scorer(REPO / "suites" / name).load_cases) == "context", name


@pytest.mark.parametrize("name", SHIPPED)
def test_no_shipped_payload_carries_a_run_setting(tmp_path, name):
    suite = _catalog(tmp_path).load(REPO / "suites" / name / "suite.yaml")
    folder = str(suite.source.path)
    # the data folder, the libraries opted into and every suite option live in the context, never in a payload
    settings = {"data_dir", "tl_failures", *suite.definition.option_specs, "max_messages"}

    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                yield from strings(item)

    assert suite.cases
    for case in suite.cases:
        assert not settings & set(case.payload), (name, case.case_id)
        assert not any(folder in text for text in strings(dict(case.payload))), (name, case.case_id)
        assert case.context is not None and case.context.data_dir == suite.source.path


def test_tl_failures_reads_the_opt_in_from_the_context():
    from pytest_toolbench.scorer_lib import tl_failures

    case = Case("a", "short", {})
    assert not tl_failures.enabled(case)
    assert tl_failures.enabled(SuiteContext(Path("."), {"libraries": ["tl_failures"]}).bind([case])[0])
    assert not tl_failures.enabled(SuiteContext(Path("."), {"libraries": []}).bind([case])[0])


def test_the_context_is_no_part_of_a_cases_identity_and_pickles():
    context = SuiteContext("data", dict(load_definition(EXAMPLE_SUITE / "suites" / "echo" / "suite.yaml").raw))
    case = Case("a", "short", {"text": "x"})
    bound = context.bind([case])[0]
    assert bound == Case("a", "short", {"text": "x"}, suite="echo") and "context" not in repr(bound)
    assert pickle.loads(pickle.dumps(bound)).context == context
    assert context.data_dir == Path("data") and context.options == {} and context.libraries == frozenset()
    with pytest.raises(TypeError, match="suite.yaml mapping"):
        SuiteContext(Path("."), ["not", "a", "mapping"])
