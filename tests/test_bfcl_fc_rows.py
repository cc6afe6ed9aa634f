"""A run with a BFCL leaderboard row (``--toolbench-bfcl-model``), FC or prompting, prompts and decodes as that row's
official handler: end to end through the suite's request building, the vLLM backend's prompt preparation
(``VllmBackend.render``, no tokenizer needed), the multi-turn step loop and the BFCL scorer, against the handler
oracle (``tests/data/bfcl_handler_oracle.json.gz``, frozen from bfcl-eval 2026.3.23 by ``scripts/make_handler_oracle.py``).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from pytest_toolbench.backends.vllm import batch as vllm_engine
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.contract.suite import Case, Generation, SuiteContext, Task
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
ORACLE = json.loads(gzip.decompress((REPO / "tests/data/bfcl_handler_oracle.json.gz").read_bytes()))["rows"]
bfcl = scorer("bfcl")
checker = scorer("bfcl", "checker")
conversation = scorer("bfcl", "multi_turn.conversation")
executor = scorer("bfcl", "multi_turn.executor")
decoding = scorer("bfcl", "decoding")
ast_checker = scorer("bfcl", "single_turn.ast_checker")
handler_path = scorer("bfcl", "handler_path")

#: FC rows of several call formats, and prompting rows routed through the row registry
ROWS = ["Qwen/Qwen3-8B-FC", "meta-llama/Llama-3.1-8B-Instruct-FC", "Salesforce/xLAM-2-3b-fc-r",
        "microsoft/Phi-4-mini-instruct-FC", "THUDM/glm-4-9b-chat", "ibm-granite/granite-3.2-8b-instruct",
        "ibm-granite/granite-4.0-350m", "MadeAgents/Hammer2.1-7b", "mistralai/Ministral-8B-Instruct-2410",
        "microsoft/phi-4", "Qwen/Qwen3-8B", "tiiuae/Falcon3-7B-Instruct-FC"]
MISTRAL_ID = re.compile(r'"id": "[A-Za-z0-9]{9}"|"call_id": "[A-Za-z0-9]{9}"')


def _mask(text: str) -> str:  # MistralFCHandler's call ids are random upstream (masked in the oracle too)
    return MISTRAL_ID.sub(lambda m: m.group(0)[:m.group(0).index(":") + 2] + '"<ID>"', text)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A fine-tune folder the row is named for (no tokenizer: a handler's text needs none)."""
    folder = tmp_path_factory.mktemp("ckpt") / "step-1200"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "mistral"}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ 'not the protocol' }}"}))
    return str(folder)


class HandedToTheTemplate:
    """Falcon3FCHandler renders with the checkpoint's own chat template, not obtainable offline: this stand-in for its
    tokenizer writes what ``apply_chat_template`` is handed, as the oracle script recorded it (the handlers'
    oracle test checks the same)."""

    def apply_chat_template(self, messages, tools=None, tokenize=True, add_generation_prompt=False):
        assert tokenize is False
        return json.dumps({"messages": messages, "tools": tools, "add_generation_prompt": add_generation_prompt},
                          ensure_ascii=False)


def _backend(checkpoint: str, row: str) -> VllmBackend:
    backend = VllmBackend(checkpoint, handler_row=row)
    assert backend.row_choice().row == row and backend.row_choice().matched == "named"
    if backend.prompt_formats().handler_for("bfcl").renders_with_template:
        backend._tokenizer_obj = HandedToTheTemplate()
    return backend


def _case(scenario: dict) -> Case:
    category = scenario["id"].rsplit("_", 1)[0]
    payload = {"id": scenario["id"], "question": scenario["question"], "function": scenario["function"],
               "holdout": scenario.get("holdout", {}), "ground_truth": [], "involved_classes": [],
               "initial_config": {}}
    return Case(suite="bfcl", case_id=scenario["id"], category=category, payload=payload)


def _answer(backend: VllmBackend, case: Case, text: str) -> Generation:
    """The reply as the engine hands it over: with the renderer's name and the handler's recorded text."""
    return vllm_engine.with_recorded_answer(Generation(text=text, finish_reason="stop"),
                                            backend.prompt_formats().handler_for("bfcl"))


@pytest.mark.parametrize("row", ROWS)
def test_a_named_row_prompts_single_turn_and_multi_turn_as_its_handler(row, checkpoint, monkeypatch):
    backend = _backend(checkpoint, row)
    oracle = ORACLE[row]
    executed: list = []

    def execute_calls(calls, instances, entry_id="entry"):  # the oracle script's results
        executed.append(list(calls))
        return [json.dumps({"call": call, "k": k}) if k % 2 else f"Result {k} of {call}" for k, call in enumerate(calls)]

    monkeypatch.setattr(conversation, "execute_calls", execute_calls)  # the name the conversation calls
    monkeypatch.setattr(conversation, "new_instances", lambda case: {"simulators": object()})
    for scenario in oracle["scenarios"]:
        case = _case(scenario)
        if scenario.get("single_turn"):
            request = bfcl.build_request(case)
            assert _mask(backend.render(Task(case, request, 0))) == scenario["prompts"][0], scenario["id"]
            continue
        if case.category.startswith("memory"):
            continue  # an agentic entry needs its memory backend; its step loop is the multi-turn one
        executed.clear()
        replies = iter(_replies_sent(scenario))
        loop = conversation.conversation(case)
        prompts, request, step = [], next(loop), 0
        try:
            while True:
                prompts.append(_mask(backend.render(Task(case, request, step, in_conversation=True))))
                step += 1
                request = loop.send(_answer(backend, case, next(replies)))
        except StopIteration as done:
            output = json.dumps(done.value)
        assert prompts == scenario["prompts"], scenario["id"]
        assert executed == [calls for calls in scenario["executed"] if calls is not None], scenario["id"]
        # the transcript names the handler; its decode_execute reads each recorded step as upstream's checker does
        assert conversation.transcript_handler(output) == oracle["handler"]
        decode = handler_path.step_decoder(oracle["handler"])
        steps = [step for turn in json.loads(output)["result"] for step in turn]
        ran = []
        for step_value in steps:
            try:
                calls = decode(step_value)
            except executor.StepDecodeError:
                calls = []
            if not executor.is_empty_step(calls):
                ran.append(calls)
        assert ran == executed


def _replies_sent(scenario: dict) -> list[str]:
    """The scenario's replies in the order the step loop asks for them: a turn ends at its first reply that does not
    execute (``executed`` is None), and its later replies are never requested."""
    sent, executed = [], iter(scenario["executed"])
    for turn in scenario["replies"]:
        for reply in turn:
            sent.append(reply["text"])
            if next(executed) is None:
                break
    return sent


def _official_verdict(case: Case, outcome: dict, handler: str) -> tuple[bool, str | None]:
    """The verdict ``bfcl evaluate`` gives the oracle's ``decode_ast`` outcome, through this suite's checker."""
    if case.category == "live_irrelevance":  # no call: a decoder failure or an empty output
        passed = "raises" in outcome or decoding.is_empty_output(outcome["value"])
        return passed, None if passed else "irrelevance_error:decoder_success"
    if "raises" in outcome:
        return False, "ast_decoder:decoder_failed"
    value = outcome["value"]
    if not decoding.is_function_calling_format(value):
        return False, "ast_decoder:decoder_wrong_output_format"
    result = ast_checker.check_calls(case.payload["function"], value, case.payload["ground_truth"], case.category,
                                     underscore_to_dot=handler_path.underscore_to_dot(handler))
    return result.valid, None if result.valid else result.error_type


@pytest.mark.parametrize("row", ROWS)
def test_a_named_row_scores_every_reply_as_its_handler_decodes_it(row, checkpoint):
    backend = _backend(checkpoint, row)
    oracle = ORACLE[row]
    simple = next(s for s in oracle["scenarios"] if s["id"] == "simple_python_0")
    ground_truth = [{"get_weather": {"city": ["Rome"], "unit": ["", "celsius"]}}]
    cases = [Case(suite="bfcl", case_id="simple_python_0", category="simple_python",
                  payload={"question": simple["question"], "function": simple["function"],
                           "ground_truth": ground_truth}),
             Case(suite="bfcl", case_id="live_irrelevance_0-0-0", category="live_irrelevance",
                  payload={"question": simple["question"], "function": simple["function"], "ground_truth": []})]
    passed = set()
    for item in oracle["decoding"]:
        generation = _answer(backend, cases[0], item["text"])
        assert generation.renderer == f"bfcl-handler:{oracle['handler']}"
        assert Generation.from_json(json.loads(json.dumps(generation.to_json()))) == generation  # cache round trip
        outcome = item["ast"] if "raises" not in item["recorded"] else {"raises": True}
        for case in cases:
            verdict = bfcl.score(case, generation)
            assert (verdict.passed, verdict.error_type) == _official_verdict(case, outcome, oracle["handler"]), (
                case.category, item["text"])
            if verdict.passed:
                passed.add(case.category)
    assert passed == {"simple_python", "live_irrelevance"}  # the corpus holds a right call and a plain answer


def test_fc_rows_send_the_handler_extras_and_no_bfcl_system_prompt(checkpoint):
    glm = _backend(checkpoint, "THUDM/glm-4-9b-chat")
    handler = glm.prompt_formats().handler_for("bfcl")
    assert handler.own_tools_block and handler.extras == {"stop_token_ids": [151329, 151336, 151338]}
    scenario = next(s for s in ORACLE["THUDM/glm-4-9b-chat"]["scenarios"] if s["id"] == "simple_python_0")
    task = Task(_case(scenario), bfcl.build_request(_case(scenario)), 0)
    assert "You are an expert in composing functions" not in glm.render(task)
    params = glm.request_sampling(task, 100, 4096)
    assert params["stop_token_ids"] == [151329, 151336, 151338] and params["skip_special_tokens"] is True
    described = glm.prompt_formats().describe()["suites"]["bfcl"]
    assert described["renderer"] == "bfcl-handler:GLMHandler" and len(described["sha256"]) == 64
    # a row rendered by the checkpoint's own template cannot go to an endpoint's /completions: one clear error
    from pytest_toolbench.backends.openai_endpoint import OpenAIEndpointBackend
    from pytest_toolbench.contract.errors import ToolbenchError
    with pytest.raises(ToolbenchError, match="use the vllm backend"):
        OpenAIEndpointBackend("http://127.0.0.1:9/v1", "m", mode="prompt", handler_row="tiiuae/Falcon3-7B-Instruct-FC")


def test_the_preflight_renders_an_fc_row_with_its_own_tools_block(checkpoint):
    from types import SimpleNamespace

    from pytest_toolbench.prompting import check as prompt_check

    backend = _backend(checkpoint, "Qwen/Qwen3-8B-FC")
    handler = backend.prompt_formats().handler_for("bfcl")
    text = prompt_check._render_handler(handler, *prompt_check.CONVERSATIONS["first request"])
    assert text.startswith("<|im_start|>system\n# Tools") and '"name": "get_weather"' in text
    assert "You are an expert in composing functions" not in text
    report = prompt_check.check_prompts(SimpleNamespace(prompt_formats=backend.prompt_formats,
                                                        row_choice=backend.row_choice, model="m"), ["bfcl"])
    (check,) = report.suites
    assert check.official and check.renderer == "bfcl-handler:QwenFCHandler" and "own call format" in check.decoder
    falcon = _backend(checkpoint, "tiiuae/Falcon3-7B-Instruct-FC")
    (check,) = prompt_check.check_prompts(falcon, ["bfcl"]).suites  # its template rendered by the tokenizer
    assert check.renderer == "bfcl-handler:Falcon3FCHandler" and not any("cannot render" in t for t in check.traps)
    (check,) = prompt_check.check_prompts(SimpleNamespace(prompt_formats=falcon.prompt_formats,
                                                          row_choice=falcon.row_choice, model="m"), ["bfcl"]).suites
    assert any("cannot render here" in trap for trap in check.traps)  # no tokenizer at hand: said, not a crash


def test_every_local_row_but_the_chat_template_ones_is_rendered_in_a_run(checkpoint):
    from pytest_toolbench.scorer_lib.bfcl_handlers import rows as bfcl_rows
    from pytest_toolbench.scorer_lib.bfcl_handlers import registry

    scenario = next(s for s in ORACLE["Qwen/Qwen3-8B-FC"]["scenarios"] if s["id"] == "simple_python_0")
    case = _case(scenario)
    refused = set()
    for row in registry.bfcl_rows():
        if not row.local:
            continue
        try:
            backend = _backend(checkpoint, row.name)
        except Exception as error:  # noqa: BLE001 - listed below
            assert "datamodel-code-generator" in str(error), row.name
            refused.add(row.handler)
            continue
        text = backend.render(Task(case, bfcl.build_request(case), 0))
        assert "get_weather" in text and "What is the weather in Paris?" in text, row.name
        own = backend.prompt_formats().handler_for("bfcl").own_tools_block
        assert ("You are an expert in composing functions" in text) is not own, row.name
    assert refused <= {"MiniCPMFCHandler"}
    assert bfcl_rows.choose_row(None, "Salesforce/xLAM-2-3b-fc-r", None).handler == "SalesforceQwenHandler"


# -- end to end on real entries: the simulators run the calls, the official checker scores the transcript ------------

def _calls(case: Case, turn: int) -> list[tuple[str, dict]]:
    """The turn's ground-truth calls as (name, keyword arguments) (positional ones named, as the gold reply does)."""
    import ast as python_ast

    out = []
    for call in case.payload["ground_truth"][turn]:
        node = python_ast.parse(conversation.keyword_call(call, case.payload["involved_classes"],
                                                          conversation.data_dirs(case)), mode="eval").body
        out.append((python_ast.unparse(node.func), {k.arg: python_ast.literal_eval(k.value) for k in node.keywords}))
    return out


#: each FC call format: the turn's calls written as the row's model writes them
WRITERS = {
    "Qwen/Qwen3-8B-FC": lambda calls: "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>" for n, a in calls),
    "microsoft/Phi-4-mini-instruct-FC": lambda calls: "<|tool_call|>" + json.dumps(
        [{"name": n, "arguments": a} for n, a in calls]) + "<|/tool_call|>",
    "meta-llama/Llama-3.1-8B-Instruct-FC": lambda calls: "; ".join(
        json.dumps({"name": n, "parameters": a}) for n, a in calls),
    "Salesforce/xLAM-2-3b-fc-r": lambda calls: json.dumps([{"name": n, "arguments": a} for n, a in calls]),
}


@pytest.mark.parametrize("row", sorted(WRITERS))
def test_a_real_multi_turn_entry_answered_in_the_rows_format_passes_and_in_another_fails(row, checkpoint,
                                                                                         shared_data):
    import dataclasses

    case = next(dataclasses.replace(c, suite="bfcl") for c in bfcl.load_cases(
        SuiteContext(shared_data / "bfcl", {"categories": ["multi_turn_base"]})) if c.case_id == "multi_turn_base_0")
    backend = _backend(checkpoint, row)
    write = WRITERS[row]

    def run(writer) -> tuple[list[str], Generation]:
        loop, prompts, turn = conversation.conversation(case), [], -1
        request, step = next(loop), 0
        try:
            while True:
                prompts.append(backend.render(Task(case, request, step, in_conversation=True)))
                first_step = request.messages[-1]["role"] == "user"
                turn += first_step
                calls = _calls(case, turn) if first_step else []
                step += 1
                request = loop.send(_answer(backend, case, writer(calls) if calls else "Done."))
        except StopIteration as done:
            return prompts, Generation(text=json.dumps(done.value))

    prompts, output = run(write)
    assert all("You are an expert in composing functions" not in p for p in prompts)
    assert len(prompts) == 2 * len(case.payload["question"])  # one executing step and one closing step per turn
    assert "Error during execution" not in prompts[-1]  # every call ran on the simulators
    verdict = bfcl.score(case, output)
    assert verdict.passed, verdict.explanation
    other = next(w for name, w in WRITERS.items() if name != row and not (
        {row, name} <= {"microsoft/Phi-4-mini-instruct-FC", "Salesforce/xLAM-2-3b-fc-r"}))
    _, wrong = run(other)  # calls in another row's format do not decode under this row's handler
    assert not bfcl.score(case, wrong).passed
