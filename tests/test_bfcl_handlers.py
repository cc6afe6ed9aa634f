"""Every local BFCL handler re-implemented (``pytest_toolbench/scorer_lib/bfcl_handlers/handlers.py``) against the
official one.

Oracle: ``tests/data/bfcl_handler_oracle.json.gz``, frozen by ``scripts/make_handler_oracle.py`` from bfcl-eval
2026.3.23 run in a separate environment: per handler (one registry row per class and model-name branch), the
``_format_prompt`` text of every request of the scenarios of ``scripts/make_prompt_oracle.py`` (every first-request
shape and every multi-turn step shape) with replies in the handler's own call format, which of them executed, and
the recorded answer, ``decode_ast`` and ``decode_execute`` of a corpus of replies per call format (well-formed,
malformed, with reasoning, parallel). Here the same conversations are built the way the BFCL suite builds them
(its system prompt and language hints, its holdout sentence, its prompting decoder for handlers that keep
``OSSHandler``'s) and rendered and decoded by the re-implementation; every prompt must be byte-identical, every
decoded value equal, every upstream failure a failure here.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from pytest_toolbench.scorer_lib.bfcl_handlers import handlers as bh
from pytest_toolbench.scorer_lib.bfcl_handlers import registry
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
ORACLE = json.loads(gzip.decompress((REPO / "tests/data/bfcl_handler_oracle.json.gz").read_bytes()))
prompt = scorer("bfcl", "prompt")
decoding = scorer("bfcl", "decoding")
executor = scorer("bfcl", "multi_turn.executor")
conversation = scorer("bfcl", "multi_turn.conversation")

MISTRAL_ID = re.compile(r'"id": "[A-Za-z0-9]{9}"|"call_id": "[A-Za-z0-9]{9}"')


def _mask(text: str) -> str:
    return MISTRAL_ID.sub(lambda m: m.group(0)[:m.group(0).index(":") + 2] + '"<ID>"', text)


def _prompting_ast(text: str, language: str):
    return decoding.decode(text, language)


def _prompting_execute(text):
    return executor.decode_prompting_step(text)


def _jsonable(value):
    return json.loads(json.dumps(value, default=repr))


def _conversation(row: dict, scenario: dict) -> tuple[list[str], list]:
    """The scenario's requests as the suite builds them, rendered by the re-implemented handler; a reply executes
    when the re-implemented ``decode_execute`` gives a non-empty list (results as the oracle script writes them)."""
    spec = bh.handler_spec(row["handler"])
    category = scenario["id"].rsplit("_", 1)[0]
    functions = prompt.hinted_functions(scenario["function"], category)
    first = [dict(m) for m in scenario["question"][0]]
    if spec.bfcl_system_prompt:
        first = prompt.prompting_messages(scenario["question"], scenario["function"], category)
    messages: list[dict] = []
    prompts: list[str] = []
    executed: list = []
    for turn, turn_messages in enumerate(scenario["question"]):
        held_out = scenario.get("holdout", {}).get(str(turn))
        if turn == 0:
            messages.extend(first)
        elif held_out is not None:
            messages.append({"role": "user", "content": f"{held_out}\n{conversation.HOLDOUT_SENTENCE}"})
        else:
            messages.extend(dict(m) for m in turn_messages)
        for reply in scenario["replies"][turn]:
            prompts.append(_render(row, messages, functions, len(prompts)))
            if scenario.get("single_turn"):
                return prompts, executed
            recorded = bh.recorded_answer(row["handler"], reply["text"])
            try:
                calls = bh.decode_execute(row["handler"], recorded, _prompting_execute, _prompting_ast)
                runs = not executor.is_empty_step(calls)
            except (bh.HandlerDecodeError, executor.StepDecodeError):
                runs = False
            messages.append({"role": "assistant", "content": reply["text"]})
            if not runs:
                executed.append(None)
                break
            executed.append(calls)
            messages.extend({"role": "tool", "name": call,
                             "content": json.dumps({"call": call, "k": k}) if k % 2 else f"Result {k} of {call}"}
                            for k, call in enumerate(calls))
    return prompts, executed


def _render(row: dict, messages: list[dict], functions: list[dict], step: int) -> str:
    if bh.handler_spec(row["handler"]).render is None:  # the checkpoint's chat template: what it is handed
        return json.dumps({"messages": messages, "tools": functions, "add_generation_prompt": True},
                          ensure_ascii=False)
    return _mask(bh.render(row["handler"], messages, functions, model_name=row["model_name"], step=step,
                           tool_code=_recorded_tool_code(row) if "tool_code" in row else None))


def _recorded_tool_code(row: dict):
    """MiniCPMFCHandler's generator output as the oracle recorded it (datamodel-code-generator is not installed
    here): the text around it is what is checked."""
    def tool_code(tool):
        code = row["tool_code"][json.dumps(tool, sort_keys=True)]
        if code is None:
            raise ValueError("the generator failed on this doc upstream")
        return code
    return tool_code


SCENARIO_CASES = [(name, index) for name, row in ORACLE["rows"].items() for index in range(len(row["scenarios"]))]


@pytest.mark.parametrize(("row_name", "index"), SCENARIO_CASES)
def test_every_request_is_byte_identical_to_the_official_handler(row_name, index):
    row = ORACLE["rows"][row_name]
    scenario = row["scenarios"][index]
    if "raises" in scenario:
        with pytest.raises(Exception):
            _conversation(row, scenario)
        return
    prompts, executed = _conversation(row, scenario)
    assert executed == scenario["executed"]
    assert len(prompts) == len(scenario["prompts"])
    for step, (ours, official) in enumerate(zip(prompts, scenario["prompts"])):
        assert ours == official, f"{row['handler']} step {step} differs"


DECODE_CASES = [(name, index) for name, row in ORACLE["rows"].items() for index in range(len(row["decoding"]))]


def _outcome(function):
    try:
        return {"value": _jsonable(function())}
    except Exception:  # noqa: BLE001 - compared with upstream's failure below
        return {"raises": True}


@pytest.mark.parametrize(("row_name", "index"), DECODE_CASES)
def test_decoding_matches_the_official_handler(row_name, index):
    row = ORACLE["rows"][row_name]
    case = row["decoding"][index]
    handler = row["handler"]
    recorded = _outcome(lambda: bh.recorded_answer(handler, case["text"]))
    assert ("raises" in recorded) == ("raises" in case["recorded"])
    if "raises" in recorded:
        return
    assert recorded == case["recorded"]
    value = bh.recorded_answer(handler, case["text"])
    for key, run in (("ast", lambda: bh.decode_ast(handler, value, "python", _prompting_ast)),
                     ("execute", lambda: bh.decode_execute(handler, value, _prompting_execute, _prompting_ast))):
        ours = _outcome(run)
        if "raises" in case[key]:
            assert "raises" in ours, f"{key}: upstream raises {case[key]['raises']}, ours gives {ours}"
        else:
            assert ours == case[key], key


def test_every_local_handler_class_is_covered_or_listed_as_not_reproduced():
    used = {row.handler for row in registry.bfcl_rows() if row.local}
    assert used <= set(bh.HANDLERS) | set(bh.NOT_REPRODUCED)
    checked = {row["handler"] for row in ORACLE["rows"].values()}
    assert set(bh.HANDLERS) - {"QuickTestingOSSHandler"} <= checked
    with pytest.raises(bh.UnknownHandler, match="not a local handler"):
        bh.handler_spec("OpenAICompletionsHandler")
    try:
        import datamodel_code_generator  # noqa: F401
    except ImportError:  # MiniCPMFCHandler's generator: one clear error without it
        with pytest.raises(bh.UnknownHandler, match="datamodel-code-generator"):
            bh.render("MiniCPMFCHandler", [{"role": "user", "content": "q"}], [{"name": "f", "description": "d",
                      "parameters": {"type": "dict", "properties": {}}}], model_name="openbmb/MiniCPM3-4B")


def test_oracle_covers_parallel_calls_reasoning_and_failures():
    for name, row in ORACLE["rows"].items():
        outcomes = row["decoding"]
        # a malformed reply raises, decodes to no call, or to something that is not a call list, per handler
        assert any("raises" in c.get("ast", {}) or c.get("ast", {}).get("value") == []
                   or not isinstance(c.get("ast", {}).get("value", []), list) for c in outcomes), name
        assert any(len(c.get("ast", {}).get("value") or []) >= 2 for c in outcomes) or row["handler"] in (
            "GLMHandler", "ThinkAgentHandler", "HammerHandler"), name
        assert sum(len(s.get("prompts", [])) for s in row["scenarios"]) >= 6, name


def test_upstream_defects_are_reproduced():
    hammer = ORACLE["rows"]["MadeAgents/Hammer2.1-7b"]["scenarios"]
    multi = next(s for s in hammer if s["id"] == "multi_turn_base_0")["prompts"]
    assert [p.count("default is 'celsius'") for p in multi] == [1, 2, 3, 4, 5]  # the docs grow on every request
    think = ORACLE["rows"]["ThinkAgents/ThinkAgent-1B"]["scenarios"]
    assert all(step is None for s in think for step in s.get("executed", []))  # never executes a call
    granite = next(s for s in ORACLE["rows"]["ibm-granite/granite-20b-functioncalling"]["scenarios"]
                   if s["id"] == "multi_turn_base_0")
    assert granite["executed"][1] == ["<think>\nBoth are known now.\n</think>\n\nRome is 21, Oslo is 4."]
    assert not ORACLE["rows"]["ibm-granite/granite-3.2-8b-instruct"]["scenarios"][0]["prompts"][0].endswith(
        "<|start_of_role|>assistant<|end_of_role|>")
    with pytest.raises(bh.HandlerDecodeError, match="cannot record"):
        bh.recorded_answer("MistralFCHandler", '{"name": "f", "arguments": {}}')


def test_model_output_is_never_evaluated():
    """LlamaHandler_3_1 ``eval``s a reply without ``;``: a literal decodes as upstream, anything else is refused."""
    assert bh.decode_ast("LlamaHandler_3_1", "{'name': 'f', 'parameters': {'a': (1, 2)}}", "python",
                         _prompting_ast) == [{"f": {"a": (1, 2)}}]
    with pytest.raises(bh.HandlerDecodeError, match="not a Python literal"):
        bh.decode_ast("LlamaHandler_3_1", "{'name': 'f', 'parameters': {'a': __import__('os').getcwd()}}",
                      "python", _prompting_ast)


def test_request_settings_the_handlers_send():
    """``OSSHandler._query_prompting`` adds ``stop_token_ids`` / ``skip_special_tokens`` where a handler sets them."""
    assert bh.handler_spec("GLMHandler").stop_token_ids == (151329, 151336, 151338)
    assert bh.handler_spec("MiniCPMFCHandler").stop_token_ids == (2, 73440)
    assert bh.handler_spec("MiniCPMFCHandler").skip_special_tokens is False
    others = [s for s in bh.HANDLERS.values() if s.name not in ("GLMHandler", "MiniCPMFCHandler")]
    assert all(s.stop_token_ids is None and s.skip_special_tokens is None for s in others)
