"""``--toolbench-suite-option=SUITE.KEY=VALUE``: a run overrides a setting a suite declares under ``options:`` in
its suite.yaml; a key or suite that is not declared is one usage error, and the loaded-suite cache never hands one
setting's cases to another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import SuiteContext

from conftest import REPO
from shipped import scorer


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}  # the shipped samples
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           f"--toolbench-cache={tmp_path / 'cache'}", *args],
                          cwd=REPO, env=env, capture_output=True, text=True)


def _collected(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stdout.splitlines() if "suite.yaml::" in line]


def test_an_override_changes_what_the_suite_loads_and_is_recorded(tmp_path):
    everything = _collected(_pytest(tmp_path, "suites/rotbench", "--collect-only"))
    clean = _pytest(tmp_path, "suites/rotbench", "--collect-only", "--toolbench-suite-option=rotbench.levels=[clean]")
    assert clean.returncode == 0, clean.stdout[-2000:]
    assert 0 < len(_collected(clean)) < len(everything)
    # the loaded-suite cache keys on the override: without it, every level is back
    assert _collected(_pytest(tmp_path, "suites/rotbench", "--collect-only")) == everything
    out = tmp_path / "run.json"
    run = _pytest(tmp_path, "suites/rotbench", f"--toolbench-json={out}",
                  "--toolbench-suite-option=rotbench.levels=[clean]")
    assert run.returncode == 0, run.stdout[-2000:]
    document = json.loads(out.read_text())
    assert document["header"]["suite_options"] == {"rotbench": {"levels": ["clean"]}}
    assert {case["category"] for case in document["cases"]} == {"first_turn_clean", "third_turn_clean"}


@pytest.mark.parametrize("option, message", [
    ("rotbench.level=[clean]", "suite 'rotbench' has no option 'level' (its options: levels, turns"),
    ("rotbnch.levels=[clean]", "no suite named 'rotbnch' in this run"),
    ("rotbench=[clean]", "expected SUITE.KEY=VALUE"),
])
def test_a_misspelt_option_is_one_usage_error(tmp_path, option, message):
    result = _pytest(tmp_path, "suites/rotbench", "--collect-only", f"--toolbench-suite-option={option}")
    assert result.returncode == 4, result.stdout[-2000:]
    assert message in result.stderr, result.stderr[-2000:]


@pytest.mark.parametrize("paths, option, message", [
    (["suites"], "rotbench.levels=[clen]",
     'pytest-toolbench: --toolbench-suite-option=rotbench.levels=["clen"]: not accepted: rotbench.levels must be a '
     "list of any of clean, slight, medium, heavy, union (at least 1, no repeats)"),
    (["suites/rotbench"], "rotbench.levels=clean", "rotbench.levels must be a list of any of clean"),
    (["suites"], "acebench.languages=[fr]", "acebench.languages must be a list of any of en, zh"),
    (["suites/acebench"], "acebench.agent_max_messages=0", "acebench.agent_max_messages must be an integer >= 1"),
    (["suites/tltraining"], "tltraining.empty_input_fails=maybe", "tltraining.empty_input_fails must be true or false"),
])
def test_a_value_the_options_schema_refuses_is_one_usage_error(tmp_path, paths, option, message):
    result = _pytest(tmp_path, *paths, "--collect-only", f"--toolbench-suite-option={option}")
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert message in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stdout + result.stderr
    assert len([line for line in result.stderr.splitlines() if line.strip()]) == 1, result.stderr


def test_every_shipped_option_declares_a_schema_its_default_matches():
    from pytest_toolbench.contract.definition import load_definition, option_problem

    for path in sorted((REPO / "suites").glob("*/suite.yaml")):
        definition = load_definition(path)  # raises on a default its schema refuses
        for key, spec in definition.option_specs.items():
            assert spec["schema"] and spec.get("description"), (path, key)
            assert option_problem(spec, spec["default"]) is None
            assert definition.raw["options"][key] == spec["default"]  # what the scorer reads: the value


BAD_DEFAULT_YAML = """\
name: tiny
title: Tiny
scorer: scorer
data:
  folder: tiny
categories:
  - name: add
generation:
  max_tokens: 512
options:
  rounds:
    description: how many rounds
    default: -1
    schema: {type: integer, minimum: 1}
"""


def test_a_default_its_schema_refuses_is_one_usage_error_naming_file_line_and_option(tmp_path):
    folder = tmp_path / "suites" / "tiny"
    folder.mkdir(parents=True)
    (folder / "suite.yaml").write_text(BAD_DEFAULT_YAML)
    (folder / "scorer.py").write_text("")
    result = _pytest(tmp_path, str(tmp_path / "suites"), "--collect-only", f"--rootdir={tmp_path}")
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert (f"{folder / 'suite.yaml'}:13: field 'options/rounds/default': the default -1 of tiny.rounds is not "
            "accepted: it must be an integer >= 1") in result.stderr, result.stderr


def test_values_are_read_as_yaml():
    from pytest_toolbench.plugin.options import _parse_suite_options

    assert _parse_suite_options(["a.b=[x, y]", "a.c=false", "d.e=3", "d.f=plain text", "d.g="]) == {
        "a": {"b": ["x", "y"], "c": False}, "d": {"e": 3, "f": "plain text", "g": ""}}
    assert _parse_suite_options(["a.when=2026-01-01"]) == {"a": {"when": "2026-01-01"}}  # not JSON: the text


def test_acebench_agent_message_budget_reaches_the_conversation():
    acebench = scorer("acebench")
    samples = REPO / "suites" / "acebench" / "samples"
    definition = {"options": {"agent_max_messages": 3}}
    agent = [case for case in acebench.load_cases(SuiteContext(samples, definition)) if case.category.startswith("agent_")]
    loop = scorer("acebench", "loop")
    assert agent and all(loop.max_messages(case) == 3 and "max_messages" not in case.payload for case in agent)
    # at most three agent-side messages, then the conversation stops on the limit
    case = next(case for case in agent if case.category == "agent_multi_step")
    conversation = acebench.conversation(case)
    request = next(conversation)
    steps = 0
    from pytest_toolbench.contract.suite import Generation

    try:
        while True:
            steps += 1
            request = conversation.send(Generation(text="I need more information."))
    except StopIteration as done:
        transcript = done.value
    assert steps <= 3 and transcript["stopped_by"] == "limit", transcript


def test_an_option_schema_that_is_not_one_is_refused_naming_its_line(tmp_path):
    from pytest_toolbench.contract.definition import OptionError, load_definition

    path = tmp_path / "suite.yaml"
    path.write_text(BAD_DEFAULT_YAML.replace("default: -1", "default: 1").replace("minimum: 1", "minimum: one"))
    with pytest.raises(OptionError, match=r"suite.yaml:14: field 'options/rounds/schema': not a JSON Schema"):
        load_definition(path)
