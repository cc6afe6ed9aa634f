"""BFCL's ThinkAgentHandler (``think_agent.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the
whole handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer
is given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- ThinkAgentHandler: the prompt holds only the first non-system message (no reply, result or later turn ever
  reaches the model), and ``decode_execute`` raises on any reply with a call (it calls ``.items()`` on a string),
  so no multi-turn step ever executes.

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import HandlerDecodeError, Messages, _named
from .spec import HandlerSpec, _ast, _exe


def _think_agent_json(text: str) -> Any:
    text = text.strip().replace("'", '"')
    parts = text.split("</think>", 1)
    return json.loads(parts[1].strip() if len(parts) > 1 else "[]")


def _think_agent_execute(text: str) -> list:
    """ThinkAgentHandler ``decode_execute``: it builds ``f"{name}({arguments})"`` strings, then calls ``.items()`` on
    each: any reply with at least one call raises (DEFECTS); an empty list decodes to ``[]``."""
    calls = _think_agent_json(text)
    texts = [f"{item['name']}({item['arguments']})" for item in calls]
    for _ in texts:
        raise HandlerDecodeError("AttributeError: 'str' object has no attribute 'items' (upstream defect)")
    return []


def render_think_agent(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """ThinkAgentHandler (think_agent.py): a fixed system block, then ONE user turn made of the instructions, the
    docs as a Python ``repr`` of ``{name, description, parameters: properties}`` and the first non-system message;
    every later message (replies, results, later turns) is left out (DEFECTS)."""
    tools = [{"name": f["name"], "description": f["description"],
              "parameters": {k: v for k, v in f["parameters"].get("properties", {}).items()}} for f in functions]
    rest = list(messages[1:]) if messages[0]["role"] == "system" else list(messages)
    out = ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>Cutting Knowledge Date: December 2023"
           "Today Date: 07 Dec 2024<|eot_id|>")
    if rest:
        out += ("<|start_header_id|>user<|end_header_id|>Given the following functions, please respond with a JSON for "
                "a function call with its proper arguments that best answers the given prompt."
                'Respond in the format {"name": function name, "parameters": dictionary of argument name and its '
                "value}.Do not use variables.Available tools:" + f"{tools}" + rest[0]["content"].strip() + "<|eot_id|>")
    return out + "<|start_header_id|>assistant<|end_header_id|>"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("ThinkAgentHandler", "think_agent.py", render_think_agent, False,
                decode_ast=_ast(lambda r: _named(_think_agent_json(r), "arguments")),
                decode_execute=_exe(_think_agent_execute)),
)
