"""The Python-call decoders of the benchmarks that share Gorilla's ``resolve_ast_by_type``, as
:class:`~pytest_toolbench.parsing.dialect.Dialect` presets of the one decoder
(:class:`~pytest_toolbench.parsing.python_calls.PythonCallDecoder`), each with its text preparation:

* :data:`BFCL_PROMPTING`: BFCL's ``default_decode_ast_prompting`` for python categories (bfcl-eval 2026.3.23);
* :data:`ACEBENCH_NORMAL`: ACEBench Normal/Special ``decode_ast`` (the text is prepared by the caller: first bracket
  span or whitespace removed, see ``suites/acebench/scorer/decoding.py``);
* :data:`ACEBENCH_AGENT`: the ACEBench agent and execution roles' ``decode_function_list`` (chenchen0103/ACEBench @
  56dd66cf).

A scorer library: the suites' scorers import their preset from here, with the decoder (and set their own ``error``
with :func:`dataclasses.replace`).
"""

from __future__ import annotations

import ast
from typing import Any

from pytest_toolbench.parsing.dialect import Dialect, Messages
from pytest_toolbench.parsing.python_calls import PythonCallDecoder, strip_and_wrap

__all__ = ["ACEBENCH_AGENT", "ACEBENCH_NORMAL", "BFCL_EVALUATE_FRAMES", "BFCL_PROMPTING", "PythonCallDecoder",
           "prepare_acebench_agent", "prepare_acebench_agent_message", "prepare_bfcl"]


def prepare_bfcl(text: Any) -> str:
    """BFCL: :func:`~pytest_toolbench.parsing.python_calls.strip_and_wrap`, then ``.strip().strip("'")``."""
    return strip_and_wrap(text).strip().strip("'")


def prepare_acebench_agent(text: str) -> str:
    """ACEBench's agent ``decode_function_list``: one leading space is dropped, the missing brackets are added, then
    ``strip("[]'")`` removes *all* leading and trailing brackets and quotes. Quirk: a message with a trailing space or
    newline after its ``]`` keeps that bracket and fails (``"[f()] "`` becomes ``"f()] "``)."""
    candidate = text[1:] if text[0] == " " else text
    if not candidate.startswith("["):
        candidate = "[" + candidate
    if not candidate.endswith("]"):
        candidate = candidate + "]"
    return candidate.strip("[]'")


def prepare_acebench_agent_message(text: Any) -> str | None:
    """The agent roles' preparation, None (``no_text``) for an empty or non-string message."""
    if not isinstance(text, str) or not text:
        return None
    return prepare_acebench_agent(text)


#: ``bfcl evaluate`` (bfcl-eval 2026.3.23, Python 3.11, recursion limit 1,000): ``resolve_ast_by_type`` of a top-level
#: argument is the 20th Python frame (console script, typer/click, ``evaluation_main`` ... ``ast_parse``,
#: ``resolve_ast_call``), and C-level calls on that stack count too: 22 in recursion-limit units. Calibrated with
#: ``pytest_toolbench.parsing.python_calls._THREAD_BASE_FRAMES`` so that 269 texts around the limit (operator
#: chains, subscripts, at 20 nestings) fail
#: exactly where a real ``bfcl evaluate`` run reported ``ast_decoder:decoder_failed``.
BFCL_EVALUATE_FRAMES = 22

BFCL_PROMPTING = Dialect(name="bfcl_prompting", prepare=prepare_bfcl, upstream_frames=BFCL_EVALUATE_FRAMES)

ACEBENCH_NORMAL = Dialect(
    name="acebench_normal",
    prepare=None,
    bare_call=False,
    call_without_keywords="empty_call",
    wrap_render_errors=False,
    hash_key_before_value=True,
    wrap_arithmetic_failures=True,
    fstrings=False,
    sets_in_expressions=False,
    messages=Messages(
        no_text="Invalid syntax. Failed to decode AST. compile() arg 1 must be a string, bytes or AST object",
        parse_error="Invalid syntax. Failed to decode AST. {exc}",
        not_a_list="'{type}' object has no attribute 'elts'",
        not_a_call="element is not a call",
        too_deep="output nested too deeply",
        unary_bad_operand="bad operand for unary -: {type}",
        dict_unpacking="Unsupported AST type: dict unpacking",
        unsupported="Unsupported AST type: {type_repr}",
        expression_dict_unpacking="dict unpacking in an expression",
        expression_unsupported="unsupported expression {type}",
        expression_unhashable_key=None,
    ),
)

ACEBENCH_AGENT = Dialect(
    name="acebench_agent",
    prepare=prepare_acebench_agent_message,
    containers=(ast.Tuple, ast.List),
    other_expression_is_empty=True,
    wrap_render_errors=False,
    hash_key_before_value=True,
    wrap_arithmetic_failures=True,
    fstrings=False,
    sets_in_expressions=False,
    arguments_in_comprehension=True,
    messages=Messages(
        no_text="empty message",
        parse_error="invalid syntax: {exc}",
        not_a_call="Element is not a function call",
        too_deep="message nested too deeply",
        unary_non_constant="unary operator on an unsupported operand",
        unary_bad_operand="unary operator on an unsupported operand",
        dict_unpacking="dict unpacking",
        unsupported="Unsupported AST type: {type_repr}",
        expression_dict_unpacking="dict unpacking in an expression",
        expression_unsupported="unsupported expression {type}",
        expression_unhashable_key=None,
    ),
)
