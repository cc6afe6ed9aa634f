"""Requests: the tool docs natively, and (option ``system_prompt: tl_codellama``) TL-CodeLLaMA-2's system prompt."""

from __future__ import annotations

from typing import Any, Mapping

from pytest_toolbench.contract.suite import Case, Request
from .loading import settings

# TL-CodeLLaMA-2's pseudo-tools, as its README lists them; the RoTBench tool lists already end with them.
PSEUDO_TOOLS = [
    {"name": "ask_to_user", "description": "You can ask user for guidance when you think you need more information to "
                                           "handle the task, but you should use this tool as less as you can.",
     "parameters": {"type": "object", "properties": {"question": {"type": "string", "description":
                                                                    "The question you want to ask to user."}},
                    "required": ["question"]}},
    {"name": "finish", "description": "Finish the task and give your answer.",
     "parameters": {"type": "object", "properties": {"answer": {"type": "string",
                                                                 "description": "Your answer for the task."}},
                    "required": ["answer"]}},
]


_TYPE_NAMES = {"string": "str", "integer": "int", "number": "float", "float": "float", "boolean": "bool",
               "array": "list", "object": "dict", "dict": "dict", "tuple": "tuple", "any": "Any"}


def tl_function_block(tool: Mapping[str, Any]) -> str:
    """One tool in TL-CodeLLaMA-2's system-prompt layout (README @ 77c875a9): ``Function:`` + a ``def`` stub."""
    properties = ((tool.get("parameters") or {}).get("properties") or {})
    signature = ", ".join(f"{name}:{_TYPE_NAMES.get(str(spec.get('type')), str(spec.get('type')))}"
                          for name, spec in properties.items())
    lines = [f"Function:\ndef {tool['name']}({signature}):", '    """', f"    {tool.get('description', '')}"]
    if properties:
        lines += ["", "    Args:"]
        lines += [f"        {name} ({spec.get('type')}): {spec.get('description', '')}" for name, spec in
                  properties.items()]
    lines += ['    """', "", ""]
    return "\n".join(lines)


def offered_tools(case: Case) -> list[dict[str, Any]]:
    tools = list(case.payload["tools"])
    if case.payload["dataset"] != "rotbench_clean":
        names = {t["name"] for t in tools}
        tools += [t for t in PSEUDO_TOOLS if t["name"] not in names]
    return tools


def build_request(case: Case) -> Request:
    system_prompt = settings(case)["system_prompt"]
    tools = offered_tools(case)
    messages = [dict(m) for m in case.payload["messages"]]
    if system_prompt == "tl_codellama" and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": "".join(tl_function_block(t) for t in tools)})
    return Request(messages=messages, tools=tools)
