"""BFCL multi-turn: loading, the conversation protocol (prompting and FC), gold, batched rounds, cache and resume.

The checker and executor rules are tested against the official code's frozen verdicts in
``test_bfcl_multi_turn_checker.py`` / ``test_bfcl_executor.py``; here the loop around them is checked against what
``inference_multi_turn_prompting`` / ``inference_multi_turn_FC`` of bfcl-eval 2026.3.23 do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from pytest_toolbench.contract.suite import Generation, SuiteContext
from shipped import scorer

bfcl = scorer("bfcl")
multi_turn = scorer("bfcl", "multi_turn.conversation")
dialogue = scorer("bfcl", "multi_turn.dialogue")
prompt = scorer("bfcl", "prompt")


@pytest.fixture(scope="module")
def cases(shared_data):
    loaded = bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": list(multi_turn.MULTI_TURN)}))
    return {case.case_id: case for case in loaded}


def drive(case, reply, native=False):
    """Run one conversation with ``reply(request, step) -> Generation``; returns (requests, transcript)."""
    conversation = multi_turn.conversation(case)
    requests = []
    try:
        request = next(conversation)
        while True:
            requests.append(request)
            request = conversation.send(reply(request, len(requests) - 1))
    except StopIteration as done:
        return requests, done.value


def text(answer):
    return lambda request, step: Generation(text=answer(request, step) if callable(answer) else answer)


def test_800_entries_with_their_turns_and_held_out_docs(cases):
    assert len(cases) == 800
    for category in multi_turn.MULTI_TURN:
        assert sum(c.category == category for c in cases.values()) == 200
    for case in cases.values():
        assert len(case.payload["ground_truth"]) == len(case.payload["question"])
        assert "multi_turn" in case.keywords
    entry = cases["multi_turn_miss_func_0"]
    held = [doc["name"] for docs in entry.payload["holdout"].values() for doc in docs]
    assert held == ["sort"]
    assert "sort" not in [doc["name"] for doc in entry.payload["function"]]
    assert entry.payload["question"][3] == []


def test_first_request_prompting_and_native(cases):
    case = cases["multi_turn_base_0"]
    request = bfcl.build_request(case)
    offered = case.payload["function"]
    assert request.messages[0] == {"role": "system",
                                   "content": prompt.system_prompt(prompt.hinted_functions(offered, case.category))}
    assert request.messages[1:] == case.payload["question"][0]
    # FC handlers send no BFCL system prompt; the tools carry the hinted docs
    assert list(request.native_messages) == case.payload["question"][0]
    assert [t["function"]["name"] for t in request.tools] == [d["name"] for d in offered]
    assert all(t["function"]["description"].endswith("Note that the provided function is in Python 3 syntax.")
               for t in request.tools)


def test_prompting_holdout_turn_gets_the_docs_and_the_sentence(cases):
    case = cases["multi_turn_miss_func_0"]
    requests, transcript = drive(case, text("I cannot do that."))
    assert transcript["mode"] == "prompting"
    assert [len(turn) for turn in transcript["result"]] == [1] * len(case.payload["question"])
    holdout = requests[3].messages[-1]
    docs = case.payload["holdout"]["3"]
    assert holdout == {"role": "user", "content": str(docs) + "\n" + multi_turn.HOLDOUT_SENTENCE}
    assert requests[3].messages[0] == requests[0].messages[0]  # the system prompt is not updated


def test_native_holdout_turn_adds_the_tools_and_sends_the_sentence(cases):
    case = cases["multi_turn_miss_func_0"]
    native = lambda request, step: Generation(text="no call", tool_calls=[])  # noqa: E731
    requests, transcript = drive(case, native)
    assert transcript["mode"] == "fc"
    assert requests[1].native_messages is None and requests[1].messages[0]["role"] == "user"
    assert requests[3].messages[-1] == {"role": "user", "content": multi_turn.HOLDOUT_SENTENCE}
    added = requests[3].tools[len(requests[0].tools):]
    assert [t["function"]["name"] for t in added] == ["sort"]
    # held-out docs never get the language hint
    assert added[0]["function"]["description"] == case.payload["holdout"]["3"][0]["description"]


def test_calls_run_and_each_result_is_one_tool_message(cases):
    case = cases["multi_turn_base_0"]
    replies = iter(["[pwd(), ls()]", "done"])
    requests, transcript = drive(case, lambda request, step: Generation(text=next(replies, "done")))
    after = requests[1].messages
    assert after[-3] == {"role": "assistant", "content": "[pwd(), ls()]"}
    assert [m["role"] for m in after[-2:]] == ["tool", "tool"]
    assert after[-2]["name"] == "pwd()" and after[-1]["name"] == "ls()"
    assert json.loads(after[-2]["content"]) == {"current_working_directory": "/workspace"}
    assert transcript["result"][0] == ["[pwd(), ls()]", "done"]


def test_native_calls_are_recorded_as_fc_steps(cases):
    case = cases["multi_turn_base_0"]
    calls = iter([[{"name": "pwd", "arguments": {}}], []])

    def reply(request, step):
        return Generation(text="", tool_calls=next(calls, []))

    requests, transcript = drive(case, reply)
    assert transcript["result"][0] == [[{"pwd": "{}"}], ""]
    assistant, tool = requests[1].messages[-2:]
    assert assistant["tool_calls"][0]["function"] == {"name": "pwd", "arguments": "{}"}
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]


def test_an_always_calling_model_is_force_quit_after_21_steps(cases):
    case = cases["multi_turn_base_0"]
    assert len(case.payload["question"]) > 1
    requests, transcript = drive(case, text("[pwd()]"))
    assert len(requests) == dialogue.MAXIMUM_STEP_LIMIT + 1
    assert len(transcript["result"]) == 1
    verdict = bfcl.score(case, Generation(text=json.dumps(transcript)))
    assert not verdict.passed and verdict.error_type == "multi_turn:force_terminated"


def test_gold_replies_pass_every_entry_but_the_known_defects(cases):
    defects = _known_defects()
    failures = []
    for case in cases.values():
        _, transcript = drive(case, lambda request, step, case=case: Generation(
            text=bfcl.gold_reply(case, step, request)))
        verdict = bfcl.score(case, Generation(text=json.dumps(transcript)))
        if not verdict.passed and case.case_id not in defects:
            failures.append((case.case_id, verdict.error_type, verdict.explanation[:200]))
    assert not failures, failures[:5]


def _known_defects() -> set[str]:
    import yaml

    return set(yaml.safe_load((REPO / "suites" / "bfcl" / "known_defects.yaml").read_text()) or {})


def test_replayed_upstream_results_are_scored_in_their_mode(cases, tmp_path):
    case = cases["multi_turn_base_0"]
    gold = json.loads(bfcl.gold_output(case))["result"]
    fc = [[[{"pwd": "{}"}], ""] for _ in case.payload["question"]]
    folder = tmp_path / "result" / "model" / "multi_turn"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_multi_turn_base_result.json").write_text(
        json.dumps({"id": case.case_id, "result": gold}) + "\n")
    outputs = bfcl.replay_outputs(tmp_path / "result")
    verdict = bfcl.score(case, Generation(text=outputs[case.case_id]))
    assert verdict.passed and verdict.labels["mode"] == "prompting"
    verdict = bfcl.score(case, Generation(text=json.dumps(fc)))
    assert verdict.labels["mode"] == "fc" and not verdict.passed
    verdict = bfcl.score(case, Generation(text=json.dumps("Error during inference: boom")))
    assert verdict.error_type == "multi_turn:inference_error"


# -- batched rounds through the plugin, with a cacheable scripted model --------------------------------------------

SCRIPTED_BACKEND = '''
import json, os, signal
from pathlib import Path
from pytest_toolbench.run.catalog import import_scorer
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation

BFCL = import_scorer(Path(os.environ["TOOLBENCH_REPO"]) / "suites" / "bfcl")


class ScriptedBackend:
    """A cacheable model that answers every multi-turn step with the gold reply; logs each batch's size."""
    name = "scripted"
    capabilities = MODEL_BACKEND

    def __init__(self, options):
        self.log = os.environ["SCRIPTED_LOG"]
        self.answered = 0

    def fingerprint(self):
        return {"backend": "scripted", "version": 1}

    def generate(self, tasks, on_chunk=None, **_):
        with open(self.log, "a") as handle:
            handle.write(json.dumps({"n": len(tasks)}) + "\\n")
        out = []
        for index, task in enumerate(tasks):
            out.append(Generation(text=BFCL.gold_reply(task.case, task.step, task.request), finish_reason="stop"))
            if on_chunk is not None:
                on_chunk([(index, out[-1])])
            self.answered += 1
            if os.environ.get("SCRIPTED_KILL_AFTER") == str(self.answered):
                os.kill(os.getpid(), signal.SIGKILL)
        return out

    def close(self):
        pass


def pytest_toolbench_register(registry):
    registry.add_backend("scripted", ScriptedBackend)
'''


def scripted_run(shared_data, tmp_path, *extra, kill_after=None):
    (tmp_path / "scripted_backend.py").write_text(SCRIPTED_BACKEND)
    env = dict(os.environ, TOOLBENCH_REPO=str(REPO), SCRIPTED_LOG=str(tmp_path / "batches.log"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    env.pop("SCRIPTED_KILL_AFTER", None)
    if kill_after is not None:
        env["SCRIPTED_KILL_AFTER"] = str(kill_after)
    (tmp_path / "batches.log").write_text("")
    args = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-k", "bfcl and multi_turn", "-p", "scripted_backend",
            "-p", "no:cacheprovider", "-q", "--toolbench-backend=scripted", f"--toolbench-data={shared_data}",
            f"--toolbench-cache={tmp_path / 'cache'}", f"--toolbench-json={tmp_path / 'run.json'}",
            "--toolbench-limit", "3", "--toolbench-commit-every", "1", *extra]
    return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def batches(tmp_path) -> list[int]:
    return [json.loads(line)["n"] for line in (tmp_path / "batches.log").read_text().splitlines()]


# slow (-m slow): each variant is two pytest subprocess runs over the real BFCL data (about 8 s of CPU serially,
# 20 s with -n 2)
@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_conversations_advance_in_batched_rounds_and_a_rerun_generates_nothing(shared_data, tmp_path, workers):
    first = scripted_run(shared_data, tmp_path, *workers)
    assert first.returncode == 0, first.stdout[-3000:]
    assert "round 1: 12 requests from 12 conversations" in first.stdout, first.stdout[-3000:]
    # each round says how fast it ran
    assert re.search(r"toolbench: round 1: 12 requests from 12 conversations \(.*\); \d+ conversations still "
                     r"running; prompt [\d,]+ tok/s, generation [\d,.]+ tok/s, elapsed \dm\d\ds", first.stdout)
    sizes = batches(tmp_path)
    # one engine call per round with every live conversation's request; identical requests (entries of different
    # categories that open with the same turn) are generated once
    assert 0 < sizes[0] <= 12 and len(sizes) > 2
    document = json.loads((tmp_path / "run.json").read_text())
    assert document["suites"]["bfcl"]["total"] == 12 and document["suites"]["bfcl"]["passed"] == 12
    assert document["header"]["generation"]["rounds"] == len(sizes)

    second = scripted_run(shared_data, tmp_path, *workers)
    assert second.returncode == 0
    assert batches(tmp_path) == []
    assert json.loads((tmp_path / "run.json").read_text())["header"]["generation"]["generated"] == 0


@pytest.mark.slow
def test_a_run_killed_mid_conversation_resumes_from_the_last_committed_round(shared_data, tmp_path):
    killed = scripted_run(shared_data, tmp_path, kill_after=30)
    assert killed.returncode != 0
    answered_before = sum(batches(tmp_path))
    assert answered_before >= 30
    resumed = scripted_run(shared_data, tmp_path)
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    stats = json.loads((tmp_path / "run.json").read_text())["header"]["generation"]
    assert stats["cached"] >= 30 - 1  # every committed answer is reused (commit-every 1)
    total = json.loads((tmp_path / "run.json").read_text())["suites"]["bfcl"]
    assert total["passed"] == 12
