"""BFCL prompting-mode requests, exactly as bfcl-eval 2026.3.23 builds them for a prompting (non-FC) model.

Sources, gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``berkeley-function-call-leaderboard/``:
- ``bfcl_eval/constants/default_prompts.py``: the "classic" style templates and the plaintext system prompt layout
  (default configuration ``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic``);
- ``bfcl_eval/model_handler/utils.py``: ``formulate_system_prompt`` (function docs as ``json.dumps(indent=4)``),
  ``system_prompt_pre_processing_chat_model`` (prepend to an existing system message with a blank line, else insert
  a new one) and ``convert_to_tool`` / ``_cast_to_openai_type`` (native FC tools);
- ``bfcl_eval/utils.py``: ``_func_doc_language_specific_pre_processing`` (language hint; Java/JS parameter types
  rewritten to ``string`` with the original type stated in the description).

The template strings below are the protocol, transcribed verbatim (including the missing space between the persona
and the task sentence, and the double space left by the empty parameter-type note).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pytest_toolbench.contract.suite import Case, Request
from pytest_toolbench.scorer_lib.bfcl_handlers.function_docs import convert_to_tool
from .categories import language_of


_PERSONA = "You are an expert in composing functions."
_TASK = (
    "You are given a question and a set of possible functions. Based on the question, you will need to make one or "
    "more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If the "
    "given question lacks the parameters required by the function, also point it out."
)
_PYTHON_OUTPUT_FORMAT = (
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]"
)
_TOOL_CALL_FORMAT = (
    "You should only return the function calls in your response.\n\nIf you decide to invoke any of the function(s), "
    "you MUST put it in the format of {output_format}. {param_types} You SHOULD NOT include any other text in the "
    "response."
)
_MULTITURN_BEHAVIOR = (
    "At each turn, you should try your best to complete the tasks requested by the user within the current turn. "
    "Continue to output functions to call until you have fulfilled the user's request to the best of your ability. "
    "Once you have no more functions to call, the system will consider the current turn complete and proceed to the "
    "next turn or task."
)
_AVAILABLE_TOOLS = "Here is a list of functions in {format} format that you can invoke.\n{functions}\n"
_PLAINTEXT_LAYOUT = "{persona}{task}\n\n{tool_call_format}\n\n{multiturn_behavior}\n\n{available_tools}"

_LANGUAGE_HINTS = {
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
    "python": " Note that the provided function is in Python 3 syntax.",
}

def hinted_functions(functions: list[dict], category: str) -> list[dict]:
    """The function docs as the generation step sees them (language hint, Java/JS types as strings)."""
    functions = copy.deepcopy(functions)
    language = language_of(category)
    for function in functions:
        function["description"] = function["description"] + _LANGUAGE_HINTS[language]
        if language == "python":
            continue
        for value in function["parameters"]["properties"].values():
            if value["type"] == "any":
                value["description"] += (
                    f" This parameter can be of any type of {'Java' if language == 'java' else 'JavaScript'} "
                    "object in string representation."
                )
            else:
                value["description"] += (
                    f" This is {'Java' if language == 'java' else 'JavaScript'} {value['type']} type parameter in "
                    "string representation."
                )
            list_types = ("ArrayList", "Array") if language == "java" else ("array",)
            if value["type"] in list_types:
                value["description"] += (
                    f" The list elements are of type {value['items']['type']}; they are not in string representation."
                )
                del value["items"]
            if language == "javascript" and value["type"] == "dict" and "properties" in value:
                value["description"] += (
                    " The dictionary entries have the following schema; they are not in string representation. "
                    + json.dumps(value["properties"])
                )
                del value["properties"]
            value["type"] = "string"
    return functions


def system_prompt(functions: list[dict]) -> str:
    return _PLAINTEXT_LAYOUT.format(
        persona=_PERSONA,
        task=_TASK,
        tool_call_format=_TOOL_CALL_FORMAT.format(output_format=_PYTHON_OUTPUT_FORMAT, param_types=""),
        multiturn_behavior=_MULTITURN_BEHAVIOR,
        available_tools=_AVAILABLE_TOOLS.format(format="json", functions=json.dumps(functions, indent=4)),
    )


def prompting_messages(question: list[list[dict]], functions: list[dict], category: str) -> list[dict]:
    messages = [dict(message) for message in question[0]]
    prompt = system_prompt(hinted_functions(functions, category))
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = prompt + "\n\n" + messages[0]["content"]
    else:
        messages.insert(0, {"role": "system", "content": prompt})
    return messages


def native_tools(functions: list[dict], category: str) -> list[dict]:
    """``convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OSSMODEL)`` on the hinted docs (the one
    conversion, ``scorer_lib.bfcl_handlers.function_docs``: upstream's, raising where it raises).

    For OSS FC models upstream passes the bare converted function objects; we wrap each one as
    ``{"type": "function", "function": ...}``, the shape OpenAI-compatible chat endpoints and chat templates take.
    Dots in names become underscores, as upstream does for this model style.
    """
    return convert_to_tool(hinted_functions(functions, category), wrap=True)


def python_literal(value: Any) -> str:
    """Python source for a JSON-like value (``repr`` is valid Python for str/int/float/bool/None/list/dict)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(str(value))
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def build_request(case: Case) -> Request:
    """Prompting: the BFCL system prompt and the question; native (FC handlers' ``_pre_query_processing_FC``): the
    question as it is, with the tools; a local FC handler's own tools block: the question as it is and the hinted
    docs (``functions``, what its ``_pre_query_processing_prompting`` hands to ``_format_prompt``)."""
    payload = case.payload
    return Request(
        messages=prompting_messages(payload["question"], payload["function"], case.category),
        tools=native_tools(payload["function"], case.category),
        native_messages=[dict(message) for message in payload["question"][0]],
        # for a row's handler that writes its own tools block (BFCL's FC handlers): the docs it is handed
        functions=hinted_functions(payload["function"], case.category),
    )
