"""How a run finds its backend (the ``pytest_toolbench_backend_kind`` hook and the built-in kinds), the options
each backend owns, the process role, and the one record type: the pieces the core asks instead of testing names."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from types import SimpleNamespace
from typing import Mapping

import pytest

from conftest import EXAMPLE_SUITE
from pytest_toolbench.backends.gold import GoldKind
from pytest_toolbench.backends.openai_plugin import OpenAIKind, OpenAIOptions
from pytest_toolbench.backends.replay import ReplayKind, ReplayOptions
from pytest_toolbench.backends.vllm.plugin import VllmKind, VllmOptions
from pytest_toolbench.contract.suite import OPTIONAL_RECORD_FIELDS, RECORD_FIELDS, CaseRecord, CaseResult
from pytest_toolbench.run.options import CacheOptions, DataOptions, GenerationOptions, RunOptions
from pytest_toolbench.plugin.xdist import process_role, worker_input


@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data", "data", "-p", "no:randomly", *args)


@pytest.mark.parametrize("kind, backend_options", [
    (GoldKind, None),
    (ReplayKind, ReplayOptions(path="/saved", mode="fc")),
    (VllmKind, VllmOptions(prompt_format="handler", tensor_parallel_size=2, engine_args={"enforce_eager": True})),
    (OpenAIKind, OpenAIOptions(base_url="http://127.0.0.1:9/v1")),
])
def test_run_options_cross_to_a_worker_as_json_and_come_back_equal(kind, backend_options):
    options = RunOptions(backend=kind.name, model="m", backend_options=backend_options,
                         data=DataOptions(data_dir="/data", limit=3, suite_options={"rotbench": {"levels": ["clean"]}}),
                         generation=GenerationOptions(mode="native", temperature=0.5, seed=7),
                         cache=CacheOptions(cache_dir="/cache", offline=True, commit_every=5))
    shipped = json.loads(json.dumps(options.to_json(), allow_nan=False))  # what xdist carries
    assert RunOptions.from_json(shipped, kind) == options


def test_the_built_in_kinds_state_their_capabilities_before_any_backend_is_built():
    assert [kind.pregenerates for kind in (GoldKind, ReplayKind, VllmKind, OpenAIKind)] == [False, False, True, True]
    assert GoldKind.reference_answers and not ReplayKind.reference_answers
    assert ReplayKind.reports_selection and not VllmKind.reports_selection
    options = RunOptions(backend="replay", backend_options=ReplayOptions(path="/saved"))
    assert ReplayKind.replayed_path(options) == "/saved" and GoldKind.replayed_path(options) is None
    assert ReplayKind.header_fields(options) == {"replay_mode": "per file"}


def test_the_process_role_is_read_in_one_place():
    def config(dist: str, collectonly: bool = False, **extra):
        options = {"dist": dist, "collectonly": collectonly}
        return SimpleNamespace(getoption=lambda name, default=None: options.get(name, default), **extra)

    assert process_role(config("no")) == "single"
    assert process_role(config("load")) == "controller"
    assert process_role(config("load", collectonly=True)) == "single"
    worker = config("no", workerinput={"workerid": "gw0", "toolbench": {"manifest_dir": "/m"}})
    assert process_role(worker) == "worker" and worker_input(worker) == {"manifest_dir": "/m"}
    assert worker_input(config("no")) == {}


def test_one_record_type_from_scorer_to_aggregation_in_the_json_field_order():
    assert CaseResult is CaseRecord
    record = CaseRecord("s", "c", "cat", False, "format_error", {"n": 1.0})  # a suite test's positional form
    assert record.counts == {"n": 1.0} and record.error_type == "format_error"
    assert not isinstance(record, Mapping)  # a plain value, read by attribute
    assert tuple(record.to_json()) == RECORD_FIELDS
    assert set(RECORD_FIELDS) | set(OPTIONAL_RECORD_FIELDS) == {field.name for field in dataclasses.fields(CaseRecord)}
    assert CaseRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    # --toolbench-repeat's sample index: present, last, and read back only when set
    sampled = dataclasses.replace(record, sample=2)
    assert tuple(sampled.to_json()) == RECORD_FIELDS + ("sample",)
    assert CaseRecord.from_json(json.loads(json.dumps(sampled.to_json()))) == sampled


def test_importing_the_backends_package_imports_no_backend_implementation():
    code = ("import sys, pytest_toolbench.backends\n"
            "print(sorted(m for m in sys.modules if m.startswith('pytest_toolbench.backends.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().replace("'", '"')) == []


KIND_CONFTEST = '''
import dataclasses

import pytest

from pytest_toolbench.backends.gold import GoldBackend
from pytest_toolbench.backends.kind import BackendKind
from pytest_toolbench.contract.errors import UsageProblem


@dataclasses.dataclass(frozen=True)
class LoudOptions:
    volume: int


class LoudKind(BackendKind):
    """A conftest's backend: claims the run when --loud is given, owns and validates --loud."""

    name = "loud"
    options_type = LoudOptions

    @classmethod
    def claims(cls, given):
        return given["loud"] is not None

    @classmethod
    def from_values(cls, given, model):
        volume = given["loud"]
        if volume is None or volume < 1:
            raise UsageProblem("--loud must be a positive volume")
        return LoudOptions(volume)

    @classmethod
    def build(cls, options, suites):
        return GoldBackend(suites)

    @classmethod
    def describe(cls, options):
        return f"loud at volume {options.backend_options.volume}"


def pytest_addoption(parser):
    parser.addoption("--loud", type=int, default=None)


@pytest.hookimpl(tryfirst=True)
def pytest_toolbench_backend_kind(config, name):
    return LoudKind.choose(vars(config.option), name)
'''


def test_a_conftest_backend_claims_the_run_through_the_kind_hook(echo):
    (echo.path / "conftest.py").write_text((echo.path / "conftest.py").read_text() + KIND_CONFTEST
                                           if (echo.path / "conftest.py").exists() else KIND_CONFTEST)
    claimed = run(echo, "--loud=3", "--toolbench-json=out.json")
    claimed.assert_outcomes(passed=3)
    assert "toolbench: backend loud at volume 3" in claimed.stdout.str()
    assert json.loads((echo.path / "out.json").read_text())["header"]["backend"] == "loud"
    named = run(echo, "--toolbench-backend=loud", "--loud=2", "-n", "2")  # workers find it by the name shipped
    named.assert_outcomes(passed=3)
    bad = run(echo, "--toolbench-backend=loud")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--loud must be a positive volume*"])
    assert "Traceback" not in bad.stderr.str() + bad.stdout.str()
    run(echo).assert_outcomes(passed=3)  # without --loud the gold kind serves the run


def test_an_unknown_backend_name_lists_every_choice_and_an_option_of_another_backend_is_refused(echo):
    typo = run(echo, "--toolbench-backend=vlm")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(["*--toolbench-backend 'vlm': unknown backend (choose from gold, replay, vllm, "
                               "openai)*"])
    ignored = run(echo, "--toolbench-replay-mode=fc")
    assert ignored.ret == pytest.ExitCode.USAGE_ERROR
    ignored.stderr.fnmatch_lines(["*--toolbench-replay-mode=fc applies to replayed outputs only*"])
