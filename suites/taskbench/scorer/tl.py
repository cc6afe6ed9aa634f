"""TL-Training failure categories for TaskBench (opted into with ``libraries: [tl_failures]``).

Only dailylifeapis has named parameters (``{"name", "value"}`` arguments checked against the tool's ``parameters``),
which is what TL-Training's categories describe; huggingface and multimedia arguments are positional resources
(file names, text, ``<node-j>``), for which "parameter hallucination / redundant / missing" has no meaning, so their
cases carry no TL label. A failed dailylifeapis case is classified with
:func:`pytest_toolbench.scorer_lib.tl_failures.classify_call_lists`: every task node is a call ``{name: task,
arguments: {argument name: value}}`` (a repeated name keeps its last value; arguments that are not ``{name, ...}``
dicts are left out), gold values are plain values (no alternatives). A format failure is ``unparseable``. When the
calls are all right and the case failed on its links, no category applies and none is given.
"""

from __future__ import annotations

from typing import Any

from pytest_toolbench.contract.suite import Case
from pytest_toolbench.scorer_lib import tl_failures

from .prompt import protocol_of
from .toleap import NODE_NAME_KEYS


def _calls(nodes: Any, name_keys: tuple[str, ...]) -> list[dict[str, Any]] | None:
    if not isinstance(nodes, list):
        return None
    calls = []
    for node in nodes:
        if not isinstance(node, dict):
            continue
        name = next((node[k] for k in name_keys if k in node), None)
        if not isinstance(name, str):
            continue
        arguments: dict[str, Any] = {}
        raw = node.get("arguments")
        for argument in raw if isinstance(raw, list) else ():
            if isinstance(argument, dict) and isinstance(argument.get("name"), str):
                arguments[argument["name"]] = argument.get("value")
        calls.append({"name": name, "arguments": arguments})
    return calls


def classify(case: Case, result: Any, unparseable: bool) -> tuple[str, float] | None:
    """``(category, reward)`` of a failed case, or None when no TL category applies (its suite did not opt in)."""
    if not tl_failures.enabled(case):
        return None
    payload = case.payload
    if payload["tools"]["dependency_type"] != "temporal":
        return None
    gold = _calls(payload["label"]["task_nodes"], ("task",))
    if unparseable or not isinstance(result, dict):
        outcome = tl_failures.TLOutcome(tl_failures.UNPARSEABLE, tl_failures.REWARDS[tl_failures.UNPARSEABLE])
    else:
        keys = NODE_NAME_KEYS if protocol_of(case) == "toleap" else ("task",)
        predicted = _calls(result.get("task_nodes"), keys)
        outcome = tl_failures.classify_call_lists(predicted, gold or [], payload["tools"]["parameters"],
                                                  acceptable_values=False)
    if outcome.category == tl_failures.CORRECT:
        return None
    return outcome.category, outcome.reward
