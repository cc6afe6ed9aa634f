"""Ground truth rendered as the text a prompting-mode model would write (the gold backend's answers); agent
cases answer with the reference transcript (``agent.py``) and, step by step, the gold plan (``gold_plan.py``)."""

from __future__ import annotations

import json
from typing import Any, Mapping

from pytest_toolbench.contract.suite import Case, Request
from .agent import gold_transcript
from .gold_plan import gold_reply as agent_gold_reply
from .loading import REPEAT_SUFFIX, is_agent


def render_value(value: Any, escape_spaces: bool = False) -> str:
    """A Python literal for ``value``. With ``escape_spaces`` every space inside a string is written ``\\x20``:
    the Normal multi-turn decoder deletes all whitespace characters before parsing (upstream quirk), and an escape
    is the only way a model can keep a space inside a value there."""
    if isinstance(value, str):
        text = repr(value)
        return text.replace(" ", "\\x20") if escape_spaces else text
    if isinstance(value, Mapping):
        inner = ", ".join(f"{render_value(k, escape_spaces)}: {render_value(v, escape_spaces)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v, escape_spaces) for v in value) + "]"
    return repr(value)


def render_call(name: str, arguments: Mapping[str, Any], escape_spaces: bool = False) -> str:
    rendered = ", ".join(f"{key}={render_value(value, escape_spaces)}" for key, value in arguments.items())
    return f"{name}({rendered})"


def render_calls(calls: Mapping[str, Any], escape_spaces: bool = False) -> str:
    """``{Name_1: {...}, Name_2: {...}}`` → ``[Name(...), Name(...)]`` (repeat suffixes dropped as the checker does)."""
    parts = []
    for key, arguments in calls.items():
        parts.append(
            render_call(REPEAT_SUFFIX.sub("", key), arguments if isinstance(arguments, Mapping) else {}, escape_spaces)
        )
    return "[" + ", ".join(parts) + "]"


def _joined(items: Any) -> str:
    if isinstance(items, (list, tuple)):
        return ", ".join(str(item) for item in items)
    return str(items)


def gold_text(category: str, ground_truth: Any) -> str:
    if category == "special_incomplete":
        sentences = [
            f"Missing necessary parameters ({_joined(missing)}) for the api ({api})" for api, missing in ground_truth.items()
        ]
        return "[" + ", ".join(f'"{s}"' for s in sentences) + "]"
    if category == "special_error_param":
        sentences = [
            f"There is incorrect value ({_joined(values)}) for the parameters ({parameter}) in the conversation history."
            for parameter, values in ground_truth.items()
        ]
        return "[" + ", ".join(f'"{s}"' for s in sentences) + "]"
    if category == "special_irrelevant":
        return f'["{ground_truth}"]'
    # A list ground truth holds alternatives; the first one is the reference.
    reference = ground_truth[0] if isinstance(ground_truth, list) and ground_truth else ground_truth
    if not isinstance(reference, Mapping):
        return "[]"
    return render_calls(reference, escape_spaces=category.startswith("normal_multi_turn"))


def gold_output(case: Case) -> str:
    if is_agent(case):
        return json.dumps(gold_transcript(case), ensure_ascii=False)
    return gold_text(case.category, case.payload["ground_truth"])


def gold_reply(case: Case, step: int, request: Request) -> str:
    if is_agent(case):
        return agent_gold_reply(case, step, request)
    return gold_output(case)
