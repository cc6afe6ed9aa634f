"""``--toolbench-keep-prompts``: what the model was sent, kept in the cache and the JSON records (the endpoint
backend here, against a local scripted server; the in-process engine's token ids in tests/test_engine_vllm.py);
refused by the backends that send no prompt."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE
from pytest_toolbench.contract.suite import CaseRecord, Generation
from pytest_toolbench.run import records
from pytest_toolbench.run.requests import _Tally
from test_engine_endpoint import ScriptedServer, backend, task


def test_an_endpoint_answer_keeps_the_chat_request_it_answered():
    with ScriptedServer() as server:
        [kept] = backend(server.url, keep_prompts=True).generate([task("hi", tools=[{"name": "f"}])])
        [plain] = backend(server.url).generate([task("hi")])
        body = server.bodies[0]
    assert kept.prompts == [{"messages": body["messages"], "tools": body["tools"]}]
    assert plain.prompts is None
    assert Generation.from_json(json.loads(json.dumps(kept.to_json()))) == kept  # the cache's round trip


def test_a_conversation_keeps_every_steps_prompt_in_order():
    tally = _Tally()
    for step in range(3):
        tally.add(Generation(text="x", prompts=[{"text": f"step {step}"}]))
    tally.add(Generation(text="cached by a run without the option"))
    assert tally.prompts == [{"text": "step 0"}, {"text": "step 1"}, {"text": "step 2"}]


def test_the_record_keeps_long_prompts_whole():
    ids = list(range(60_000))  # more values than any other record field may hold
    record = records.build_record(dict(suite="s", case_id="c", category="k", passed=True,
                                       prompts=[{"text": "p" * 50_000, "token_ids": ids}]))
    assert record.prompts == [{"text": "p" * 50_000, "token_ids": ids}]
    assert CaseRecord.from_json(json.loads(records.transport(record))) == record  # the xdist transport
    assert "prompts" not in records.build_record(dict(suite="s", case_id="c", category="k", passed=True)).to_json()


@pytest.fixture
def echo(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE_SUITE, tmp_path, dirs_exist_ok=True)
    return tmp_path


def _run(folder: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "suites", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-q", "--toolbench-data=data", f"--toolbench-json={folder / 'run.json'}", *extra],
                          cwd=folder, capture_output=True, text=True, timeout=300)


def test_the_json_records_carry_what_the_endpoint_was_sent(echo):
    with ScriptedServer() as server:
        result = _run(echo, "--toolbench-backend=openai", f"--toolbench-base-url={server.url}", "--model=m",
                      f"--toolbench-cache={echo / 'cache'}", "--toolbench-keep-prompts")
        sent = {json.dumps(body["messages"]) for body in server.bodies}
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    cases = json.loads((echo / "run.json").read_text())["cases"]
    assert cases and all(len(case["prompts"]) == 1 for case in cases)
    assert {json.dumps(case["prompts"][0]["messages"]) for case in cases} == sent


@pytest.mark.parametrize("backend_args", [[], ["--toolbench-replay=worse.jsonl"]])
def test_gold_and_replay_refuse_it_in_one_line(echo, backend_args):
    result = _run(echo, "--toolbench-keep-prompts", *backend_args)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.splitlines() if "--toolbench-keep-prompts" in line]
    assert "not honoured by the" in line and "it applies to the vllm and openai backends" in line

