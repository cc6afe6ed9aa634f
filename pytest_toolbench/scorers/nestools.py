"""NesTools (nested tool calling) as a pytest-toolbench suite.

Faithful re-implementation of the official NesTools evaluation, hhan1018/NesTools at
``fb617f396d61ead9f857a48f9ea7cf12fa522450`` (files as they stand at that commit: ``evaluation/eval.py``, last
changed in 507f8c8; ``evaluation/utils.py`` ``process_results_gen`` / ``check_score`` / ``normalize_date`` /
``check_string`` and ``evaluation/structure.py``, last changed in 72c0c3d; ``inference/inference.py`` and
``inference/build_test_prompt/*``).

One case = one ``test_id``. The model writes the whole chain of calls as one JSON/Python list; the scorer pairs
predicted and gold calls by ``api_id`` and accumulates the official per-case counts (Selection, Order, Parameter with
ROUGE-L partial credit, Nested-Param), which ``aggregate`` turns into micro P/R/F1 over the run. A case passes when
the official ``tree_acc`` is 1 (every family exact).

The upstream quirks reproduced on purpose are marked ``QUIRK`` where they are implemented.
"""

from __future__ import annotations

import ast
import hashlib
import heapq
import json
import math
import random
import re
from collections import Counter
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..data import load_jsonl
from ..errors import DataError
from ..replay_files import ReplayOutputs, json_lines, leading_id, plural
from ..suite import FORMAT_ERROR, Case, CaseResult, Generation, Metric, Request, Verdict
from ..tl_failures import (CONTENT_MISMATCH, CORRECT, REWARDS, UNPARSEABLE, WRONG_TOOL, classify_call_lists,
                           tl_metrics, tool_signatures)

SUITE = "nestools"
UPSTREAM_REPO = "hhan1018/NesTools"
UPSTREAM_COMMIT = "fb617f396d61ead9f857a48f9ea7cf12fa522450"

#: ``prompt_source`` values: the official pre-built prompt file, or the offline rebuild (a different variant).
PROMPT_SOURCE_OFFICIAL = "official"
PROMPT_SOURCE_REBUILT = "rebuilt"
OFFICIAL_PROMPT_FILE = "test_prompt.jsonl"

#: Generation settings of ``inference/inference.py``: one user message, temperature 0, max_tokens 768.
MAX_TOKENS = 768

# --------------------------------------------------------------------------------------------------------------
# Prompt template
# --------------------------------------------------------------------------------------------------------------

#: ``base_prompt`` of ``inference/build_test_prompt/make_test_prompt.py`` at the pinned commit, verbatim (it is
#: part of the protocol). Note the missing space in "description.You" and the space before "\n" in "from 0
#: globally. \n": both are upstream's.
BASE_PROMPT = (
    "You have access to a list of APIs and the task description.You need to follow the given task description and "
    "determine which API to call in sequence according to the order required by the task description. API can be "
    "retrieved from the APIs list. Finally, you only need to return the API call result without any other content."
    "\nThe final result should be in the format of "
    '[{"api_name":__,"api_id":__,"parameters":{"arg0":"value0","arg1":"value1",...},'
    '"responses":{"arg0":"API_call_0", ... ,"argn":"API_call_n"}},'
    '{"api_name":__,"api_id":__,"parameters":{"arg0":"value0","arg1":"value1",...},'
    '"responses":{"arg0":"API_call_{n+1}",...}}, ...]. '
    "You don't need to know the actual return value of the API call, just assign each return value as a string "
    '"API_call_{number}" in "responses", such as "API_call_0","API_call_1","API_call_2" and so on. '
    'The "number" in "API_call_{number}" should increase by one from 0 globally. \n'
    "Please first determine which APIs to call in sequence based on the task, and then determine the parameter "
    "values of each API depending on the specific details of the task. If you decide to call the API, you need to "
    "fill in all this API's required parameters which can be found in this API's \"required\" list. If you think "
    "the task does not include the actual value of a necessary parameter in API's \"required\" list, you can assign "
    'the necessary parameter a value of "UNK". The remaining parameters are optional parameters, determine whether '
    "to fill them in according to the task. If you think the parameter value to be filled in is the return value of "
    'a previous API call, set it as "API_call_x", then the parameter value can be filled in with "API_call_x".'
    "\n\nNow it is your turn to generate the API call result based on the APIs and task description below. "
    "Remember that you only need to generate the API call result, not any additional explanations.\nAPIs:\n"
)
TASK_HEADER = "\n\nTask description:\n"
ANSWER_HEADER = "\n\nAPI call result:\n"


def render_prompt(candidates: Sequence[Mapping[str, Any]], task: str) -> str:
    """The official layout: template, Python ``str()`` of the candidate list, the task, the answer cue."""
    return BASE_PROMPT + str([dict(c) for c in candidates]) + TASK_HEADER + task + ANSWER_HEADER


def prompt_template_sha256() -> str:
    return hashlib.sha256((BASE_PROMPT + TASK_HEADER + ANSWER_HEADER).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------------------------
# Data files
# --------------------------------------------------------------------------------------------------------------

_PARAM_SPEC = {
    "type": "object",
    "additionalProperties": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}},
}
_API_SCHEMA = {
    "type": "object",
    "required": ["api_name", "api_description", "parameters", "required", "responses"],
    "properties": {
        "api_name": {"type": "string", "minLength": 1},
        "api_description": {"type": "string"},
        "parameters": _PARAM_SPEC,
        "required": {"type": "array", "items": {"type": "string"}},
        "responses": _PARAM_SPEC,
    },
}
TEST_DATA_SCHEMA = {
    "type": "object",
    "required": ["test_id", "api", "task", "call", "field"],
    "properties": {
        "test_id": {"type": "integer", "minimum": 1},
        "api": {"type": "array", "minItems": 1, "items": _API_SCHEMA},
        "task": {"type": "string"},
        "field": {"type": "string"},
        "call": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["api_name", "parameters", "responses"],
                "properties": {
                    "api_name": {"type": "string"},
                    "parameters": {"type": "object"},
                    "responses": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}
API_IDS_SCHEMA = {
    "type": "object",
    "required": ["test_id", "api_ids"],
    "properties": {
        "test_id": {"type": "integer", "minimum": 1},
        "api_ids": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
    },
}
PROMPT_SCHEMA = {
    "type": "object",
    "required": ["test_id", "prompt"],
    "properties": {"test_id": {"type": "integer"}, "prompt": {"type": "string"}},
}
RAW_RESPONSE_SCHEMA = {
    "type": "object",
    "required": ["test_id", "response"],
    "properties": {"test_id": {"type": "integer"}, "response": {"type": ["string", "integer"]}},
}
NEW_RESPONSE_SCHEMA = {
    "type": "object",
    "required": ["test_id", "lst_response"],
    "properties": {"test_id": {"type": "integer"}},
}


def prompt_source(data_dir: Path | str) -> str:
    """Which prompts a run uses: ``official`` when ``test_prompt.jsonl`` sits in the data folder, else ``rebuilt``."""
    return PROMPT_SOURCE_OFFICIAL if (Path(data_dir) / OFFICIAL_PROMPT_FILE).is_file() else PROMPT_SOURCE_REBUILT


def run_info(data_dir: Path | str) -> dict[str, str]:
    """Shown in the run header and results: which prompt variant this run's numbers rest on."""
    source = prompt_source(data_dir)
    note = ("official inference/test_prompt.jsonl" if source == PROMPT_SOURCE_OFFICIAL else
            "rebuilt offline (test_prompt.jsonl absent): candidate lists differ from the paper's")
    return {"prompts": note}


@lru_cache(maxsize=4)
def _load_test_data(data_dir: str) -> tuple[list[dict[str, Any]], dict[int, list[int]]]:
    folder = Path(data_dir)
    records = load_jsonl(folder / "test_data.jsonl", TEST_DATA_SCHEMA)
    id_rows = load_jsonl(folder / "test_api_ids.jsonl", API_IDS_SCHEMA)
    api_ids = {row["test_id"]: row["api_ids"] for row in id_rows}
    for number, record in enumerate(records, start=1):
        ids = api_ids.get(record["test_id"])
        if ids is None:
            raise DataError(folder / "test_api_ids.jsonl", f"no api_ids for test_id {record['test_id']}")
        if len(ids) != len(record["api"]):
            raise DataError(
                folder / "test_api_ids.jsonl",
                f"test_id {record['test_id']}: {len(ids)} api_ids for {len(record['api'])} tools",
                field="api_ids",
            )
        names = {api["api_name"] for api in record["api"]}
        for call in record["call"]:
            if call["api_name"] not in names:
                raise DataError(folder / "test_data.jsonl", f"call to unknown tool {call['api_name']!r}",
                                line=number, field="call")
    return records, api_ids


# --------------------------------------------------------------------------------------------------------------
# Gold chain, depth and structure (computed exactly as upstream does)
# --------------------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------------------
# Candidate lists: the official prompt file, or a deterministic offline rebuild
# --------------------------------------------------------------------------------------------------------------

#: Rebuild settings (recorded in each payload). The official recipe walks the 99 nearest neighbours after the top
#: hit of an embedding retriever (gte-large-en-v1.5 over the full ``api_dic.json`` pool); offline we rank the
#: test set's own tools with a lexical TF-IDF cosine over name, description and parameter/response names [inferred].
REBUILD_DISTRACTORS_PER_TOOL = 5
REBUILD_WINDOW = 99
REBUILD_SEED = "nestools-rebuilt-v1"
REBUILD_RETRIEVER = "tfidf-cosine(name,description,parameter names,response names; df>25% dropped)"
LEVENSHTEIN_THRESHOLD = 0.2
_TOKEN = re.compile(r"[a-z0-9]+")


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def too_similar(gold_name: str, name: str) -> bool:
    """``Levenshtein.distance(gold, name) / len(gold) < 0.2``; the length difference bounds the distance from
    below, which settles most pairs without the quadratic computation."""
    limit = LEVENSHTEIN_THRESHOLD * len(gold_name)
    if abs(len(gold_name) - len(name)) >= limit:
        return False
    return levenshtein(gold_name, name) / len(gold_name) < LEVENSHTEIN_THRESHOLD


def _tool_tokens(api: Mapping[str, Any]) -> list[str]:
    text = " ".join(
        [api["api_name"].replace("_", " "), api.get("api_description", "")]
        + [name.replace("_", " ") for name in api.get("parameters", {})]
        + [name.replace("_", " ") for name in api.get("responses", {})]
    )
    return _TOKEN.findall(text.lower())


class _LexicalIndex:
    """TF-IDF (log tf, smooth idf) cosine over the tool pool, with an inverted index for speed."""

    def __init__(self, pool: Mapping[int, Mapping[str, Any]]):
        self.ids = sorted(pool)
        documents = {tool_id: Counter(_tool_tokens(pool[tool_id])) for tool_id in self.ids}
        frequency = Counter(token for counts in documents.values() for token in counts)
        total = len(self.ids)
        self.idf = {token: math.log((1 + total) / (1 + df)) + 1.0 for token, df in frequency.items()}
        self.vectors: dict[int, dict[str, float]] = {}
        self.postings: dict[str, list[tuple[int, float]]] = {}
        for tool_id, counts in documents.items():
            vector = self._weights(counts)
            self.vectors[tool_id] = vector
            for token, weight in vector.items():
                self.postings.setdefault(token, []).append((tool_id, weight))

    def _weights(self, counts: Mapping[str, int]) -> dict[str, float]:
        vector = {t: (1.0 + math.log(c)) * self.idf.get(t, 0.0) for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
        return {t: w / norm for t, w in vector.items()}

    def ranked(self, tool_id: int, limit: int) -> list[int]:
        """Pool ids by decreasing similarity to ``tool_id`` (ties by id), the tool itself normally first.

        Tokens in more than a quarter of the pool (stop words) are left out of the dot product, for speed."""
        scores: dict[int, float] = {}
        ceiling = max(1, len(self.ids) // 4)
        for token, weight in self.vectors[tool_id].items():
            postings = self.postings[token]
            if len(postings) > ceiling:
                continue
            for other, other_weight in postings:
                scores[other] = scores.get(other, 0.0) + weight * other_weight
        order = heapq.nsmallest(limit, scores, key=lambda other: (-round(scores[other], 12), other))
        if len(order) < limit:
            order += [other for other in self.ids if other not in scores][: limit - len(order)]
        return order


@lru_cache(maxsize=4)
def _rebuild_pool(data_dir: str) -> tuple[dict[int, dict[str, Any]], _LexicalIndex]:
    records, api_ids = _load_test_data(data_dir)
    pool: dict[int, dict[str, Any]] = {}
    for record in records:
        for api, api_id in zip(record["api"], api_ids[record["test_id"]]):
            pool.setdefault(api_id, api)
    return pool, _LexicalIndex(pool)


def _with_id(api: Mapping[str, Any], api_id: int) -> dict[str, Any]:
    """The candidate dict as ``make_test_prompt`` builds it: the tool's keys with ``api_id`` right after the name."""
    entry: dict[str, Any] = {}
    for key, value in api.items():
        entry[key] = value
        if key == "api_name":
            entry["api_id"] = api_id
    return entry


def rebuilt_candidates(data_dir: Path | str, test_id: int) -> list[dict[str, Any]]:
    """Gold tools + 5 look-alike distractors per gold tool, shuffled with a seed derived from ``test_id``.

    Follows ``make_test_prompt.py``: for each gold tool walk neighbours 1..99 (position 0 is the tool itself),
    skip any whose name is within Levenshtein/len < 0.2 of *any* gold name, keep the first 5. Like upstream,
    distractors are not de-duplicated across the gold tools of a case (the spec suggested de-duplicating; the
    upstream code does not, and upstream wins).
    """
    return json.loads(_rebuilt_candidates_json(str(data_dir), test_id))


@lru_cache(maxsize=4096)
def _rebuilt_candidates_json(data_dir: str, test_id: int) -> str:
    """Cached as JSON text so every caller gets its own copy."""
    records, api_ids = _load_test_data(data_dir)
    record = next(r for r in records if r["test_id"] == test_id)
    pool, index = _rebuild_pool(data_dir)
    gold_ids = api_ids[test_id]
    candidates = [_with_id(api, api_id) for api, api_id in zip(record["api"], gold_ids)]
    gold_names = [api["api_name"] for api in record["api"]]
    for gold_id in gold_ids:
        neighbours = index.ranked(gold_id, REBUILD_WINDOW + 1)[1:]
        added = 0
        for other in neighbours:
            name = pool[other]["api_name"]
            if not any(too_similar(gold, name) for gold in gold_names):
                candidates.append(_with_id(pool[other], other))
                added += 1
                if added == REBUILD_DISTRACTORS_PER_TOOL:
                    break
    # Upstream shuffles 5 times with an unseeded RNG; a seeded RNG per case keeps the rebuild reproducible.
    rng = random.Random(f"{REBUILD_SEED}:{test_id}")
    for _ in range(5):
        rng.shuffle(candidates)
    return json.dumps(candidates, ensure_ascii=False)


_PROMPT_API_ID = re.compile(r"'api_id': (-?\d+)")


# --------------------------------------------------------------------------------------------------------------
# Benchmark protocol: cases and requests
# --------------------------------------------------------------------------------------------------------------


def _identifier(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return cleaned if cleaned and not cleaned[0].isdigit() else f"d_{cleaned}"


def depth_bucket(depth: int) -> str:
    """Category of a case: the upstream depth views 1, 2 and 3-5."""
    return "depth1" if depth <= 1 else "depth2" if depth == 2 else "depth3plus"


def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    data_dir = Path(data_dir)
    records, api_ids = _load_test_data(str(data_dir))
    source = prompt_source(data_dir)
    official: dict[int, str] = {}
    if source == PROMPT_SOURCE_OFFICIAL:
        official = {row["test_id"]: row["prompt"] for row in load_jsonl(data_dir / OFFICIAL_PROMPT_FILE, PROMPT_SCHEMA)}
    suite = definition.get("name", SUITE) if definition else SUITE
    cases: list[Case] = []
    seen: set[int] = set()
    for record in records:
        test_id = record["test_id"]
        if test_id in seen:
            raise DataError(data_dir / "test_data.jsonl", f"duplicate test_id {test_id}", field="test_id")
        seen.add(test_id)
        payload: dict[str, Any] = {
            "test_id": test_id,
            "task": record["task"],
            "api": record["api"],
            "api_ids": api_ids[test_id],
            "call": record["call"],
            "field": record["field"],
            "prompt_source": source,
            "data_dir": str(data_dir),
        }
        if source == PROMPT_SOURCE_OFFICIAL:
            if test_id not in official:
                raise DataError(data_dir / OFFICIAL_PROMPT_FILE, f"no prompt for test_id {test_id}")
            payload["prompt"] = official[test_id]
        chain = gold_calls(payload)
        depth = max_depth(chain)
        structure = structure_key(chain)
        payload["depth"] = depth
        payload["structure_key"] = structure
        nested = depth > 1
        domain = _identifier(record["field"].split("/")[0])
        keywords = (
            f"depth{min(depth, 3)}",
            "nested" if nested else "flat",
            f"structure{structure}" if structure is not None else "structure_other",
            domain,
            f"prompt_{source}",
        )
        cases.append(Case(suite=suite, case_id=str(test_id), category=depth_bucket(depth), payload=payload,
                          keywords=keywords))
    return cases


def candidates_for(case: Case) -> list[dict[str, Any]]:
    """The candidate tool list shown to the model (rebuilt prompts only; official prompts carry it as text)."""
    return rebuilt_candidates(case.payload["data_dir"], case.payload["test_id"])


def prompt_text(case: Case) -> str:
    payload = case.payload
    if payload.get("prompt_source") == PROMPT_SOURCE_OFFICIAL and "prompt" in payload:
        return payload["prompt"]
    return render_prompt(candidates_for(case), payload["task"])


def candidate_ids(case: Case) -> set[Any]:
    """The ``api_id``s offered in the case's prompt (to tell a distractor pick from a made-up id)."""
    payload = case.payload
    if payload.get("prompt_source") == PROMPT_SOURCE_OFFICIAL and "prompt" in payload:
        return {int(x) for x in _PROMPT_API_ID.findall(payload["prompt"])}
    try:
        return {c["api_id"] for c in candidates_for(case)}
    except (OSError, DataError, StopIteration, KeyError):
        return set(payload["api_ids"])


def build_request(case: Case) -> Request:
    # inference.py: the whole prompt as one user message, temperature 0, max_tokens 768.
    return Request(messages=[{"role": "user", "content": prompt_text(case)}], tools=None, max_tokens=MAX_TOKENS)


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


# --------------------------------------------------------------------------------------------------------------
# Output parsing (``check_string`` + the format check of ``process_results_gen``)
# --------------------------------------------------------------------------------------------------------------


def parse_output(text: Any) -> Any:
    """``check_string``: the text from the first ``[`` to the last ``]``, as a Python literal, else as JSON.

    Returns the parsed value or None. ``ast.literal_eval`` only builds literals (it never evaluates code).
    QUIRK: Python slicing semantics are kept, so with no ``[`` the slice starts at the last character.
    """
    if not isinstance(text, str):
        return None
    snippet = text[text.find("["): text.rfind("]") + 1]
    try:
        return ast.literal_eval(snippet)
    except Exception:
        pass
    try:
        return json.loads(snippet)
    except Exception:
        return None


def decode_calls(text: Any) -> list[dict[str, Any]] | None:
    """The predicted calls, or None for a format failure: every element must be a dict with ``api_name``,
    ``api_id`` and a dict ``parameters`` (``responses`` is optional)."""
    parsed = parse_output(text)
    if parsed is None:
        return None
    try:
        items = list(parsed)
    except TypeError:
        return None
    for item in items:
        if not isinstance(item, dict):
            return None
        if "api_name" not in item or "api_id" not in item or "parameters" not in item:
            return None
        if not isinstance(item["parameters"], dict):
            return None
    return items


# --------------------------------------------------------------------------------------------------------------
# Parameter value scoring (``check_score``), ROUGE-L as ``rouge==1.0.1`` computes it, ``normalize_date``
# --------------------------------------------------------------------------------------------------------------


class _ScoreFailure(Exception):
    """A case where upstream's ``check_score`` raises; its callers turn any exception into a score of 0."""


#: QUIRK: rouge 1.0.1 reconstructs the LCS recursively, so a long LCS walk hits Python's recursion limit (1000)
#: and the official scorer gives 0. Eleven frames sit below the first ``_recon`` call when ``eval.py`` scores a
#: top-level string, leaving 988 ``_recon`` frames (checked against rouge 1.0.1 on CPython 3.11: a 987-word walk
#: scores, 988 raises). Strings nested in lists/dicts have a frame or two less; that is not modelled.
_ROUGE_RECON_BUDGET = 988


def _rouge_sentences(text: str) -> list[str]:
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _lcs_words(reference: list[str], hypothesis: list[str]) -> list[str]:
    """The LCS of two token lists, reconstructed with rouge 1.0.1's tie-breaking (which fixes the word set)."""
    rows, cols = len(reference), len(hypothesis)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        row, above, word = table[i], table[i - 1], reference[i - 1]
        for j in range(1, cols + 1):
            row[j] = above[j - 1] + 1 if word == hypothesis[j - 1] else max(above[j], row[j - 1])
    words: list[str] = []
    i, j, frames = rows, cols, 1
    while i > 0 and j > 0:
        frames += 1
        if reference[i - 1] == hypothesis[j - 1]:
            words.append(reference[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    if frames > _ROUGE_RECON_BUDGET:
        raise _ScoreFailure("rouge recursion limit")
    return words


def rouge_l_f(hypothesis: str, reference: str) -> float:
    """ROUGE-L F of ``rouge==1.0.1`` (``Rouge().get_scores(hyp, ref)[0]["rouge-l"]["f"]``).

    Sentences are split on ".", tokens on single spaces after whitespace collapsing; with the default
    ``exclusive=True`` every count is over *distinct* words. QUIRK: F carries a ``+1e-8`` in its denominator, so
    two different strings that match case-insensitively score 0.999999995, never 1. An empty sentence list on
    either side raises upstream (ROUGE-1 is computed first and refuses it).
    """
    hyp_sentences = _rouge_sentences(hypothesis)
    ref_sentences = _rouge_sentences(reference)
    if not hyp_sentences or not ref_sentences:
        raise _ScoreFailure("empty rouge input")
    ref_words = {w for s in ref_sentences for w in s.split(" ")}
    hyp_words = {w for s in hyp_sentences for w in s.split(" ")}
    union: set[str] = set()
    for ref_sentence in ref_sentences:
        tokens = ref_sentence.split(" ")
        for hyp_sentence in hyp_sentences:
            union.update(_lcs_words(tokens, hyp_sentence.split(" ")))
    overlap = len(union)
    recall = overlap / len(ref_words)
    precision = overlap / len(hyp_words)
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LONG_DATE = re.compile(r"\b[A-Za-z]+ \d+(st|nd|rd|th)?, \d{4}\b")
_DAY = re.compile(r"\b(\d+)(st|nd|rd|th)?\b")
_ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)")


def _ordinal_fits(day: int, suffix: str) -> bool:
    if suffix == "st":
        return day in (1, 21, 31)
    if suffix == "nd":
        return day in (2, 22)
    if suffix == "rd":
        return day in (3, 23)
    return suffix == "th" and (4 <= day <= 20 or 24 <= day <= 30)


def normalize_date(text: str) -> str:
    """``normalize_date``: "Month D(st|nd|rd|th), YYYY" → "YYYY-MM-DD"; anything unparsable is returned as is.

    QUIRK: the ISO test is a prefix match and the day is the *first* number in the string; strptime on the whole
    string then fails for any surrounding text and the input comes back unchanged.
    """
    try:
        if _ISO_DATE.match(text):
            return datetime.strptime(text, "%Y-%m-%d").strftime("%Y-%m-%d")
        if _LONG_DATE.search(text):
            day = _DAY.search(text)
            if not day:
                return text
            if day.group(2) and not _ordinal_fits(int(day.group(1)), day.group(2)):
                return text
            return datetime.strptime(_ORDINAL.sub(r"\1", text), "%B %d, %Y").strftime("%Y-%m-%d")
        return text
    except ValueError:
        return text


def value_score(gold: Any, predicted: Any) -> float:
    """``check_score``: 1 when equal; strings ROUGE-L (max of plain and date-normalised, lowercased); numbers and
    booleans equality; lists and dicts element-wise means. May raise where upstream raises (see callers)."""
    if gold == predicted:
        return 1
    if isinstance(gold, str) and isinstance(predicted, str):
        plain = rouge_l_f(predicted.lower(), gold.lower())
        dated = rouge_l_f(normalize_date(predicted).lower(), normalize_date(gold).lower())
        return dated if dated > plain else plain
    if isinstance(gold, (int, float)) and isinstance(predicted, (int, float)):
        # QUIRK: bool is an int, so True/1 and False/0 compare equal; upstream's separate bool branch is dead code.
        return gold == predicted
    if isinstance(gold, list) and isinstance(predicted, list):
        if len(gold) != len(predicted):
            return 0
        total: float = 0
        for g, p in zip(gold, predicted):
            total += value_score(g, p)
        return total / len(gold)
    if isinstance(gold, dict) and isinstance(predicted, dict):
        gold_keys, predicted_keys = list(gold), list(predicted)
        if len(gold_keys) != len(predicted_keys):
            return 0
        total = 0
        for g_key, p_key in zip(gold_keys, predicted_keys):
            # Keys are compared position by position, lowercased, without "_" and " " (non-str keys raise).
            if _loose_key(g_key) == _loose_key(p_key):
                total = total + value_score(gold[g_key], predicted[p_key])
        return total / len(predicted_keys)
    return 0


def _loose_key(key: Any) -> str:
    return "".join(ch for ch in key.lower() if ch not in ("_", " "))


def safe_value_score(gold: Any, predicted: Any) -> float:
    """``check_score`` wrapped as upstream calls it: any exception scores 0."""
    try:
        return value_score(gold, predicted)
    except Exception:
        return 0


# --------------------------------------------------------------------------------------------------------------
# Per-case counts (``process_results_gen``)
# --------------------------------------------------------------------------------------------------------------

FAMILIES = ("api", "order", "param", "nest")
COUNT_KEYS = tuple(f"{kind}_{family}_num" for family in FAMILIES for kind in ("correct", "predict", "gold"))
PARAM_ERROR_KEYS = (
    "para_error_type",
    "para_error_omission",
    "para_error_redundancy",
    "para_error_extaction",  # upstream's spelling
    "para_error_transformation",
)
NEST_ERROR_KEYS = ("nest_error_omission", "nest_error_unfind", "nest_error_wrong_place", "nest_error_hallucination")
ERROR_KEYS = PARAM_ERROR_KEYS + NEST_ERROR_KEYS
#: Readable error-type names for the nine upstream counters (the paper's names in comments).
ERROR_TYPE_NAMES = {
    "para_error_type": "param_type",
    "para_error_omission": "param_omission",
    "para_error_redundancy": "param_redundancy",
    "para_error_extaction": "param_extraction",
    "para_error_transformation": "param_transformation",  # paper: "Others"
    "nest_error_omission": "nest_omission",
    "nest_error_unfind": "nest_unfind",  # paper: "Identification"
    "nest_error_wrong_place": "nest_wrong_place",  # paper: "Confusion"
    "nest_error_hallucination": "nest_hallucination",
}
_NESTED = re.compile("API_call")


def _has_placeholder(value: Any) -> bool:
    return _NESTED.search(str(value)) is not None


def _hashable(value: Any) -> Any:
    """Order pairs are counted with a Counter; upstream crashes on unhashable ids, we give them a unique key."""
    try:
        hash(value)
        return value
    except TypeError:
        return ("<unhashable>", repr(value))


def _response_slots(call: Mapping[str, Any]) -> list[Any]:
    """A predicted call's return placeholders in slot order: dict values, non-strings as -1; anything but a dict
    gives no slots."""
    responses = call.get("responses")
    if not isinstance(responses, dict):
        return []
    return [value if isinstance(value, str) else -1 for value in responses.values()]


def _last_slot(slots_per_call: Sequence[Sequence[Any]], value: Any) -> tuple[int, int]:
    """(call, slot) holding ``value``: the first slot within a call, the *last* such call (upstream's loops only
    break out of the inner one). (-1, -1) when absent."""
    found = (-1, -1)
    for call_index, slots in enumerate(slots_per_call):
        for slot_index, slot in enumerate(slots):
            if slot == value:
                found = (call_index, slot_index)
                break
    return found


def evaluate(gold: Sequence[Mapping[str, Any]], task: str, text: Any) -> dict[str, Any]:
    """The official per-case numbers for one raw output: the twelve counts, ``correct_format_num``, ``tree_acc``,
    the nine parameter-error counters, plus ``matches`` (gold index, predicted index) and the decoded calls."""
    counts: dict[str, Any] = {key: 0 for key in COUNT_KEYS}
    counts["correct_format_num"] = 0
    errors = {key: 0 for key in ERROR_KEYS}
    predicted = decode_calls(text)

    # Gold side (also counted on a format failure: these are the recall denominators).
    counts["gold_api_num"] = len(gold)
    gold_slots: list[Sequence[Any]] = []
    producer_of: dict[str, Any] = {}
    unmatched: dict[Any, list[int]] = {}
    for index, call in enumerate(gold):
        counts["gold_param_num"] += len(call["parameters"])
        gold_slots.append(call["responses"])
        for value in call["parameters"].values():
            if _has_placeholder(value):
                counts["gold_nest_num"] += 1
                producer, slot = _last_slot(gold_slots, str(value))
                # A nested value that is no single placeholder (e.g. a list of them) is kept as its own text and
                # then only scores by plain equality.
                producer_of[str(value)] = (
                    str(value) if producer == -1 else (producer, gold[producer]["api_id"], slot)
                )
        unmatched.setdefault(call["api_id"], []).append(index)

    # Order: multiset intersection of adjacent id pairs.
    if predicted is not None and len(predicted) > 1:
        gold_pairs = [(gold[i]["api_id"], gold[i + 1]["api_id"]) for i in range(len(gold) - 1)]
        predicted_pairs = [_hashable((predicted[i]["api_id"], predicted[i + 1]["api_id"]))
                           for i in range(len(predicted) - 1)]
        counts["gold_order_num"] = len(gold_pairs)
        counts["predict_order_num"] = len(predicted_pairs)
        counts["correct_order_num"] = sum((Counter(gold_pairs) & Counter(predicted_pairs)).values())
    else:
        counts["gold_order_num"] = len(gold) - 1

    matches: list[list[int]] = []
    if predicted is not None:
        counts["correct_format_num"] = 1
        predicted_slots: list[list[Any]] = []
        for p_index, call in enumerate(predicted):
            counts["predict_api_num"] += 1
            parameters = call["parameters"]
            counts["predict_param_num"] += len(parameters)
            predicted_slots.append(_response_slots(call))
            counts["predict_nest_num"] += sum(1 for value in parameters.values() if _has_placeholder(value))

            same_id = [g for g in range(len(gold)) if gold[g]["api_id"] == call["api_id"]
                       and g in unmatched[gold[g]["api_id"]]]
            if not same_id:
                continue
            counts["correct_api_num"] += 1
            best_score: float = 0
            best_nest = 0
            best_gold = -1
            for g in same_id:
                param_score: float = 0
                nest_score = 0
                gold_parameters = gold[g]["parameters"]
                for name, value in parameters.items():
                    if name not in gold_parameters:
                        continue
                    gold_value = gold_parameters[name]
                    score: float = 0
                    producer = producer_of.get(str(gold_value))
                    if producer:
                        if isinstance(producer, tuple):
                            # Structural rule: the placeholder must sit, at the gold slot index, in the responses
                            # of an earlier predicted call already paired with the gold producer.
                            if isinstance(value, str):
                                gold_producer, _, gold_slot = producer
                                p_call, p_slot = _last_slot(predicted_slots, value)
                                if (p_slot == gold_slot and [gold_producer, p_call] in matches
                                        and _has_placeholder(value)):
                                    nest_score += 1
                                    score = 1
                        elif gold_value == value:
                            nest_score += 1
                            score = 1
                    else:
                        score = safe_value_score(gold_value, value)
                    param_score += score
                if param_score > best_score:
                    best_score, best_gold, best_nest = param_score, g, nest_score
            if best_score == 0:
                # No candidate scores anything: the first unmatched gold call with this id is taken.
                best_gold = same_id[0]
            counts["correct_nest_num"] += best_nest
            counts["correct_param_num"] += best_score
            matches.append([best_gold, p_index])
            unmatched[call["api_id"]].remove(best_gold)

        _count_errors(gold, predicted, predicted_slots, matches, task, errors)

    tree = (
        counts["correct_api_num"] == counts["gold_api_num"] == counts["predict_api_num"]
        and counts["correct_order_num"] == counts["predict_order_num"] == counts["gold_order_num"]
        and counts["correct_param_num"] == counts["predict_param_num"] == counts["gold_param_num"]
        and counts["gold_nest_num"] == counts["predict_nest_num"] == counts["correct_nest_num"]
    )
    result: dict[str, Any] = dict(counts)
    result["tree_acc"] = 1 if tree else 0
    result.update(errors)
    result["matches"] = sorted(matches, key=lambda pair: pair[0])
    result["predicted"] = predicted
    return result


def _count_errors(gold, predicted, predicted_slots, matches, task: str, errors: dict[str, int]) -> None:
    """The ``--eval_para_error`` counters over matched pairs, in gold order (as upstream sorts them)."""
    ordered = sorted(matches, key=lambda pair: pair[0])
    paired: dict[int, int] = {}
    for g_index, p_index in ordered:
        gold_call, predicted_call = gold[g_index], predicted[p_index]
        paired[g_index] = p_index
        predicted_parameters = predicted_call["parameters"]
        for key, value in gold_call["parameters"].items():
            if not _has_placeholder(value):
                if key in predicted_parameters and _has_placeholder(predicted_parameters[key]):
                    errors["nest_error_hallucination"] += 1
                continue
            location = None
            for producer, slots in enumerate(gold[i]["responses"] for i in range(len(gold))):
                for slot, placeholder in enumerate(slots):
                    # The producer must be paired with a predicted call *before* this one; last hit wins.
                    if placeholder == value and producer in paired and paired[producer] < p_index:
                        location = (paired[producer], slot)
            if location is None:
                # QUIRK: a nested gold parameter whose producer is unpaired (or paired later) counts no error.
                continue
            if key not in predicted_parameters:
                errors["nest_error_omission"] += 1
                continue
            given = predicted_parameters[key]
            if given == "UNK":
                errors["nest_error_omission"] += 1
            elif not _has_placeholder(given):
                errors["nest_error_unfind"] += 1
            else:
                slots = predicted_slots[location[0]]
                if location[1] >= len(slots) or slots[location[1]] != given:
                    errors["nest_error_wrong_place"] += 1

    lowered_task = task.lower()
    for g_index, p_index in ordered:
        gold_parameters = gold[g_index]["parameters"]
        predicted_parameters = predicted[p_index]["parameters"]
        errors["para_error_redundancy"] += sum(1 for key in predicted_parameters if key not in gold_parameters)
        # QUIRK: nested gold parameters go through this non-nested analysis too (placeholders compared by ROUGE).
        for key, value in gold_parameters.items():
            if key not in predicted_parameters or predicted_parameters[key] == "UNK":
                errors["para_error_omission"] += 1
                continue
            given = predicted_parameters[key]
            if safe_value_score(value, given) != 1:
                if str(value) == str(given):
                    errors["para_error_type"] += 1
                elif str(value).lower() in lowered_task:
                    errors["para_error_extaction"] += 1
                else:
                    errors["para_error_transformation"] += 1


# --------------------------------------------------------------------------------------------------------------
# Benchmark protocol: score
# --------------------------------------------------------------------------------------------------------------

#: Tie-break order for the dominant parameter-error kind (the nested kinds first: a wrong placeholder is also
#: counted as a non-nested "transformation" upstream, and the nested label says more).
_ERROR_PRIORITY = NEST_ERROR_KEYS + PARAM_ERROR_KEYS


def _json_safe(value: Any) -> Any:
    """Decoded Python literals can hold tuples, sets, bytes or complex numbers; reports need plain JSON."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return repr(value)


def _tool_error(gold, predicted, matches, offered: set[Any], counts: Mapping[str, Any]) -> str:
    """A tool-level label for a failed case with no parameter-error counter (the paper's qualitative categories;
    this rule is ours): a predicted id outside the gold pool is a *selection* (offered distractor) or a
    *hallucination* (never offered); a surplus call to a gold id is *redundancy*; an unpaired gold call is
    *omission*; otherwise the chain is mis-ordered, or the failure is partial credit on a value."""
    paired_predicted = {p for _, p in matches}
    paired_gold = {g for g, _ in matches}
    gold_ids = [call["api_id"] for call in gold]
    extra = [call for index, call in enumerate(predicted) if index not in paired_predicted]
    if any(call["api_id"] not in gold_ids for call in extra):
        hallucinated = any(_hashable(call["api_id"]) not in offered for call in extra if call["api_id"] not in gold_ids)
        return "tool_hallucination" if hallucinated else "tool_selection"
    if len(paired_gold) < len(gold):
        return "tool_omission"
    if extra:
        return "tool_redundancy"
    if not counts["correct_order_num"] == counts["predict_order_num"] == counts["gold_order_num"]:
        return "tool_order"
    if not counts["correct_nest_num"] == counts["predict_nest_num"] == counts["gold_nest_num"]:
        return "nest_other"
    return "param_partial_credit"


def _failure_type(result: Mapping[str, Any], tool_error: str | None) -> str:
    """The error type of a failed case: format failure, else the dominant upstream parameter-error counter, else
    the tool-level label (when no counter fired: wrong/extra/missing calls, order, partial credit)."""
    if not result["correct_format_num"]:
        return FORMAT_ERROR
    worst = max(_ERROR_PRIORITY, key=lambda key: (result[key], -_ERROR_PRIORITY.index(key)))
    if result[worst] > 0:
        return ERROR_TYPE_NAMES[worst]
    return tool_error or "other"


def _explain(result: Mapping[str, Any], gold, error_type: str | None) -> str:
    lines = []
    if not result["correct_format_num"]:
        lines.append("format failure: no list of {api_name, api_id, parameters: {...}} objects could be parsed "
                     "(first '[' to last ']', as a Python literal or JSON); only the gold counts are added")
    names = {"api": "Selection", "order": "Order", "param": "Parameter", "nest": "Nested"}
    for family in FAMILIES:
        correct = result[f"correct_{family}_num"]
        lines.append(f"{names[family]}: correct {round(correct, 6)} / predicted {result[f'predict_{family}_num']} "
                     f"/ gold {result[f'gold_{family}_num']}")
    if result["correct_format_num"]:
        lines.append(f"pairs (gold index, predicted index): {result['matches']}")
        errors = {ERROR_TYPE_NAMES[k]: result[k] for k in ERROR_KEYS if result[k]}
        if errors:
            lines.append(f"parameter errors: {errors}")
    lines.append("tree: " + ("pass (every family exact)" if result["tree_acc"] else f"fail ({error_type})"))
    lines.append("expected: " + json.dumps(
        [{"api_name": c["api_name"], "api_id": c["api_id"], "parameters": c["parameters"],
          "responses": c["responses"]} for c in gold], ensure_ascii=False))
    return "\n".join(lines)


def score(case: Case, generation: Generation) -> Verdict:
    gold = gold_calls(case.payload)
    result = evaluate(gold, case.payload["task"], generation.text)
    passed = bool(result["tree_acc"])
    tool_error = None
    if not passed and result["correct_format_num"]:
        offered = {_hashable(i) for i in candidate_ids(case)}
        tool_error = _tool_error(gold, result["predicted"], result["matches"], offered, result)
    error_type = None if passed else _failure_type(result, tool_error)
    counts = {"all_num": 1.0, "correct_format_num": float(result["correct_format_num"]),
              "tree_acc": float(result["tree_acc"])}
    counts.update({key: float(result[key]) for key in COUNT_KEYS})
    counts.update({key: float(result[key]) for key in ERROR_KEYS})
    depth = case.payload.get("depth") or max_depth(gold)
    structure = case.payload.get("structure_key")
    labels = {"depth": str(depth), "structure": "other" if structure is None else str(structure)}
    if tool_error:
        labels["tool_error"] = tool_error
    if depth == 1:
        # TL-Training's categories, on flat chains only (see tl_category); passed flat cases carry the +1 reward
        # so that the mean reward is taken over exactly the cases in scope.
        if passed:
            counts["tl_reward"] = REWARDS[CORRECT]
        else:
            order_exact = result["correct_order_num"] == result["predict_order_num"] == result["gold_order_num"]
            labels["tl_category"], counts["tl_reward"] = tl_category(case, gold, result["predicted"], order_exact)
    return Verdict(
        passed=passed,
        error_type=error_type,
        explanation=_explain(result, gold, error_type),
        decoded=_json_safe(result["predicted"]),
        expected=_json_safe(gold),
        counts=counts,
        labels=labels,
        details={"matches": result["matches"], "truncated": generation.truncated,
                 "prompt_source": case.payload.get("prompt_source")},
    )


# --------------------------------------------------------------------------------------------------------------
# TL-Training failure categories (single-call cases)
# --------------------------------------------------------------------------------------------------------------


def _tl_tool_key(api_id: Any) -> str:
    # NesTools identifies a tool by its api_id (pairing is by id, the api_name is never compared), so the TL "tool
    # name" is the id; the repr keeps 12 and "12" apart, as upstream's ``==`` does.
    return f"api_id {api_id!r}"


def _same_id(offered: Any, predicted: Any) -> bool:
    try:
        return bool(offered == predicted)
    except Exception:
        return False


def tl_category(case: Case, gold: Sequence[Mapping[str, Any]], predicted: Sequence[Mapping[str, Any]] | None,
                order_exact: bool = True) -> tuple[str, float]:
    """TL-Training's category and reward of a failed case with a flat gold chain (no call consumes another's output).

    No NesTools test case has a one-call chain (the smallest are two independent calls), so the flat chains are
    classified as sets of calls with the shared pairing of :func:`classify_call_lists` (best pairing, worst pair; a
    gold call left unanswered is a wrong tool). Nested chains are left out: their placeholder values are scored
    structurally, which TL-Training's value comparison cannot express. The mapping follows NesTools' own rules so
    that each label agrees with what the official scorer checked:

    * the tool is the ``api_id`` (upstream pairs by id and never compares ``api_name``; 1 == 1.0 == True as in
      Python); an id that the prompt offered is a known tool (a *wrong tool* unless it is a gold id), any other id
      is a *tool hallucination*;
    * a predicted ``"UNK"`` for a gold parameter counts as absent (*parameter missing*), as the official error
      analysis counts it as an omission (``para_error_omission``);
    * values are compared with ``==`` and gold lists are plain values, not lists of alternatives. ``check_score``'s
      leniencies (a dict whose keys differ only in case, "_" or " " scores 1) need no special case: a content
      mismatch is TL's last rule, so it is the label exactly when no tool or parameter issue is found;
    * an output that decodes to no call at all (a format failure, or NesTools' well-formed empty list) is
      *unparseable*;
    * the chain is a sequence (the prompt asks for the calls "in sequence"), and TL-Training's reward compares the
      call at each step with the gold call of that step: when the official Order family is not exact
      (``order_exact`` false), some step holds another tool than the gold one, so the outcome is at best a *wrong
      tool* even if the calls are right as a set.
    """
    if predicted is None:
        return UNPARSEABLE, REWARDS[UNPARSEABLE]
    gold_ids = [call["api_id"] for call in gold]
    offered = [i for i in candidate_ids(case) if not any(_same_id(i, g) for g in gold_ids)]
    specs = {api["api_name"]: api for api in case.payload["api"]}
    # Parameters are compared only once the tool is right, so only the gold tools' signatures matter; every other
    # offered id is a known tool with no parameters listed.
    signatures = tool_signatures([{"name": _tl_tool_key(call["api_id"]),
                                   "parameters": {"properties": specs[call["api_name"]]["parameters"]}}
                                  for call in gold] + [{"name": _tl_tool_key(i)} for i in offered])
    calls = []
    for call in predicted:
        same_tool = [g for g in gold if _same_id(g["api_id"], call["api_id"])]
        if same_tool:
            key = _tl_tool_key(same_tool[0]["api_id"])
        else:
            key = next((_tl_tool_key(i) for i in offered if _same_id(i, call["api_id"])),
                       f"unoffered {call['api_id']!r}")
        arguments = {}
        for name, value in call["parameters"].items():
            # With a tool called twice, the first gold call of that id that has the parameter decides "UNK".
            reference = next((g["parameters"] for g in same_tool if name in g["parameters"]), None)
            if reference is not None and value == "UNK" and reference[name] != "UNK":
                continue
            arguments[name] = value
        calls.append({"name": key, "arguments": arguments})
    expected = [{"name": _tl_tool_key(call["api_id"]), "arguments": dict(call["parameters"])} for call in gold]
    outcome = classify_call_lists(calls, expected, signatures)
    if not order_exact and outcome.reward > REWARDS[WRONG_TOOL]:
        return WRONG_TOOL, REWARDS[WRONG_TOOL]
    if outcome.category == CORRECT:
        # Not reachable as far as we know (calls equal to the gold ones, in order, pass: ``check_score`` gives 1 to
        # equal values); kept so that a failed case never carries the "correct" label.
        return CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH]
    return outcome.category, outcome.reward


# --------------------------------------------------------------------------------------------------------------
# Benchmark protocol: aggregate (``eval.py``)
# --------------------------------------------------------------------------------------------------------------

FAMILY_NAMES = {"api": "Selection", "order": "Order", "param": "Parameter", "nest": "Nested-Param"}


def _sums(results: Iterable[CaseResult]) -> dict[str, float]:
    totals: dict[str, float] = Counter()
    for result in results:
        for key in ("all_num", "correct_format_num", "tree_acc") + COUNT_KEYS + ERROR_KEYS:
            totals[key] += result.counts.get(key, 0)
    return dict(totals)


def _family_metrics(totals: Mapping[str, float], prefix: str, group: str, with_nest: bool = True,
                    f1_only: bool = False) -> list[Metric]:
    """P/R/F1 per family (micro: sums first), Avg of the four F1s, Format and Tree accuracy.

    Upstream gives P = 0 when nothing was predicted and F1 = 0 when P + R = 0; R with no gold raises upstream, here
    it is None. QUIRK: for a depth-1-only view ``eval.py`` skips the nested family and prints no Average.
    ``f1_only`` keeps the views short (the paper's figures plot F1).
    """
    metrics: list[Metric] = []
    f1s: list[float | None] = []
    for family in FAMILIES:
        if family == "nest" and not with_nest:
            continue
        correct = totals.get(f"correct_{family}_num", 0)
        predicted = totals.get(f"predict_{family}_num", 0)
        gold = totals.get(f"gold_{family}_num", 0)
        precision = correct / predicted if predicted else 0.0
        recall = correct / gold if gold else None
        if recall is None:
            f1 = None
        else:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        f1s.append(f1)
        name = FAMILY_NAMES[family]
        if not f1_only:
            metrics += [
                Metric(f"{prefix}{name} P", precision, correct, predicted, group,
                       f"correct_{family}/predicted_{family}"),
                Metric(f"{prefix}{name} R", recall, correct, gold, group, f"correct_{family}/gold_{family}"),
            ]
        metrics.append(Metric(f"{prefix}{name} F1", f1, None, None, group, "2PR/(P+R), micro"))
    if with_nest:
        average = None if any(f is None for f in f1s) else sum(f1s) / len(f1s)
        metrics.append(Metric(f"{prefix}Avg", average, None, None, group if prefix else "aggregate",
                              "mean(F1 Selection, F1 Order, F1 Parameter, F1 Nested-Param)"))
    scored = totals.get("all_num", 0)
    metrics.append(Metric(f"{prefix}Format", totals.get("correct_format_num", 0) / scored if scored else None,
                          totals.get("correct_format_num", 0), scored, group if prefix else "aggregate",
                          "parsable outputs / scored cases"))
    metrics.append(Metric(f"{prefix}Tree", totals.get("tree_acc", 0) / scored if scored else None,
                          totals.get("tree_acc", 0), scored, group if prefix else "aggregate",
                          "cases with correct == predicted == gold in all four families / scored cases"))
    return metrics


def _depth_of(result: CaseResult) -> int | None:
    label = result.labels.get("depth") if result.labels else None
    if label is not None and str(label).isdigit():
        return int(label)
    return None


def _structure_of(result: CaseResult) -> str | None:
    return result.labels.get("structure") if result.labels else None


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    results = [r for r in results if r.counts]
    totals = _sums(results)
    metrics = _family_metrics(totals, "", "P/R/F1")
    for category in ("depth1", "depth2", "depth3plus"):
        members = [r for r in results if r.category == category]
        if members:
            passed = sum(1 for r in members if r.passed)
            metrics.append(Metric(category, passed / len(members), passed, len(members), "category",
                                  "Tree accuracy within the category"))
    # The upstream depth views (--target_depths 1 / 2 / 3 4 5).
    for label, depths in (("depth 1", {1}), ("depth 2", {2}), ("depth 3-5", {3, 4, 5})):
        members = [r for r in results if _depth_of(r) in depths]
        if members:
            metrics += _family_metrics(_sums(members), f"{label}: ", "depth", with_nest=depths != {1}, f1_only=True)
    # The structure views of the paper's Fig. 5 (--structure_key 0 / 2 / 3 / 7).
    for key in FIGURE_STRUCTURES:
        members = [r for r in results if _structure_of(r) == str(key)]
        if members:
            metrics += _family_metrics(_sums(members), f"structure {key}: ", "structure", f1_only=True)
    # TL-Training's categories and mean reward over the flat cases (the ones that carry a reward).
    metrics += tl_metrics([r for r in results if "tl_reward" in r.counts])
    return metrics


# --------------------------------------------------------------------------------------------------------------
# Replay of NesTools' own prediction files
# --------------------------------------------------------------------------------------------------------------


REPLAY_FILES = ("raw_response.jsonl", "new_response.jsonl")


def _replay_file(path: Path, outputs: ReplayOutputs) -> Path | None:
    """The prediction file to read: ``path`` itself, or the first of :data:`REPLAY_FILES` in that folder."""
    if path.is_dir():
        for name in REPLAY_FILES:
            if (path / name).is_file():
                return path / name
        outputs.error("no NesTools prediction file here: expected raw_response.jsonl or new_response.jsonl, as "
                      "inference.py writes them", path)
        return None
    if not path.exists():
        outputs.error("no such prediction file or folder", path)
        return None
    return path


def _replay_read(path: Path) -> tuple[ReplayOutputs, list[str]]:
    """The outputs and the test_ids of API failures (``"response": -1``), read once."""
    outputs = ReplayOutputs(duplicates="the first one counts (upstream eval.py would score every line)")
    dropped: list[str] = []
    source = _replay_file(Path(path), outputs)
    if source is None:
        return outputs, dropped
    parsed_only = source.name.startswith("new_response")
    schema, what = (NEW_RESPONSE_SCHEMA, "new_response.jsonl line") if parsed_only else \
        (RAW_RESPONSE_SCHEMA, "raw_response.jsonl line")

    def case_of(_position: int, text: str) -> str | None:
        found = leading_id(text, "test_id")
        return str(found) if isinstance(found, int) else None

    for _, number, row in json_lines(outputs, source, schema, what=what, case_of=case_of):
        case_id = str(row["test_id"])
        if parsed_only:
            parsed = row["lst_response"]
            try:
                text = "" if parsed == -1 else json.dumps(parsed, ensure_ascii=False)
            except (RecursionError, ValueError) as exc:
                outputs.bad_line(source, number, f"lst_response cannot be turned into text ({type(exc).__name__})",
                                 case_id)
                continue
            outputs.add(case_id, text, source, number)
        elif isinstance(row["response"], str):
            outputs.add(case_id, row["response"], source, number)
        elif case_id not in dropped:
            dropped.append(case_id)
    if dropped:
        shown = ", ".join(dropped[:10]) + (f" and {len(dropped) - 10} more" if len(dropped) > 10 else "")
        verb = "is an API failure" if len(dropped) == 1 else "are API failures"
        outputs.warning(f'{plural(len(dropped), "line")} {verb} ("response": -1), left out as eval.py leaves them '
                        f"out of every denominator: test_id {shown}", source)
    return outputs, dropped


def replay_outputs(path: Path) -> dict[str, str]:
    """{test_id: raw output} from ``inference.py``'s files (a file, or a folder holding them).

    ``raw_response.jsonl`` (what ``eval.py`` reads) is preferred. Lines with ``"response": -1`` (API failures) are
    left out, as ``eval.py`` drops them from every denominator; :func:`replay_dropped` lists them. From
    ``new_response.jsonl`` alone the parsed list is re-serialised as JSON, and ``-1`` (a parse failure there, as an
    API failure cannot be told apart) becomes an empty output, i.e. a format failure. test_ids are integers, as
    upstream writes and reads them. A repeated test_id keeps its first line, with a warning (upstream would score
    every line). Tolerant: the result is a :class:`~pytest_toolbench.replay_files.ReplayOutputs` whose ``problems``
    name each unusable line (file and line) while the other lines still count.
    """
    return _replay_read(Path(path))[0]


def replay_dropped(path: Path) -> list[str]:
    """The test_ids whose ``raw_response.jsonl`` line is an API failure (``"response": -1``), to report them."""
    return _replay_read(Path(path))[1]
