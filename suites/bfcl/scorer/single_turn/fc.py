"""BFCL single-turn FC (native tool-calling) scoring, as bfcl-eval 2026.3.23 scores an FC model.

Upstream (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``bfcl_eval/``): an FC handler records the API's tool
calls as ``[{name: "<arguments JSON>"}]`` (``model_handler/api_inference/openai_completion.py``:
``_parse_query_response_FC``), or the message text when there are none; its ``decode_ast`` turns each entry into
``{name: json.loads(arguments)}`` with nothing else (no Python-call text in between); the evaluator
(``eval_checker/eval_runner.py``) treats any exception there as ``ast_decoder:decoder_failed`` (or "no call" for
relevance), checks ``is_function_calling_format_output``, then runs ``ast_checker`` with the model's
``underscore_to_dot`` flag, which FC models that cannot send dots in tool names carry (the ground-truth name's dots
become ``_`` before the name comparison; ``ast_checker.py::convert_func_name``). Java and JavaScript values must be
strings (``type_error:java`` / ``type_error:js`` otherwise) and then go through the literal converters, as in
prompting mode.

What this path reads:

- a natively answering model's ``Generation.tool_calls`` (``[{"name", "arguments"}]`` from the backend's parser):
  the same as an FC handler's record; with no call the record is the message text (a non-empty text does not
  decode, an empty one decodes to ``[]``); a reply whose calls could not be parsed (``parse_error``) does not decode.
- a replayed FC result file (a ``result`` that is a list): each entry as recorded, ``{name: "<arguments JSON>"}``.

Every FC model is scored with ``underscore_to_dot`` on: the tools this plugin sends name dotted functions with ``_``
(:func:`..prompt.native_tools`), as upstream's FC handlers do, and a replayed FC file does not say which handler made
it (the published FC files of v4, e.g. gpt-oss-120b's, come from handlers with the flag on).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Generation
from ..decoding import decode
from ..gold import render_calls
from ..decoders.common import DecodeError

#: The key an FC replay record's calls travel under in ``Generation.tool_calls`` (see :func:`replay_generation`).
RECORDED = "bfcl_fc_record"


def fc_record(generation: Generation) -> Any:
    """What an FC handler would have recorded for this reply (see the module docstring)."""
    calls = generation.tool_calls
    if calls is not None and len(calls) == 1 and set(calls[0]) == {RECORDED}:
        return calls[0][RECORDED]
    if generation.parse_error is not None or not calls:
        return generation.text or ""
    return [{str(call.get("name", "")): call.get("arguments") if isinstance(call.get("arguments"), str)
             else json.dumps(call.get("arguments", {}), ensure_ascii=False)} for call in calls]


def decode_fc(record: Any) -> list[dict]:
    """The FC handler's ``decode_ast``: ``[{name: json.loads(arguments)}]``; whatever upstream raises on (text,
    arguments that are not a JSON string, an entry that is not a dict) is a :class:`DecodeError`."""
    decoded = []
    try:
        for entry in record:
            name = list(entry.keys())[0]
            decoded.append({name: json.loads(entry[name])})
    except (AttributeError, TypeError, IndexError, ValueError, RecursionError) as error:
        raise DecodeError(f"{type(error).__name__}: {error}") from None
    return decoded


def is_fc(generation: Generation) -> bool:
    """The reply came from a natively answering model or an FC result file."""
    return generation.tool_calls is not None or generation.parse_error is not None


def replay_generation(result: Sequence[Any]) -> Generation:
    """An FC result file's ``result`` (a list) as the Generation the scorer reads: the record travels unchanged."""
    return Generation(text=json.dumps(result, ensure_ascii=False), finish_reason="stop",
                      tool_calls=[{RECORDED: list(result)}])


def gold_fc_calls(ground_truth: list[Mapping[str, Any]], functions: list[dict], language: str) -> list[dict]:
    """The reference calls as a natively answering model would send them: names with ``_`` for ``.``; the argument
    values the prompting decoder reads from the gold call text (Python values; for Java and JavaScript the strings
    the parser hands the literal converters, which is what FC mode requires of them)."""
    decoded = decode(render_calls(ground_truth, functions, language), language)
    return [{"name": name.replace(".", "_"), "arguments": arguments}
            for call in decoded for name, arguments in call.items()]
