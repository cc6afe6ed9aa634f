"""Candidate lists: the official prompt file, or a deterministic offline rebuild; the ``api_id``s a prompt offers."""

from __future__ import annotations

import heapq
import json
import math
import random
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case
from .loading import PROMPT_SOURCE_OFFICIAL, load_test_data


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
    records, api_ids = load_test_data(data_dir)
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
    records, api_ids = load_test_data(data_dir)
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


def candidates_for(case: Case) -> list[dict[str, Any]]:
    """The candidate tool list shown to the model (rebuilt prompts only; official prompts carry it as text)."""
    if case.context is None:  # the data folder is the suite's, in its context (bound by the catalog or load_cases)
        raise KeyError(f"case {case.case_id}: no suite context, so no data folder to rebuild the candidates from")
    return rebuilt_candidates(case.context.data_dir, case.payload["test_id"])


def candidate_ids(case: Case) -> set[Any]:
    """The ``api_id``s offered in the case's prompt (to tell a distractor pick from a made-up id)."""
    payload = case.payload
    if payload.get("prompt_source") == PROMPT_SOURCE_OFFICIAL and "prompt" in payload:
        return {int(x) for x in _PROMPT_API_ID.findall(payload["prompt"])}
    try:
        return {c["api_id"] for c in candidates_for(case)}
    except (OSError, DataError, StopIteration, KeyError):
        return set(payload["api_ids"])
