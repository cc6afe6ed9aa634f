"""The verdict of a single-turn BFCL case: decode like ``default_decode_ast_prompting`` (prompting text) or the FC
handler's ``decode_ast`` (native replies, FC result files), then check like ``ast_checker`` or the relevance runner.

Follows ``bfcl_eval/eval_checker/eval_runner.py`` (``_evaluate_single_ast_entry``,
``_evaluate_single_relevance_entry``) of bfcl-eval 2026.3.23 (gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8).
The rules of the AST checker are :mod:`.single_turn.ast_checker`; multi-turn and agentic verdicts are
:func:`.multi_turn.conversation.score` and :func:`.agentic.conversation.score` (the package's ``score`` picks by
category).
"""

from __future__ import annotations

from typing import Any

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .categories import FORMAT_SENSITIVITY, RELEVANCE_CATEGORIES, language_of
from .decoders.common import DecodeError
from .decoding import decode, is_empty_output, is_function_calling_format
from .format_prompts import Config as FormatConfig
from .format_sensitivity import decode as decode_format_case
from .single_turn.ast_checker import CHECKER_CRASH, check_calls, show
from .handler_path import (decode_recorded, decode_single, handler_of, replayed_record, sends_bfcl_system_prompt,
                           underscore_to_dot)
from .single_turn.fc import decode_fc, fc_record, is_fc
from .single_turn.parameters import compare_parameters
from .tl import label_tl_failure


#: nesting kept in a verdict's ``decoded`` (a hostile reply may decode to thousands of levels; the checker has judged
#: it already, this is only what the record shows)
SHOWN_DEPTH = 100


def json_safe(value: Any, depth: int = 0) -> Any:
    if isinstance(value, (dict, list, tuple)) and depth >= SHOWN_DEPTH:
        return f"… [nested deeper than {SHOWN_DEPTH} levels]"
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else ("null" if k is None else show(k))): json_safe(v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item, depth + 1) for item in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value).bit_length() < 64 else show(value)
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    return show(value)


def score(case: Case, generation: Generation) -> Verdict:
    """Prompting text through the prompting decoder; a native reply or an FC result file through the FC path
    (:mod:`.single_turn.fc`: the handler's ``decode_ast``, ``underscore_to_dot`` on)."""
    handler = handler_of(generation)
    underscore = False
    if case.category == FORMAT_SENSITIVITY:
        return _score_format_sensitivity(case, generation, handler)
    if is_fc(generation):
        decoded, decode_error = _attempt(decode_fc, fc_record(generation))
        mode, underscore = "fc", True  # upstream's FC checker runs with underscore_to_dot on
    elif handler is not None:
        # the row's own handler: its recorded answer and decode_ast, its underscore_to_dot (.handler_path)
        language = "python" if case.category in RELEVANCE_CATEGORIES else language_of(case.category)
        replayed = replayed_record(generation)
        if replayed is not None:  # a replayed result file read with its row: the record as bfcl generate wrote it
            decoded, decode_error = _attempt(decode_recorded, handler, replayed[1], language)
        else:
            decoded, decode_error = _attempt(decode_single, handler, generation.text or "", language)
        mode = "prompting" if sends_bfcl_system_prompt(handler) else "fc"
        underscore = underscore_to_dot(handler)
    else:
        language = "python" if case.category in RELEVANCE_CATEGORIES else language_of(case.category)
        # what the handler recorded (QwenHandler: the text after </think>), else the text as written
        decoded, decode_error = _attempt(decode, generation.recorded(), language)
        mode = "prompting"
    if case.category in RELEVANCE_CATEGORIES:
        return _score_relevance(case, decoded, decode_error, mode)
    verdict = _score_ast(case, decoded, decode_error, mode, underscore)
    if not verdict.passed and len(case.payload["ground_truth"]) == 1 and tl_failures.enabled(case):
        label_tl_failure(case, verdict)
    return verdict


def _score_format_sensitivity(case: Case, generation: Generation, handler: str | None) -> Verdict:
    """``format_sensitivity_runner``: the reply decoded in its config's return format and tag (through the row's
    ``decode_ast`` when a row's handler wrote the prompt), checked by the AST checker with the original id as the
    category. Upstream runs the category for prompting models only; a native reply or an FC row's reply, like a
    non-text result in a result file, is a decoder failure (upstream's ``decode_ast`` strips a string)."""
    config = FormatConfig.parse(case.payload["config"])
    underscore = False
    if is_fc(generation) or (handler is not None and not sends_bfcl_system_prompt(handler)):
        decoded, decode_error = None, ("format sensitivity is a prompting category (bfcl generate skips it for FC "
                                       "models); a reply of tool calls or a non-text result does not decode")
        mode = "fc"
    elif handler is not None:
        decoded, decode_error = _attempt(decode_single, handler, generation.text or "", config.return_format,
                                         lambda text, _language: decode_format_case(case, text))
        mode, underscore = "prompting", underscore_to_dot(handler)
    else:
        decoded, decode_error = _attempt(decode_format_case, case, generation.recorded())
        mode = "prompting"
    verdict = _score_ast(case, decoded, decode_error, mode, underscore,
                         check_category=case.payload["original_id"], language="python")
    verdict.labels["config"] = case.payload["config"]
    verdict.explanation = f"[{case.payload['config']}]\n{verdict.explanation}"
    return verdict


def _attempt(decoder: Any, *arguments: Any) -> tuple[Any, str | None]:
    try:
        return decoder(*arguments), None
    except DecodeError as exc:
        return None, str(exc)


def _score_relevance(case: Case, decoded: Any, decode_error: str | None, mode: str) -> Verdict:
    has_call = decode_error is None and not is_empty_output(decoded)
    wants_call = case.category == "live_relevance"
    passed = has_call == wants_call
    if passed:
        error_type = None
        rule = "a call was produced, as required" if wants_call else "no function call, as required"
    elif wants_call:
        error_type = "relevance_error:decoder_failed"
        rule = f"expected at least one call; the output has none ({decode_error or 'empty call list'})"
    else:
        error_type = "irrelevance_error:decoder_success"
        rule = "expected no call, but the output decodes to function calls"
    outcome = "pass" if passed else ("wrong" if decoded is not None else FORMAT_ERROR)
    return Verdict(
        passed=passed,
        error_type=error_type,
        explanation=f"[{case.category}] decoded: {show(json_safe(decoded), 1000)}\n{rule}",
        decoded=json_safe(decoded),
        expected=None,
        counts={"correct": 1.0 if passed else 0.0},
        labels={"outcome": outcome, "mode": mode, "has_call": str(has_call).lower()},
        details={"decode_error": decode_error},
    )


def _score_ast(case: Case, decoded: Any, decode_error: str | None, mode: str, underscore: bool,
               check_category: str | None = None, language: str | None = None) -> Verdict:
    """``check_category``: what the checker dispatches on (the category; format sensitivity: the original id)."""
    payload = case.payload
    language = language or language_of(case.category)
    expected = payload["ground_truth"]
    if decode_error is not None:
        exc = decode_error
        return Verdict(
            passed=False,
            error_type="ast_decoder:decoder_failed",
            explanation=f"Invalid syntax. Failed to decode AST "
                        f"({'FC tool calls' if mode == 'fc' else language + ' call syntax'}). {exc}\n"
                        f"expected: {show(expected, 1000)}",
            decoded=None,
            expected=expected,
            counts={"correct": 0.0},
            labels={"outcome": FORMAT_ERROR, "mode": mode},
            details={"decode_error": str(exc)},
        )
    if not is_function_calling_format(decoded):
        return Verdict(
            passed=False,
            error_type="ast_decoder:decoder_wrong_output_format",
            explanation=f"Did not output in the specified format (decoded to {show(json_safe(decoded))}).\n"
                        f"expected: {show(expected, 1000)}",
            decoded=json_safe(decoded),
            expected=expected,
            counts={"correct": 0.0},
            labels={"outcome": FORMAT_ERROR, "mode": mode},
        )
    result = check_calls(payload["function"], decoded, expected, check_category or case.category,
                         underscore_to_dot=underscore)
    rule = "all calls match the ground truth" if result.valid else f"{result.error_type}: {' '.join(result.errors)}"
    return Verdict(
        passed=result.valid,
        error_type=None if result.valid else result.error_type,
        explanation=f"decoded: {show(json_safe(decoded), 1000)}\nexpected: {show(expected, 1000)}\n{rule}",
        decoded=json_safe(decoded),
        expected=expected,
        counts={"correct": 1.0 if result.valid else 0.0},
        labels={"outcome": "pass" if result.valid else ("checker_crash" if result.error_type == CHECKER_CRASH
                                                         else "wrong"), "mode": mode},
        # for the reports: each parameter given against the values accepted, judged alone by the same rule
        comparison=None if result.valid else json_safe(compare_parameters(payload["function"], decoded, expected,
                                                                           language, underscore_to_dot=mode == "fc")),
    )
