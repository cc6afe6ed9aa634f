"""ACEBench (Normal, Special and Agent; English and Chinese) as a pytest-toolbench benchmark.

Upstream: chenchen0103/ACEBench @ 56dd66cf6439b0d9655ee1b353e4cd745c6f664e (spec: shared/specs/acebench.md).
Case ids are ``<lang>-<upstream id>`` (e.g. ``en-normal_atom_bool_3``; Normal multi-turn items are single turns,
``en-normal_multi_turn_user_adjust_0_1``). Agent cases run live through ``conversation`` (``loop.py``: the sandbox
in ``sandbox/``, the model's calls executed and fed back, the simulated user's turns asked of the same backend) and
are scored from the run transcript (final sandbox state + executed calls), which replayed ACEBench results also
provide. agent_multi_turn cases carry ``needs_user_model``: upstream's user is gpt-4o, so a run that lets the engine's
own model play the user is not comparable with published agent_multi_turn numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...suite import FORMAT_ERROR, Case, CaseResult, Generation, Metric, Request, Verdict
from ...tl_failures import CORRECT, REWARDS, tl_metrics
from .aggregation import aggregate as _aggregate
from .checker import WRONG_OUTPUT_FORMAT, check_normal_output, check_special_output
from .loading import AGENT_CATEGORIES, NEEDS_USER_MODEL, load_all
from .prompts import single_turn_messages
from .replay import replay_outputs as _replay_outputs
from .rendering import gold_text
from .tl import single_call_alternatives, tl_category

__all__ = [
    "load_cases",
    "build_request",
    "gold_output",
    "score",
    "aggregate",
    "replay_outputs",
    "conversation",
    "gold_reply",
    "is_interactive",
    "NEEDS_USER_MODEL",
]

#: Upstream local inference: greedy, max_tokens 1024 (``model_infer.LLMInfer``).
MAX_TOKENS = 1024


def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    return load_all(Path(data_dir), definition)


def _agent_module():
    # Imported on first use so the Normal/Special scorer does not load the sandbox.
    from . import agent

    return agent


def _is_agent(case: Case) -> bool:
    return case.category in AGENT_CATEGORIES


def build_request(case: Case) -> Request:
    if _is_agent(case):
        return _agent_module().first_request(case)
    messages = single_turn_messages(case.payload["language"], case.category, case.payload)
    return Request(messages=messages, tools=None, max_tokens=MAX_TOKENS)


def _loop_module():
    from . import loop

    return loop


def is_interactive(case: Case) -> bool:
    """Only agent cases are conversations; Normal and Special cases are one request each."""
    return _is_agent(case)


def conversation(case: Case):
    return _loop_module().conversation(case)


def gold_reply(case: Case, step: int, request: Request) -> str:
    if _is_agent(case):
        return _loop_module().gold_reply(case, step, request)
    return gold_output(case)


def gold_output(case: Case) -> str:
    if _is_agent(case):
        return json.dumps(_agent_module().gold_transcript(case), ensure_ascii=False)
    return gold_text(case.category, case.payload["ground_truth"])


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, (str, int, float, bool)) or k is None else k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    return repr(value)


def score(case: Case, generation: Generation) -> Verdict:
    if _is_agent(case):
        return _agent_module().score_transcript(case, generation.text)
    text = generation.text if isinstance(generation.text, str) else ""
    ground_truth = case.payload["ground_truth"]
    if case.category.startswith("special"):
        result = check_special_output(text, case.category, ground_truth)
        return Verdict(
            passed=result.valid,
            error_type=None if result.valid else result.error_type,
            explanation="phrase check passed" if result.valid else f"{result.error_type}: {result.error}",
            decoded=text,
            expected=_json_safe(ground_truth),
            counts={"correct": 1.0 if result.valid else 0.0},
        )
    multi_turn = case.category.startswith("normal_multi_turn")
    verdict = check_normal_output(text, case.payload["function"], ground_truth, multi_turn)
    error_type = None
    if not verdict.valid:
        error_type = FORMAT_ERROR if verdict.error_type == WRONG_OUTPUT_FORMAT else verdict.error_type
    how = "whitespace removed, whole text decoded" if multi_turn else "first balanced [...] decoded"
    explanation = (
        f"valid ({how})"
        if verdict.valid
        else f"{verdict.error_type} ({how}): {verdict.error}\ndecoded: {verdict.decoded!r}\nexpected: {ground_truth!r}"
    )
    counts = {"correct": 1.0 if verdict.valid else 0.0}
    labels = {}
    alternatives = single_call_alternatives(ground_truth)
    if alternatives is not None:
        # TL-Training's categories on single-call cases (tl.py); passed ones carry the +1 reward so that the mean
        # reward is taken over exactly the cases in scope.
        if verdict.valid:
            counts["tl_reward"] = REWARDS[CORRECT]
        else:
            decoded = None if verdict.error_type == WRONG_OUTPUT_FORMAT else verdict.decoded
            labels["tl_category"], counts["tl_reward"] = tl_category(case.payload["function"], decoded, alternatives)
    return Verdict(
        passed=verdict.valid,
        error_type=error_type,
        explanation=explanation,
        decoded=_json_safe(verdict.decoded),
        expected=_json_safe(ground_truth),
        counts=counts,
        labels=labels,
        details={"official_error_type": verdict.error_type} if not verdict.valid else {},
    )


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    # ACEBench's own table, then TL-Training's categories and mean reward over the single-call Normal cases.
    return _aggregate(results) + tl_metrics([r for r in results if "tl_reward" in r.counts])


def replay_outputs(path: Path) -> dict[str, str]:
    return _replay_outputs(Path(path))
