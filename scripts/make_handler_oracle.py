"""Freeze every BFCL local handler's prompt text and reply decoding into tests/data/bfcl_handler_oracle.json.gz (the
oracle of tests/test_bfcl_handlers.py).

Run with the official bfcl-eval installed in a separate environment outside the repository (never a dependency):

    python3 -m venv /work/oracle-venv-handlers
    /work/oracle-venv-handlers/bin/pip install ../shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl
    /work/oracle-venv-handlers/bin/pip install soundfile   # imported by qwen-agent, not declared by it
    /work/oracle-venv-handlers/bin/python scripts/make_handler_oracle.py

For every handler (one registry row per handler class and model-name variant) and every scenario of
``scripts/make_prompt_oracle.py`` (single-turn first requests with and without a system message, an assistant message
and consecutive user messages in the question; multi-turn with parallel results, reasoning replies, a holdout turn, a
memory prompt), the official handler runs the prompting loop of ``base_handler.inference_multi_turn_prompting`` /
``inference_single_turn_prompting`` on scripted replies written in the handler's own call format: every request's
``_format_prompt`` text is kept. A reply executes when the handler's ``decode_execute`` gives a non-empty list; its
results are ``Result <k> of <call>`` or a JSON object, alternately; a turn ends at the first reply that does not
execute or when its scripted replies run out. Beside that, a corpus of replies per call format (well-formed, malformed, with reasoning, parallel)
goes through ``_parse_query_response_prompting`` (the recorded answer), ``decode_ast`` and ``decode_execute``.
Falcon3FCHandler renders with the checkpoint's chat template: a recording tokenizer keeps what the handler hands to
``apply_chat_template`` (messages, tools) instead of a text. MistralFCHandler draws random call ids: they are
replaced by ``<ID>`` in its prompts.
"""

import copy
import gzip
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bfcl_eval.constants.enums import ReturnFormat  # noqa: E402
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING  # noqa: E402
from bfcl_eval.utils import _func_doc_language_specific_pre_processing  # noqa: E402
from make_prompt_oracle import SCENARIOS as BASE_SCENARIOS, ScriptedResponse, prompting_loop  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "bfcl_handler_oracle.json.gz"

#: (registry row, call format of its replies); one row per handler class and per model-name branch of a handler.
ROWS = [
    ("Qwen/Qwen3-8B", "python"), ("Qwen/Qwen3-8B-FC", "qwen_fc"),
    ("Nanbeige/Nanbeige4-3B-Thinking-2511", "qwen_fc"),
    ("meta-llama/Llama-3.1-8B-Instruct", "python"), ("meta-llama/Llama-4-Scout-17B-16E-Instruct-FC", "python"),
    ("meta-llama/Llama-3.1-8B-Instruct-FC", "llama31"),
    ("Salesforce/Llama-xLAM-2-8b-fc-r", "json_list"), ("Salesforce/xLAM-2-3b-fc-r", "json_list"),
    ("BitAgent/BitAgent-Bounty-8B", "json_list"), ("ThinkAgents/ThinkAgent-1B", "think_agent"),
    ("google/gemma-3-4b-it", "python"), ("microsoft/phi-4", "python"), ("microsoft/Phi-4-mini-instruct", "python"),
    ("microsoft/Phi-4-mini-instruct-FC", "phi_fc"), ("openbmb/MiniCPM3-4B", "python"),
    ("speakleash/Bielik-11B-v2.3-Instruct", "python"), ("deepseek-ai/DeepSeek-R1", "python"),
    ("MadeAgents/Hammer2.1-7b", "json_list"), ("THUDM/glm-4-9b-chat", "glm"),
    ("ibm-granite/granite-20b-functioncalling", "granite_fc"), ("ibm-granite/granite-3.2-8b-instruct", "granite3"),
    ("ibm-granite/granite-4.0-350m", "qwen_fc"), ("mistralai/Ministral-8B-Instruct-2410", "json_list"),
    ("katanemo/Arch-Agent-7B", "qwen_fc"), ("X-Humanoid/Pelican1.0-VL-30B-A3B-FC", "qwen_fc"),
    ("tiiuae/Falcon3-7B-Instruct-FC", "falcon"), ("google/functiongemma-270m-it-FC", "function_gemma"),
    ("openbmb/MiniCPM3-4B-FC", "minicpm"),
]


def write_calls(calls, style):
    """Reply text for ``calls`` ([(name, {args})]) in a handler's call format."""
    if style == "python":
        return "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in calls) + "]"
    if style == "qwen_fc":
        return "\n".join("<tool_call>\n" + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>" for n, a in calls)
    if style == "falcon":
        return "<tool_call>\n" + json.dumps([{"name": n, "arguments": a} for n, a in calls]) + "\n</tool_call>"
    if style == "llama31":
        return "; ".join(json.dumps({"name": n, "parameters": a}) for n, a in calls)
    if style == "json_list":
        return json.dumps([{"name": n, "arguments": a} for n, a in calls])
    if style == "phi_fc":
        return "<|tool_call|>" + json.dumps([{"name": n, "arguments": a} for n, a in calls]) + "<|/tool_call|>"
    if style == "granite3":
        return "<|tool_call|>" + json.dumps([{"name": n, "arguments": a} for n, a in calls])
    if style == "glm":
        name, arguments = calls[0]
        return name + "\n" + json.dumps(arguments)
    if style == "granite_fc":
        return " ".join("<function_call> " + json.dumps({"name": n, "arguments": a}) for n, a in calls)
    if style == "function_gemma":
        def value(v):
            if isinstance(v, str):
                return f"<escape>{v}<escape>"
            if isinstance(v, bool) or v is None:
                return json.dumps(v)
            if isinstance(v, list):
                return "[" + ",".join(value(i) for i in v) + "]"
            if isinstance(v, dict):
                return "{" + ",".join(f"{k}:{value(i)}" for k, i in v.items()) + "}"
            return str(v)
        return "".join(f"<start_function_call>call:{n}{value(a)}<end_function_call>" for n, a in calls)
    if style == "minicpm":
        return ("<|thought_start|>\nI will call.\n<|thought_end|>\n<|tool_call_start|>\n```python\n"
                + "\n".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in calls)
                + "\n```\n<|tool_call_end|>\n")
    if style == "think_agent":
        return "<think>plan</think>" + json.dumps([{"name": n, "arguments": a} for n, a in calls])
    raise ValueError(style)


_CALL = re.compile(r"(\w+)\((.*?)\)")


def parse_python_reply(text):
    """The scripted python-format replies of make_prompt_oracle as [(name, {args})] (their values are literals)."""
    import ast
    inner = text.strip().split("</think>")[-1].strip()
    if not (inner.startswith("[") and inner.endswith("]")) or inner == "[]":
        return None
    tree = ast.parse(inner, mode="eval")
    return [(c.func.id, {k.arg: ast.literal_eval(k.value) for k in c.keywords}) for c in tree.body.elts]


def restyle(reply_text, style):
    """A scenario reply (python format) in ``style``; text replies stay text; a <think> prefix is kept."""
    if style == "python":
        return reply_text
    calls = parse_python_reply(reply_text)
    if calls is None:
        return reply_text
    think = reply_text.split("</think>")[0] + "</think>\n\n" if "</think>" in reply_text else ""
    return think + write_calls(calls, style)


REASONING_FIRST = {"text": "<think>\nI need the weather.\n</think>\n\n[get_weather(city='Rome'), "
                           "get_weather(city='Oslo')]"}


def scenarios_for(style):
    out = []
    for scenario in BASE_SCENARIOS:
        scenario = copy.deepcopy(scenario)
        if scenario["id"] == "multi_turn_base_0":  # the first reply reasons before its calls
            scenario["replies"][0][0] = dict(REASONING_FIRST)
        for turn in scenario["replies"]:
            for reply in turn:
                reply["text"] = restyle(reply["text"], style)
                reply.pop("results", None)
        out.append(scenario)
    return out


class RecordingTokenizer:
    """Stands in for a checkpoint tokenizer: keeps what the handler asks its chat template to render."""

    def apply_chat_template(self, messages, tools=None, tokenize=False, add_generation_prompt=False):
        return json.dumps({"messages": messages, "tools": tools, "add_generation_prompt": add_generation_prompt},
                          ensure_ascii=False)


def results_for(calls):
    """One result per executed call: text for the first, a JSON object for the second, and so on."""
    return [json.dumps({"call": call, "k": k}) if k % 2 else f"Result {k} of {call}" for k, call in enumerate(calls)]


def build(row):
    config = MODEL_CONFIG_MAPPING[row]
    handler = config.model_handler(model_name=config.model_name, temperature=0.001, registry_name=row,
                                   is_fc_model=config.is_fc_model)
    handler.tokenizer = RecordingTokenizer()
    return handler


def run(row, scenario):
    return prompting_loop(build(row), scenario,
                          lambda reply, decoded: None if decoded is None else results_for(decoded))


WEATHER_CALLS = [("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Oslo", "unit": "celsius"})]
NESTED = [("plan.trip", {"stops": [1, 2.5, "x"], "options": {"fast": True, "note": None}})]


def corpus(style):
    """Replies to decode for one call format: well-formed (one, parallel, nested values, dotted names), with
    reasoning, empty, malformed, plain text."""
    texts = [write_calls(WEATHER_CALLS[:1], style), write_calls(WEATHER_CALLS, style), write_calls(NESTED, style),
             "<think>\nLet me think.\n</think>\n\n" + write_calls(WEATHER_CALLS, style),
             "<think>\nunclosed reasoning " + write_calls(WEATHER_CALLS[:1], style),
             "I cannot help with that.", "", "[]", "```json\n" + write_calls(WEATHER_CALLS[:1], style) + "\n```",
             write_calls(WEATHER_CALLS[:1], style)[:-3], "  " + write_calls(WEATHER_CALLS, style) + "\n",
             '[{"name": "f", "arguments": {"a": true, "b": null}}]', "{'name': 'f', 'parameters': {'a': 1}}",
             '{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}',
             "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\n<tool_call>\nnot json\n</tool_call>",
             "<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]<|/tool_call|>",
             "[get_weather(city='Rome'), get_weather(city='Oslo')]", "get_weather(city='Rome')",
             "<function_call> {\"name\": \"no_function\", \"arguments\": {}}",
             "<start_function_call>call:f{a:<escape>x, y<escape>,b:[1,2.5,true],c:{d:null}}<end_function_call>",
             "<start_function_call>call:g<end_function_call><start_function_call>h{}<end_function_call>",
             "<start_function_call>call:f{a:1,:2,b}<end_function_call>",
             "<|tool_call_start|>\n```python\nf(a=[1, 2], b={'c': None})\nx = g()\n```\n<|tool_call_end|>\nDone.",
             "<|tool_call_start|>\nf(a=1\n<|tool_call_end|>\ntext", "<|thought_start|>only thought<|thought_end|>"]
    seen, out = set(), []
    for text in texts:
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def jsonable(value):
    return json.loads(json.dumps(value, default=repr))


def outcome(function):
    try:
        return {"value": jsonable(function())}
    except Exception as error:  # the handler's failure: only the fact and the class are kept
        return {"raises": type(error).__name__}


def decode_all(row, style):
    handler = build(row)
    out = []
    for text in corpus(style):
        record = outcome(lambda: handler._parse_query_response_prompting(ScriptedResponse(text))["model_responses"])
        entry = {"text": text, "recorded": record}
        if "value" in record:
            recorded = handler._parse_query_response_prompting(ScriptedResponse(text))["model_responses"]
            entry["ast"] = outcome(lambda: handler.decode_ast(recorded, ReturnFormat.PYTHON, False))
            entry["execute"] = outcome(lambda: handler.decode_execute(recorded, False))
        out.append(entry)
    return out


MISTRAL_ID = re.compile(r'"id": "[A-Za-z0-9]{9}"|"call_id": "[A-Za-z0-9]{9}"')


def mask_ids(text):
    return MISTRAL_ID.sub(lambda m: m.group(0)[:m.group(0).index(":") + 2] + '"<ID>"', text)


def minicpm_tool_code(scenarios):
    """MiniCPMFCHandler's generated stub per OSSMODEL-style doc (None where its generator fails), so that the test
    can check the text around the generator without it."""
    from bfcl_eval.constants.enums import ModelStyle
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    from bfcl_eval.model_handler.local_inference.minicpm_fc import transform_function
    from bfcl_eval.model_handler.utils import convert_to_tool
    codes = {}
    for scenario in scenarios:
        functions = _func_doc_language_specific_pre_processing(copy.deepcopy(scenario["function"]),
                                                               scenario["id"].rsplit("_", 1)[0])
        for tool in convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OSSMODEL):
            try:
                codes[json.dumps(tool, sort_keys=True)] = transform_function(copy.deepcopy(tool))
            except Exception:
                codes[json.dumps(tool, sort_keys=True)] = None
    return codes


def main():
    document = {
        "generated_by": "scripts/make_handler_oracle.py with bfcl-eval 2026.3.23 (gorilla "
                        "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) in a separate environment",
        "rows": {},
    }
    for row, style in ROWS:
        config = MODEL_CONFIG_MAPPING[row]
        entry = {"handler": config.model_handler.__name__, "model_name": config.model_name, "style": style,
                 "scenarios": [], "decoding": decode_all(row, style)}
        if entry["handler"] == "MiniCPMFCHandler":
            entry["tool_code"] = minicpm_tool_code(scenarios_for(style))
        for scenario in scenarios_for(style):
            try:
                prompts, executed = run(row, scenario)
                result = {"prompts": [mask_ids(p) for p in prompts], "executed": jsonable(executed)}
            except Exception as error:
                result = {"raises": f"{type(error).__name__}: {error}"}
            entry["scenarios"].append({**scenario, **result})
        document["rows"][row] = entry
        print(row, config.model_handler.__name__, sum(len(s.get("prompts", [])) for s in entry["scenarios"]),
              "prompts", file=sys.stderr)
    # gzip (mtime 0: the same bytes for the same oracle): 1.3 MB of JSON is 64 KB compressed
    OUT.write_bytes(gzip.compress((json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8"),
                                  mtime=0))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
