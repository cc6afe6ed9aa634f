"""The prompts: upstream's two system prompts, the API descriptions, and the history turned into chat messages.

Verbatim from thunlp/ToLeaP @ b95071311ff9a888303f819282e4d0872ce4c3fa ``scripts/apibank_eval.py`` (``main``:
``api_call_prompt``, ``response_prompt``; the triple-quoted strings sit inside the function, so every line after
the first carries 4 spaces of indentation, and the text ends with 4 spaces) and from AlibabaResearch/DAMO-ConvAI @
483554eae102996f5ec1f4feab4e78ef29c2a394 ``api-bank/evaluator.py`` (the same texts without that indentation). Note
upstream's own "utterence", the trailing space after "parameters." and "output.", and the "…" (U+2026) of the response
prompt against the "..." of the API-call prompt. The tests pin the sha256 of each text.

Request layout (both evaluators, ``main``):

* one system message: the prompt followed by the API descriptions joined with ``"\\n"``. Dialogue samples, and API
  samples of level 1, describe every API called anywhere in the dialogue (``Sample.apis``, the whole file's API
  names); API samples of level 2 (``tool_search_enabled``) describe ToolSearcher only;
* then one message per history row: ``User`` → ``user``, ``AI`` → ``assistant``, ``API`` → ``system`` with
  ``"[{name}({k}='{v}', ...)] Response: {str(result['output'])}"`` (Python ``str`` of the JSON value, so dicts and
  lists in Python repr, ``None``, ``True``);
* ToLeaP: ``LLM.chat`` / the OpenAI chat API with these messages as they are, temperature 0, 512 new tokens.

QUIRK fixed here: upstream keeps the API names in a ``set`` and describes them in its iteration order, which depends on
the process's string-hash seed, so two runs of upstream can order the descriptions differently. The order is an
option: ``sorted`` (by name, the default) or ``dialogue`` (order of first call in the file).
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Case, Request

from .decoding import render_call
from .loading import API_CALL, settings
from .specs import description

TOLEAP_API_CALL_PROMPT = (
    '\n'
    "    Based on the given API description and the existing conversation history 1..t, please generate the API request that the AI should call in step t+1 and output it in the format of [ApiName(key1='value1', key2='value2', ...)], replace the ApiName with the actual API name, and replace the key and value with the actual parameters. \n"
    '    Your output should start with a square bracket "[" and end with a square bracket "]". Do not output any other explanation or prompt or the result of the API call in your output. \n'
    '    This year is 2023.\n'
    '    Input: \n'
    "    User: [User's utterence]\n"
    "    AI: [AI's utterence]\n"
    '\n'
    '    Expected output:\n'
    "    [ApiName(key1='value1', key2='value2', ...)]\n"
    '\n'
    '    API descriptions:\n'
    '    '
)
TOLEAP_RESPONSE_PROMPT = (
    '\n'
    '    Based on the given API description and the existing conversation history 1..t, please generate the next dialog that the AI should response after the API call t.\n'
    '    This year is 2023.\n'
    '    Input: \n'
    "    User: [User's utterence]\n"
    "    AI: [AI's utterence]\n"
    "    [ApiName(key1='value1', key2='value2', …)]\n"
    '\n'
    '    Expected output:\n'
    "    AI: [AI's utterence]\n"
    '\n'
    '    API descriptions:\n'
    '    '
)
UPSTREAM_API_CALL_PROMPT = (
    '\n'
    "Based on the given API description and the existing conversation history 1..t, please generate the API request that the AI should call in step t+1 and output it in the format of [ApiName(key1='value1', key2='value2', ...)], replace the ApiName with the actual API name, and replace the key and value with the actual parameters. \n"
    'Your output should start with a square bracket "[" and end with a square bracket "]". Do not output any other explanation or prompt or the result of the API call in your output. \n'
    'This year is 2023.\n'
    'Input: \n'
    "User: [User's utterence]\n"
    "AI: [AI's utterence]\n"
    '\n'
    'Expected output:\n'
    "[ApiName(key1='value1', key2='value2', ...)]\n"
    '\n'
    'API descriptions:\n'
)
UPSTREAM_RESPONSE_PROMPT = (
    '\n'
    'Based on the given API description and the existing conversation history 1..t, please generate the next dialog that the AI should response after the API call t.\n'
    'This year is 2023.\n'
    'Input: \n'
    "User: [User's utterence]\n"
    "AI: [AI's utterence]\n"
    "[ApiName(key1='value1', key2='value2', …)]\n"
    '\n'
    'Expected output:\n'
    "AI: [AI's utterence]\n"
    '\n'
    'API descriptions:\n'
)

PROMPTS = {
    "toleap": {"dialog": TOLEAP_RESPONSE_PROMPT, "api_call": TOLEAP_API_CALL_PROMPT},
    "upstream": {"dialog": UPSTREAM_RESPONSE_PROMPT, "api_call": UPSTREAM_API_CALL_PROMPT},
}
TOOL_SEARCHER = "ToolSearcher"
TOOL_SEARCH_LEVEL = "level-2-toolsearcher"


def prompt_sha256(variant: str, kind: str) -> str:
    return hashlib.sha256(PROMPTS[variant][kind].encode("utf-8")).hexdigest()


def described_apis(payload: Mapping[str, Any], options: Mapping[str, Any]) -> list[str]:
    """The API names whose descriptions the system message lists, in the order used (suite option
    ``description_order``)."""
    if payload["kind"] == API_CALL and payload["level"] == TOOL_SEARCH_LEVEL:
        return [TOOL_SEARCHER]
    names = list(payload["apis"])
    return sorted(names) if options["description_order"] == "sorted" else names


def system_prompt(payload: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    variant = options["prompt"]
    texts = [description(name, variant) for name in described_apis(payload, options)]
    # ToLeaP drops a name its tool manager does not know (Translate); upstream would raise on it, and every name in
    # the data is a simulator class, so the two agree except for Translate.
    return PROMPTS[variant][payload["kind"]] + "\n".join(t for t in texts if t)


def history_message(row: Mapping[str, Any]) -> dict[str, str]:
    role = row["role"]
    if role == "User":
        return {"role": "user", "content": row["text"]}
    if role == "AI":
        return {"role": "assistant", "content": row["text"]}
    return {"role": "system",
            "content": "{} Response: {}".format(render_call(row["api_name"], row["param_dict"]),
                                                str(row["result"]["output"]))}


def messages(payload: Mapping[str, Any], options: Mapping[str, Any]) -> list[dict[str, str]]:
    """The request's messages; ``options``: the suite options (``prompt``, ``description_order``)."""
    return [{"role": "system", "content": system_prompt(payload, options)}] + \
        [history_message(r) for r in payload["history"]]


def build_request(case: Case) -> Request:
    return Request(messages=messages(case.payload, settings(case)), tools=None)
