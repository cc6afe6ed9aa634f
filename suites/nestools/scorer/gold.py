"""Gold chain, depth and structure (computed exactly as upstream does), and the gold chain as model output."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Case

def gold_calls(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The gold chain with each call's ``api_id`` (looked up by tool name, as ``process_results_gen`` does)."""
    id_by_name = {api["api_name"]: api_id for api, api_id in zip(payload["api"], payload["api_ids"])}
    return [
        {"api_name": call["api_name"], "api_id": id_by_name[call["api_name"]],
         "parameters": call["parameters"], "responses": call["responses"]}
        for call in payload["call"]
    ]


def max_depth(calls: Sequence[Mapping[str, Any]]) -> int:
    """Case depth as ``process_results_gen`` computes it.

    QUIRK: producers are found by a *substring* test (``"API_call_1" in "API_call_10"``) and a call's own responses
    are already in the list when its parameters are checked; both are kept so the depth subsets match upstream.
    """
    depths = [1] * len(calls)
    seen: list[Sequence[Any]] = []
    for position, call in enumerate(calls):
        seen.append(call["responses"])
        producers = []
        for value in call["parameters"].values():
            for index, responses in enumerate(seen):
                if any(str(name) in str(value) for name in responses):
                    producers.append(index)
        if producers:
            depths[position] = max(depths[p] + 1 for p in producers)
    return max(depths)


#: ``result_follow`` of ``evaluation/structure.py``: the 18 nesting structures, as sets of call numbers (a call
#: with no producer) and (producer, consumer) edges; the producer number is a string upstream.
STRUCTURES: tuple[frozenset, ...] = tuple(
    frozenset(s)
    for s in (
        {1, ("2", 3), ("1", 2)},
        {1, 3, ("1", 2)},
        {1, ("1", 3), ("1", 2)},
        {1, ("1", 3), ("2", 3), ("1", 2)},
        {1, 2, 3},
        {1, 2, ("2", 3)},
        {1, 2, ("1", 3)},
        {1, 2, ("1", 3), ("2", 3)},
        {("3", 4), 1, 3, ("1", 4), ("1", 2)},
        {1, ("1", 2)},
        {1, 2},
        {("3", 4), 1, ("2", 3), ("1", 2)},
        {("3", 4), 1, 3, ("2", 4), ("1", 2)},
        {1, 2, ("1", 4), ("1", 3), ("2", 4), ("2", 3)},
        {1, 2, 4, ("1", 3), ("2", 3)},
        {1, 2, ("1", 3), ("2", 4)},
        {("3", 4), 1, 2, ("1", 3), ("2", 3)},
        {1},
    )
)
#: The structures the paper's Fig. 5 shows (chain, fan-out, chain + skip, fan-in).
FIGURE_STRUCTURES = (0, 2, 3, 7)
_STRUCTURE_PLACEHOLDER = re.compile(r"(API_call_([0-9]|[1-9][0-9]|100))\b")


def structure_key(calls: Sequence[Mapping[str, Any]]) -> int | None:
    """The index in :data:`STRUCTURES` of the case's nesting pattern (``get_structure``), None when none fits."""
    producers_by_number: dict[str, Sequence[Any]] = {}
    shape: list[Any] = []
    for number, call in enumerate(calls, start=1):
        producers_by_number[str(number)] = call["responses"]
        nested = False
        for value in call["parameters"].values():
            # Upstream scans re.escape(str(value)); escaping never touches "API_call_<digits>".
            for match in _STRUCTURE_PLACEHOLDER.findall(re.escape(str(value))):
                placeholder = match[0]
                for producer, responses in producers_by_number.items():
                    if placeholder in responses and (producer, number) not in shape:
                        shape.append((producer, number))
                        nested = True
                        break
        if not nested:
            shape.append(number)
    pattern = frozenset(shape)
    for key, known in enumerate(STRUCTURES):
        if pattern == known:
            return key
    return None


def gold_output(case: Case) -> str:
    """The gold chain as a model would write it: ``responses`` as a dict named after the tool's return values."""
    specs = {api["api_name"]: api for api in case.payload["api"]}
    rendered = []
    for call in gold_calls(case.payload):
        names = list(specs[call["api_name"]].get("responses", {}))
        responses = {
            (names[i] if i < len(names) else f"response_{i}"): placeholder
            for i, placeholder in enumerate(call["responses"])
        }
        rendered.append({"api_name": call["api_name"], "api_id": call["api_id"], "parameters": call["parameters"],
                         "responses": responses})
    return json.dumps(rendered, ensure_ascii=False)
