"""TL-Training failure categories for single-call samples (all easy samples; opted into by suite.yaml).

The classifier is the shared one (:func:`pytest_toolbench.scorer_lib.tl_failures.classify_call_lists`: best
pairing of predicted and gold calls, worst pair; a second predicted call is an extra wrong tool or hallucination).
Its inputs follow SealTools' own rules so that each label agrees with what the official counts saw:

* the predicted calls are the list elements the official scorer counts (dicts with an ``"api"`` key); other
  elements are ignored, as upstream ignores them. A parsed list with no such element is *unparseable*, like an
  output that does not parse;
* the tool is the ``api`` value (a non-string value is a name no tool has: a *tool hallucination*); the offered
  tools and their parameter names come from the prompt's ``api_list`` (plus the gold call's own API and
  parameters, see ``loading.signatures``);
* arguments are ``parameters`` (ToLeaP protocol: merged with ``arguments``, which ToLeaP also scores), and values
  are compared as ``str(value)`` on both sides, SealTools' equality;
* a failed sample that the classifier finds correct (possible only through ToLeaP's double count of a call that
  has both ``parameters`` and ``arguments``) is labelled *content mismatch*, so a failed item never says "correct".
"""

from __future__ import annotations

from typing import Any, Mapping

from pytest_toolbench.scorer_lib.tl_failures import (CONTENT_MISMATCH, CORRECT, REWARDS, UNPARSEABLE,
                                                     classify_call_lists)
from pytest_toolbench.contract.suite import Case
from .loading import PROTOCOL_TOLEAP


def _as_text(values: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for name, value in values.items():
        try:
            out[name] = str(value)
        except (RecursionError, ValueError):
            out[name] = "<unprintable>"
    return out


def _call(element: Mapping[str, Any], protocol: str) -> dict[str, Any]:
    api = element["api"]
    name = api if isinstance(api, str) else f"<non-string api {type(api).__name__}>"
    arguments: dict[str, str] = {}
    keys = ("parameters", "arguments") if protocol == PROTOCOL_TOLEAP else ("parameters",)
    for key in keys:
        if isinstance(element.get(key), dict):
            arguments.update(_as_text(element[key]))
    return {"name": name, "arguments": arguments}


def tl_category(case: Case, prediction: list[Any] | None, protocol: str) -> tuple[str, float]:
    """Category and reward of a failed single-call sample; ``prediction`` None when it did not parse."""
    if prediction is None:
        return UNPARSEABLE, REWARDS[UNPARSEABLE]
    calls = [_call(e, protocol) for e in prediction if isinstance(e, dict) and "api" in e]
    if not calls:
        return UNPARSEABLE, REWARDS[UNPARSEABLE]
    gold = [{"name": call["api"], "arguments": _as_text(call["parameters"])} for call in case.payload["gold"]]
    signatures = {name: tuple(params) for name, params in case.payload["signatures"].items()}
    outcome = classify_call_lists(calls, gold, signatures)
    if outcome.category == CORRECT:
        return CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH]
    return outcome.category, outcome.reward
