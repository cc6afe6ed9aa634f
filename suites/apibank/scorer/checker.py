"""Verdicts: the dialogue score (ToLeaP Table 9) and the offline API-call check, and the gold answers.

Dialogue samples (``Evaluator.evaluate`` for an ``AI`` target, and the loop of ToLeaP's ``scripts/apibank_eval.py``
/ DAMO-ConvAI's ``api-bank/evaluator.py``): an empty output scores 0 (``if model_output: ... else: score = 0``);
otherwise the score is ``round(ROUGE-L F(output, reference), 4)`` with rouge 1.0.1 (:mod:`.rouge_l`). The output is
scored as generated (no strip, no ``<think>`` removal: ToLeaP does neither); only special tokens that the backend
left at the very end (an end-of-turn token ToLeaP's vLLM decoding would have skipped) are removed.

An item passes when its score is at least ``dialog_pass_threshold`` (0.2 by default): upstream's own line between
good and bad replies, the ``if score < 0.2:`` of both scripts, which logs the sample as "Low score". The published
figure is the mean score, not this pass rate (see :mod:`.aggregation`).

QUIRK: an output with no sentence for rouge (only dots, e.g. ``"..."``) makes rouge 1.0.1 raise "Hypothesis is
empty." and the upstream script stops; here it scores 0 with ``error_type="rouge_error"``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.tl_failures import CORRECT, REWARDS
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict

from .api_check import NO_API_CALL, judge
from .decoding import decode_call, render_gold_call
from .loading import API_CALL, settings
from .prompt import described_apis
from pytest_toolbench.scorer_lib.rouge import DEEP_WALK, RougeError, rouge_l
from .tl import tl_category

# End-of-turn / padding tokens a backend that keeps special tokens leaves at the end of the raw text.
_TRAILING_SPECIAL = re.compile(r"(?:<\|[A-Za-z0-9_]+\|>|</s>|<eos>|<end_of_turn>)(?:\s*(?:<\|[A-Za-z0-9_]+\|>|</s>|"
                               r"<eos>|<end_of_turn>))*\s*$")

EMPTY_OUTPUT = "empty_output"
LOW_SCORE = "low_rouge_l"
ROUGE_ERROR = "rouge_error"


def strip_trailing_special(text: str) -> str:
    return _TRAILING_SPECIAL.sub("", text)


def gold_output(case: Case) -> str:
    target = case.payload["target"]
    if case.payload["kind"] == API_CALL:
        return render_gold_call(target["api_name"], target["param_dict"])
    return target["text"]


def dialog_score(output: str, reference: str) -> tuple[float, str | None, dict[str, Any]]:
    """(score, error_type or None, details) of one dialogue sample, as upstream scores it."""
    if not output:
        return 0.0, EMPTY_OUTPUT, {}
    try:
        found = rouge_l(output, reference)
    except RougeError as exc:
        return 0.0, ROUGE_ERROR, {"rouge_error": str(exc)}
    details: dict[str, Any] = {"rouge_l_p": found.p, "rouge_l_r": found.r, "rouge_l_f_unrounded": found.f}
    if found.longest_walk > DEEP_WALK:
        details["upstream_recursion_risk"] = (f"an LCS walk of {found.longest_walk} steps: rouge 1.0.1's recursive "
                                              "reconstruction would likely raise RecursionError upstream")
    return round(found.f, 4), None, details


def _score_dialog(case: Case, generation: Generation) -> Verdict:
    payload = case.payload
    raw = generation.text if isinstance(generation.text, str) else ""
    output = strip_trailing_special(raw)
    reference = payload["target"]["text"]
    score, error, details = dialog_score(output, reference)
    threshold = float(settings(case)["dialog_pass_threshold"])
    passed = error is None and score >= threshold
    if not passed and error is None:
        error = LOW_SCORE
    if error == EMPTY_OUTPUT:
        explanation = "empty output: score 0 (upstream: `if model_output: ... else: score = 0`)"
    elif error == ROUGE_ERROR:
        explanation = (f"rouge 1.0.1 raises {details['rouge_error']!r} on this output (no sentence: only dots or "
                       "nothing); the upstream script would stop here; scored 0")
    else:
        explanation = f"ROUGE-L F = {score} ({'>=' if score >= threshold else '<'} pass threshold {threshold})"
    explanation += f"\nexpected: {reference!r}\ngot: {output[:2000]!r}"
    details.update({"truncated": generation.truncated, "special_tokens_stripped": output != raw})
    return Verdict(passed=passed, error_type=None if passed else error, explanation=explanation,
                   decoded=output, expected=reference,
                   counts={"rouge_l": score, "level_files": float(payload.get("level_files", 0))},
                   labels={"kind": payload["kind"]}, details=details)


def _offered_tools(case: Case) -> list[str]:
    """Tools the model could know of: the described ones, plus (level 2) those ToolSearcher returned earlier."""
    payload = case.payload
    names = list(described_apis(payload, settings(case)))
    for row in payload["history"]:
        if row["role"] == "API" and row["api_name"] == "ToolSearcher":
            output = row["result"].get("output")
            found = output if isinstance(output, list) else [output]
            for item in found:
                if isinstance(item, Mapping) and isinstance(item.get("name"), str) and item["name"] not in names:
                    names.append(item["name"])
    return names


def _score_api_call(case: Case, generation: Generation) -> Verdict:
    payload = case.payload
    target = payload["target"]
    text = generation.text if isinstance(generation.text, str) else ""
    call = decode_call(text)
    result = judge(call, target)
    error = None if result.correct else (FORMAT_ERROR if result.error_type == NO_API_CALL
                                         else result.error_type)
    expected = {"api_name": target["api_name"], "param_dict": target["param_dict"], "request": target["result"]["input"]}
    lines = []
    if call is None:
        lines.append("No API call found: no [ApiName(...)] on one line of the output (upstream's "
                     r"\[(\w+)\((.*)\)\] search)")
    else:
        lines.append(f"call: {call.text[:500]}")
        lines.append(f"parsed: {call.name} {call.params}")
    if result.correct:
        lines.append(f"correct ({result.rule}); the simulator's output and exception are assumed to equal the gold "
                     "row's" if result.rule == "check" else f"correct ({result.rule})")
    else:
        lines.append(f"wrong: {result.message}")
        if result.request is not None:
            lines.append(f"request: {result.request!r}")
    lines.append(f"expected: {target['api_name']} {target['param_dict']} (gold request {target['result']['input']!r})")
    counts: dict[str, float] = {"api_correct": 1.0 if result.correct else 0.0}
    labels = {"kind": payload["kind"]}
    if result.rule:
        labels["api_rule"] = result.rule
    if tl_failures.enabled(case):
        if result.correct:
            counts["tl_reward"] = REWARDS[CORRECT]
        else:
            labels["tl_category"], counts["tl_reward"] = tl_category(call, target, _offered_tools(case))
    decoded = None if call is None else {"api_name": call.name, "params": call.params}
    return Verdict(passed=result.correct, error_type=error, explanation="\n".join(lines), decoded=decoded,
                   expected=_json_safe(expected), counts=counts, labels=labels,
                   details={"request": _json_safe(result.request), "rule": result.rule,
                            "upstream_message": result.message, "truncated": generation.truncated})


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return repr(value)


def score(case: Case, generation: Generation) -> Verdict:
    if case.payload["kind"] == API_CALL:
        return _score_api_call(case, generation)
    return _score_dialog(case, generation)
