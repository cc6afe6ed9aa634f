"""What BFCL's local handlers (bfcl-eval 2026.3.23) record of a reply (``_parse_query_response_prompting``) and
their ``decode_ast`` / ``decode_execute``, as pure functions the table in :mod:`.handlers` names (what a decoder is
given: :mod:`.handlers`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each renderer's docstring). Standard library only.

DEFECTS of the official handlers reproduced here (see :mod:`.handlers` for the whole list):

- ThinkAgentHandler: ``decode_execute`` raises on any reply with a call (it calls ``.items()`` on a string), so no
  multi-turn step ever executes (its prompt: :mod:`.qwen_llama`).
- GraniteFunctionCallingHandler: a chunk of reply text that is not JSON is kept as a "call" by ``decode_execute``, so
  a plain-text answer is executed as a call (and ends up an execution error) instead of ending the turn;
  ``decode_ast`` keeps it as a string (then not in calling format).
- GLMHandler: a one-line reply decodes to ``[<text>]`` (not calling format) and ``decode_execute`` iterates its
  characters (raises unless empty); only the first call of a reply is read.
- LlamaHandler_3_1: ``decode_ast``/``decode_execute`` ``eval`` a reply without ``;`` (here: a literal only).
"""

from __future__ import annotations

import json
from typing import Any

from .common import (AstDecoder, ExecuteDecoder, HandlerDecodeError, _call_text, _python_value,
                     convert_to_function_call)
from .fc_families import _arch_calls, _is_call_list, _phi_fc_like_tools


# -- recorded answers and decoders ------------------------------------------------------------------------------------

def _record_raw(text: str) -> Any:
    return text


def _record_deepseek(text: str) -> Any:
    """DeepseekReasoningHandler: the text after the last ``</think>`` (no newline stripped)."""
    return text.split("</think>")[-1] if "</think>" in text else text


def _record_phi_fc(text: str) -> Any:
    calls = _phi_fc_like_tools(text, fallback_to_end=True)
    return [{c["name"]: c["arguments"]} for c in calls] if _is_call_list(calls) and calls else text


def _record_granite_3(text: str) -> Any:
    calls = _phi_fc_like_tools(text, fallback_to_end=False)
    return [{c["name"]: c["arguments"]} for c in calls] if _is_call_list(calls) and calls else text


def _record_arch(text: str) -> Any:
    calls = _arch_calls(text)
    if not calls:
        return text
    out = []
    for call in calls:
        if type(call) is str:
            call = _python_value(call)
        out.append({call["name"]: call["arguments"]})
    return out


def _record_mistral(text: str) -> Any:
    try:
        calls = json.loads(text)
    except ValueError:
        return text
    for call in calls:
        call["id"] = "x"  # the handler adds an id to each call (a reply that is not a list of dicts raises here)
    return [{call["name"]: call["arguments"]} for call in calls]


def _strip_fence_prefix(text: str) -> str:
    if text.startswith("```json"):
        text = text[len("```json"):]
    if text.startswith("```python"):
        text = text[len("```python"):]
    return text


def _default_ast(recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    return prompting_ast(recorded, language)


def _default_execute(recorded: Any, prompting_execute: ExecuteDecoder, prompting_ast: AstDecoder | None) -> list:
    return prompting_execute(recorded)


def _llama31_calls(text: str) -> list:
    text = text.replace("<|python_tag|>", "")
    if ";" in text:
        return [json.loads(part) for part in text.split(";")]
    calls = _python_value(text)
    return [calls] if type(calls) is dict else calls


def _json_list_or_split(text: str) -> list:
    """xLAM: the reply as JSON (one call or a list), else its ``;``-separated parts each as JSON."""
    try:
        calls = json.loads(text)
        return calls if isinstance(calls, list) else [calls]
    except ValueError:
        return [json.loads(part.strip()) for part in text.split(";")]


def _bitagent_calls(text: str) -> list:
    calls = json.loads(text)
    return calls if isinstance(calls, list) else [calls]


def _hammer_calls(text: str, execute: bool) -> Any:
    """HammerHandler: the reply without backticks as JSON, ``[]`` when it is not JSON; ``decode_execute`` also takes
    a ``{"tool_calls": ...}`` object and wraps a single call in a list."""
    text = text.replace("```", "")
    try:
        calls = json.loads(text)
    except (ValueError, RecursionError):  # upstream: a bare ``except`` (10,000-deep nesting: no call either)
        calls = []
    if not execute:
        return calls
    calls = calls if isinstance(calls, list) else calls.get("tool_calls", []) if isinstance(calls, dict) else []
    return calls if isinstance(calls, list) else [calls]


def _think_agent_json(text: str) -> Any:
    text = text.strip().replace("'", '"')
    parts = text.split("</think>", 1)
    return json.loads(parts[1].strip() if len(parts) > 1 else "[]")


def _glm_ast(text: str) -> list:
    lines = text.split("\n")
    return [lines[0]] if len(lines) == 1 else [{lines[0]: json.loads(lines[1])}]


def _glm_execute(text: str) -> list:
    lines = text.split("\n")
    return convert_to_function_call(lines[0] if len(lines) == 1 else [{lines[0]: lines[1]}])


def _granite_fc_decode(text: str, execute: bool) -> list:
    out: list = []
    for chunk in [c.strip() for c in text.split("<function_call>") if len(c.strip()) > 0]:
        try:
            call = json.loads(chunk.strip())
        except ValueError:
            out.append(chunk)
            continue
        name = call.get("name", "").strip()
        arguments = call.get("arguments", {})
        if name == "no_function":
            out.append("No function is called")
        elif execute:
            out.append(_call_text(name, arguments))
        else:
            out.append({name: arguments})
    return out


def _falcon_calls(text: str) -> list:
    if "<tool_call>" not in text:
        raise HandlerDecodeError("No <tool_call> found in the model's response")
    body = text.split("<tool_call>")[1].split("</tool_call>")[0].strip()
    if body.startswith("```") and body.endswith("```"):
        body = body.strip("```").strip()
        if body.startswith("json"):
            body = body[4:].strip()
    calls = json.loads(body)
    return calls if isinstance(calls, list) else [calls]


def _named(calls: list, key: str) -> list[dict]:
    return [{call["name"]: call[key]} for call in calls]


def _executed(calls: list, key: str) -> list[str]:
    return [_call_text(call["name"], call[key]) for call in calls]


def _think_agent_execute(text: str) -> list:
    """ThinkAgentHandler ``decode_execute``: it builds ``f"{name}({arguments})"`` strings, then calls ``.items()`` on
    each: any reply with at least one call raises (DEFECTS); an empty list decodes to ``[]``."""
    calls = _think_agent_json(text)
    texts = [f"{item['name']}({item['arguments']})" for item in calls]
    for _ in texts:
        raise HandlerDecodeError("AttributeError: 'str' object has no attribute 'items' (upstream defect)")
    return []
