"""BFCL's MiniCPMFCHandler (``minicpm_fc.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the
whole handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer
is given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

:func:`minicpm_tool_code` needs ``datamodel-code-generator``, imported only when installed.

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- MiniCPMFCHandler: ``message_format`` edits the stored messages in place, so the functions block grows by
  one copy on every request (see :func:`render_minicpm_fc`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import ast
import json
from typing import Any, Callable, Mapping, Sequence

from .common import AstDecoder, HandlerDecodeError, Messages, UnknownHandler, _call_text
from .function_docs import convert_to_tool as _convert_to_tool  # the name the renderers were hashed with
from .spec import HandlerSpec


_MINICPM_TOOLS = (
    "# Functions\nHere is a list of functions that you can invoke:\n```python\n{tools}\n```\n\n# Function Call Rule "
    "and Output Format\n- If the user's question can be answered without calling any function, please answer the "
    "user's question directly. In this situation, you should return your thought and answer the user's question "
    "directly.\n- If the user cannot be answered without calling any function, and the user does not provide enough "
    "information to call functions, please ask the user for more information. In this situation, you should return "
    "your thought and ask the user for more information.\n- If the user's question cannot be answered without calling "
    "any function, and the user has provided enough information to call functions to solve it, you should call the "
    "functions. In this situation, the assistant should return your thought and call the functions.\n- Use default "
    "parameters unless the user has specified otherwise.\n- You should answer in the following format:\n\n"
    "<|thought_start|>\n{{explain why the user's question can be answered without calling a function or why you "
    "should ask the user for more information or why you should call one or more functions and your plan to solve the "
    "user's question.}}\n<|thought_end|>\n<|tool_call_start|>\n```python\nfunc1(params_name=params_value, "
    "params_name2=params_value2...)\nfunc2(params)\n```\n<|tool_call_end|>\n{{answer the user's question directly "
    "or ask the user for more information}}\n")


_MINICPM_HEADER = ("from enum import Enum\nfrom typing import List, Dict, Optional\nfrom pydantic import BaseModel, "
                   "Field\n\n")


def minicpm_tool_code(tool: Mapping[str, Any]) -> str:
    """minicpm_fc.py ``transform_function``: a ``def`` line and a docstring whose ``Args`` are the pydantic model
    that ``datamodel-code-generator`` (bfcl-eval pins 0.25.7) writes for the parameters, preceded by any nested
    classes. That generator is not a dependency of this package: it is imported here only when installed, and its
    output is only as faithful as its version."""
    try:
        import datamodel_code_generator as generator
        from datamodel_code_generator import DataModelType
        from datamodel_code_generator.format import PythonVersion
        from datamodel_code_generator.model import get_data_model_types
        from datamodel_code_generator.parser.jsonschema import JsonSchemaParser
    except ImportError:
        raise UnknownHandler("MiniCPMFCHandler writes its tool docs with datamodel-code-generator (==0.25.7 in "
                             "bfcl-eval 2026.3.23), which is not installed") from None
    params, defaults = [], []
    for name, prop in tool["parameters"]["properties"].items():
        if "default" in prop:
            defaults.append(f"{name}={prop['default']!r}")
        elif name not in tool["parameters"].get("required", []):
            defaults.append(f"{name}={None!r}")
        else:
            params.append(name)
    out = f"def {tool['name']}({', '.join(params + defaults)}):\n"
    if generator.get_version() < "0.26.2":
        types = get_data_model_types(DataModelType.PydanticBaseModel, target_python_version=PythonVersion.PY_310)
    else:
        from datamodel_code_generator.format import DatetimeClassType
        types = get_data_model_types(DataModelType.PydanticBaseModel, target_python_version=PythonVersion.PY_310,
                                     target_datetime_class=DatetimeClassType.Datetime)
    content = JsonSchemaParser(
        source=json.dumps(tool["parameters"]), data_model_type=types.data_model, data_model_root_type=types.root_model,
        data_model_field_type=types.field_model, data_type_manager_type=types.data_type_manager,
        target_python_version=PythonVersion.PY_311, dump_resolve_reference_action=types.dump_resolve_reference_action,
        field_constraints=True).parse()
    if "class" in content:
        content = content[content.index("class"):]
    classes, args = content.split("class Model(BaseModel):", 1)
    out += f'    """\n    {tool.get("description", "")}\n    Args:\n{args}\n    """\n'
    return classes + out if classes else out


def _minicpm_message(message: dict, system_suffix: str) -> dict:
    """minicpm_fc.py ``message_format`` on a stored message (which it edits in place: see the renderer)."""
    thought = message.get("thought")
    prefix = f"<|thought_start|>\n{thought}\n<|thought_end|>\n" if thought else ""
    if message["role"] == "assistant":
        message["content"] = prefix + (message.get("content") or "")
    elif message["role"] == "user":
        message["content"] = "\n" + message["content"]
    elif message["role"] == "system":
        message["content"] = message["content"] + "\n" + system_suffix
    message["content"] = message["content"].strip()
    return message


def render_minicpm_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int,
                      tool_code: Callable[[Mapping[str, Any]], str] = minicpm_tool_code) -> str:
    """MiniCPMFCHandler (minicpm_fc.py): ChatML whose system turn ends with a ``# Functions`` block of Python stubs
    (one per OSSMODEL-style doc, :func:`minicpm_tool_code`; a doc the generator fails on is left out). Its
    ``message_format`` edits the stored messages in place: an empty system message is inserted for good, and the
    functions block is appended to the system text on every request, so request ``step`` carries it ``step + 1``
    times (DEFECTS); every stored text is ``strip()``-ed."""
    tools = _convert_to_tool(functions, wrap=False)
    block = ""
    if tools:
        code = _MINICPM_HEADER
        for tool in tools:
            try:
                code += "\n\n" + tool_code(tool)
            except UnknownHandler:
                raise
            except Exception:  # noqa: BLE001 - upstream skips a doc its generator fails on
                pass
        block = _MINICPM_TOOLS.format(tools=code).strip()
    stored = [dict(m) for m in messages]
    for request in range(step + 1):
        if stored and stored[0]["role"] != "system":
            stored.insert(0, {"role": "system", "content": ""})
        stored = [_minicpm_message(m, block) for m in stored]
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in stored) + "<|im_start|>assistant\n"


def _minicpm_fc2dict(text: str, prompting_ast: AstDecoder) -> dict:
    """minicpm_fc.py ``fc2dict``: the thought between ``<|thought_start|>``/``<|thought_end|>``, the calls between
    ``<|tool_call_start|>``/``<|tool_call_end|>`` (a fenced block of Python call statements, read like BFCL's
    prompting decoder reads calls) and the content after them; any failure leaves no calls."""
    thought = ""
    if "<|thought_end|>" in text and "<|thought_start|>" in text:
        thought, text = text.rsplit("<|thought_end|>", 1)
        thought = thought.split("<|thought_start|>", 1)[1]
    if "<|tool_call_start|>" in text and "<|tool_call_end|>" in text:
        block, content = text.rsplit("<|tool_call_end|>", 1)
        block = block.split("<|tool_call_start|>", 1)[1]
        try:
            block = block.strip()
            if block.startswith("```"):
                block = block.lstrip("```").strip()
                if block.startswith("python"):
                    block = block.lstrip("python").strip()
            if block.endswith("```"):
                block = block.rstrip("```").strip()
            statements = ast.parse(block).body
            if any(not isinstance(getattr(statement, "value", None), ast.Call) for statement in statements):
                raise HandlerDecodeError("a statement that is not a call")
            calls = []
            for statement in statements:
                for decoded in prompting_ast("[" + ast.unparse(statement.value) + "]", "python"):
                    calls.extend({"name": name, "arguments": arguments} for name, arguments in decoded.items())
            return {"content": content.strip(), "tool_calls": calls, "role": "assistant"}
        except Exception:  # noqa: BLE001 - upstream: a bare except, no calls
            return {"content": content.strip(), "role": "assistant", "thought": thought}
    return {"content": text.strip(), "role": "assistant", "thought": thought}


def _minicpm_ast(recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    message = _minicpm_fc2dict(recorded, prompting_ast)
    if message.get("tool_calls"):
        return [{call["name"]: call["arguments"]} for call in message["tool_calls"]]
    return message["content"]


def _minicpm_execute(recorded: Any, prompting_ast: AstDecoder) -> list:
    message = _minicpm_fc2dict(recorded, prompting_ast)
    return [_call_text(call["name"], call["arguments"], ", ") for call in message.get("tool_calls") or []]


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("MiniCPMFCHandler", "minicpm_fc.py", render_minicpm_fc, False, decode_ast=_minicpm_ast,
                decode_execute=lambda recorded, prompting_execute, prompting_ast: _minicpm_execute(recorded,
                                                                                                   prompting_ast),
                stop_token_ids=(2, 73440), skip_special_tokens=False),
)
