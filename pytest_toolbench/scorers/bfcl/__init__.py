"""BFCL v4 single-turn (13 categories, 3,641 entries): faithful prompting-mode scorer.

Reference: bfcl-eval 2026.3.23 = gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8
(``berkeley-function-call-leaderboard/bfcl_eval``). Spec: shared/specs/bfcl.md.

- :func:`load_cases`: one case per entry; prompts and ground truth are paired by line index, as upstream does.
- :func:`build_request`: prompting-mode messages (system prompt + language hint), native tools for FC mode.
- :func:`score`: decode like ``default_decode_ast_prompting`` and check like ``ast_checker`` / the relevance runner.
  The generic OSS prompting handler does not strip ``<think>`` blocks (``base_oss_handler.py`` returns
  ``choices[0].text`` untouched and decodes it directly), so neither do we: reasoning text makes the output fail to
  decode, exactly as in an official run of a model without a dedicated handler.
- :func:`gold_output`, :func:`aggregate`, :func:`replay_outputs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data import load_jsonl
from ...tl_failures import CONTENT_MISMATCH, CORRECT, REWARDS, classify_calls, tl_metrics
from ...suite import FORMAT_ERROR, Case, CaseResult, Generation, Metric, Request, Verdict
from . import aggregate as _aggregate
from .checker import CHECKER_CRASH, check_calls, language_of, show
from .decode import decode_python, is_empty_output, is_function_calling_format, strip_and_wrap
from .gold import render_calls
from .java_syntax import parse_java_calls
from .js_syntax import parse_js_calls
from .prompt import native_tools, prompting_messages, render_tool_calls
from .syntax_common import DecodeError

SUITE = "bfcl"
CATEGORIES = _aggregate.CATEGORIES
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
DEFAULT_MAX_TOKENS = 4096  # upstream: min(4096, context - prompt - 2)
REFUSAL_TEXT = "None of the provided functions can be used to answer this question."

_MESSAGE = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {"role": {"type": "string"}, "content": {"type": "string"}},
}
PROMPT_SCHEMA = {
    "type": "object",
    "required": ["id", "question", "function"],
    "properties": {
        "id": {"type": "string"},
        "question": {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1, "items": _MESSAGE}},
        "function": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "description", "parameters"],
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "parameters": {
                        "type": "object",
                        "required": ["properties"],
                        "properties": {"properties": {"type": "object"}, "required": {"type": "array"}},
                    },
                },
            },
        },
    },
}
ANSWER_SCHEMA = {
    "type": "object",
    "required": ["id", "ground_truth"],
    "properties": {
        "id": {"type": "string"},
        "ground_truth": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": {"type": "object", "additionalProperties": {"type": "array"}},
            },
        },
    },
}


def _selected_categories(definition: Mapping[str, Any]) -> list[str]:
    listed = definition.get("categories") if definition else None
    if not listed:
        return list(CATEGORIES)
    names = [item["name"] if isinstance(item, Mapping) else str(item) for item in listed]
    return [name for name in names if name in CATEGORIES]


def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    data_dir = Path(data_dir)
    cases: list[Case] = []
    for category in _selected_categories(definition):
        prompt_file = data_dir / f"BFCL_v4_{category}.json"
        if not prompt_file.is_file():
            continue
        prompts = load_jsonl(prompt_file, PROMPT_SCHEMA)
        answers: list[dict | None]
        if category in RELEVANCE_CATEGORIES:
            answers = [None] * len(prompts)
        else:
            answer_file = data_dir / "possible_answer" / prompt_file.name
            answers = load_jsonl(answer_file, ANSWER_SCHEMA)
            if len(answers) != len(prompts):
                from ...errors import DataError

                raise DataError(answer_file, f"{len(answers)} answers for {len(prompts)} prompts")
        live = "live" if category.startswith("live_") else "non_live"
        kind = "relevance" if category in RELEVANCE_CATEGORIES else "ast"
        for index, (prompt, answer) in enumerate(zip(prompts, answers)):
            # Paired by line index (some GT ids differ from the prompt ids upstream).
            cases.append(Case(
                suite=SUITE,
                case_id=prompt["id"],
                category=category,
                payload={
                    "id": prompt["id"],
                    "index": index,
                    "question": prompt["question"],
                    "function": prompt["function"],
                    "ground_truth": answer["ground_truth"] if answer is not None else None,
                },
                keywords=(live, kind, language_of(category)),
            ))
    return cases


def build_request(case: Case) -> Request:
    payload = case.payload
    return Request(
        messages=prompting_messages(payload["question"], payload["function"], case.category),
        tools=native_tools(payload["function"], case.category),
        max_tokens=DEFAULT_MAX_TOKENS,
    )


def gold_output(case: Case) -> str:
    payload = case.payload
    if case.category in ("irrelevance", "live_irrelevance"):
        return REFUSAL_TEXT
    if case.category == "live_relevance":
        # Arguments are not checked for relevance: a call to the first offered function is enough.
        return f"[{payload['function'][0]['name']}()]"
    return render_calls(payload["ground_truth"], payload["function"], language_of(case.category))


def decode(text: str, language: str) -> Any:
    """Decode model text in the category's return format; raises DecodeError (never anything else)."""
    try:
        if language == "python":
            return decode_python(text)
        source = strip_and_wrap(text)[1:-1]
        if language == "java":
            return parse_java_calls(source)
        return parse_js_calls(source)
    except DecodeError:
        raise
    except Exception as exc:  # noqa: BLE001 - a decoder bug must not escape as an exception
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else ("null" if k is None else show(k))): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value).bit_length() < 64 else show(value)
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    return show(value)


def _output_text(case: Case, generation: Generation) -> tuple[str, str]:
    if generation.tool_calls:
        return render_tool_calls(generation.tool_calls, case.payload["function"]), "native"
    return generation.text or "", "prompting"


def score(case: Case, generation: Generation) -> Verdict:
    text, mode = _output_text(case, generation)
    if case.category in RELEVANCE_CATEGORIES:
        return _score_relevance(case, text, mode)
    verdict = _score_ast(case, text, mode)
    if not verdict.passed and len(case.payload["ground_truth"]) == 1:
        _label_tl_failure(case, verdict)
    return verdict


#: Categories whose ground truth is exactly one call: the ones TL-Training's single-call taxonomy applies to.
SINGLE_CALL_CATEGORIES = frozenset({"simple_python", "simple_java", "simple_javascript", "multiple", "live_simple",
                                    "live_multiple"})


def _label_tl_failure(case: Case, verdict: Verdict) -> None:
    """TL-Training's failure category and reward beside BFCL's own error type (single-call cases only).

    An undecodable or wrongly shaped output is ``unparseable``; BFCL's ground-truth lists of acceptable values (with
    ``""`` for "may be omitted") are what ``classify_calls`` reads natively.
    """
    decoded = verdict.decoded if isinstance(verdict.decoded, list) else None
    predicted = None
    if decoded is not None and all(isinstance(c, dict) and len(c) == 1 for c in decoded):
        predicted = [{"name": name, "arguments": args if isinstance(args, dict) else {}}
                     for call in decoded for name, args in call.items()]
    (name, arguments), = case.payload["ground_truth"][0].items()
    category, reward = classify_calls(predicted, [{"name": name, "arguments": arguments}],
                                      case.payload["function"])
    if category == CORRECT:
        # BFCL failed the case on a rule TL's call comparison cannot see (e.g. a Java literal the official converter
        # mangles): the failure is in the content, as NesTools, ACEBench and RoTBench label it too.
        category, reward = CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH]
    verdict.labels["tl_category"] = category
    verdict.counts["tl_reward"] = reward


def _score_relevance(case: Case, text: str, mode: str) -> Verdict:
    try:
        decoded = decode(text, "python")
        has_call = not is_empty_output(decoded)
        decode_error = None
    except DecodeError as exc:
        decoded, has_call, decode_error = None, False, str(exc)
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


def _score_ast(case: Case, text: str, mode: str) -> Verdict:
    payload = case.payload
    language = language_of(case.category)
    expected = payload["ground_truth"]
    try:
        decoded = decode(text, language)
    except DecodeError as exc:
        return Verdict(
            passed=False,
            error_type="ast_decoder:decoder_failed",
            explanation=f"Invalid syntax. Failed to decode AST ({language} call syntax). {exc}\n"
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
    result = check_calls(payload["function"], decoded, expected, case.category)
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
    )


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    """BFCL's official figures, then TL-Training's failure categories and mean reward (single-call cases)."""
    single_call = [r for r in results if r.category in SINGLE_CALL_CATEGORIES]
    return _aggregate.aggregate(results) + tl_metrics(single_call)


def replay_outputs(path: Path) -> dict[str, str]:
    """Read ``bfcl generate`` result files (v4 ``BFCL_v4_<category>_result.json`` and v3
    ``BFCL_v3_<category>_result.json``, mapped to v4 ids): a single file or any folder tree holding them.

    Tolerant: a bad line is a problem naming file and line and the rest still counts (see :mod:`.replay`, which
    also documents how v3 categories and ids map to v4 and how list-form FC results become call text). Returns a
    :class:`~pytest_toolbench.replay_files.ReplayOutputs` (a dict that also carries the problems found).
    """
    from .replay import read_results

    return read_results(Path(path), CATEGORIES)
