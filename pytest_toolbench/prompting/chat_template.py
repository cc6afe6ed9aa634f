"""The chat-template side of a prompt that needs no tokenizer: the request's messages as vLLM's OpenAI server hands
them to a chat template, and ``chat_template=`` given as a template's text or a file's path. Used by the in-process
engine's prompt preparation and by the ``--toolbench-check-prompts`` report.

Pure functions; nothing here imports transformers or vllm.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping


def template_messages(messages: Any) -> list[dict[str, Any]]:
    """The request's messages as vLLM's OpenAI server hands them to a chat template: an assistant turn's tool-call
    ``arguments`` written as JSON text become the object they encode (templates such as Qwen2.5's render them with
    ``tojson``, which would otherwise quote the text a second time). Text that is not a JSON object stays text."""
    out = []
    for message in messages:
        message = dict(message)
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and isinstance(calls, (list, tuple)):
            decoded = []
            for call in calls:
                call = dict(call) if isinstance(call, Mapping) else call
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
                    try:
                        arguments = json.loads(function["arguments"])
                    except ValueError:
                        arguments = None
                    if isinstance(arguments, dict):
                        call["function"] = {**function, "arguments": arguments}
                decoded.append(call)
            message["tool_calls"] = decoded
        out.append(message)
    return out


def template_argument(value: Any) -> Any:
    """``--toolbench-vllm-arg chat_template=``: a template's text, or the path of a file holding it (as vLLM's
    ``--chat-template`` takes either)."""
    if isinstance(value, str) and "{" not in value and "\n" not in value:
        path = Path(value).expanduser()
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return value
