"""BFCL's GLMHandler (``glm.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole handler
in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is given:
:mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- GLMHandler: a one-line reply decodes to ``[<text>]`` (not calling format) and ``decode_execute`` iterates its
  characters (raises unless empty); only the first call of a reply is read.

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import Messages, convert_to_function_call
from .function_docs import convert_to_tool as _convert_to_tool  # the name the renderers were hashed with
from .spec import HandlerSpec, _ast, _exe


def _glm_ast(text: str) -> list:
    lines = text.split("\n")
    return [lines[0]] if len(lines) == 1 else [{lines[0]: json.loads(lines[1])}]


def _glm_execute(text: str) -> list:
    lines = text.split("\n")
    return convert_to_function_call(lines[0] if len(lines) == 1 else [{lines[0]: lines[1]}])


_GLM_SYSTEM = ("[gMASK]<sop><|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，"
               "你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具")


def render_glm(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """GLMHandler (glm.py): GLM-4's Chinese system text and one ``## name`` section per tool (OpenAI-style
    ``convert_to_tool``, ``json.dumps(indent=4)``); no system text at all when there is no tool; messages as
    ``<|role|>\\ncontent`` with no separator."""
    out = ""
    tools = _convert_to_tool(functions, wrap=True)
    if tools:
        out = _GLM_SYSTEM
        for tool in tools:
            out += f"\n\n## {tool['function']['name']}\n\n{json.dumps(tool['function'], indent=4)}"
            out += "\n在调用上述函数时，请使用 Json 格式表示调用的参数。"
    out += "".join(f"<|{m['role']}|>\n{m['content']}" for m in messages)
    return out + "<|assistant|>"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("GLMHandler", "glm.py", render_glm, False, decode_ast=_ast(_glm_ast),
                decode_execute=_exe(_glm_execute), stop_token_ids=(151329, 151336, 151338)),
)
