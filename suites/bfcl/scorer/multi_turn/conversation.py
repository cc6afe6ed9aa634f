"""BFCL v4 multi-turn: cases, the conversation the model goes through, and the gold replies.

Follows bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``berkeley-function-call-leaderboard``):

- loading: ``bfcl_eval/utils.py::populate_test_cases_with_predefined_functions`` (the docs of every involved class in
  ``involved_classes`` order; in miss_func the first doc of each held-out name moves to its turn's holdout list) and
  ``add_language_specific_hint_to_function_doc`` (offered docs only; held-out docs never get the hint).
- the conversation: ``model_handler/base_handler.py::inference_multi_turn_prompting`` for a prompting model and
  ``inference_multi_turn_FC`` for a model answering natively (``tools=``):
  the BFCL system prompt built from the offered docs (prompting only; FC handlers send none); one user message per
  turn; at a holdout turn the prompting model gets ``str(docs) + "\\n" + sentence`` as the user message while the
  system prompt stays as it was, the FC model gets the docs added to its tools and the bare sentence; the step loop
  (query; the reply is recorded; a reply that does not decode, or decodes to no call, ends the turn; the calls run
  in order on the conversation's simulator instances, one tool message each; after the 21st executing step
  (``MAXIMUM_STEP_LIMIT = 20``) the entry is force-quit and no later turn runs); the step loop is ``dialogue.py``.
- the transcript is upstream's ``result`` (turns -> steps -> raw text, or ``[{name: "<arguments JSON>"}]`` for a
  natively answering model), wrapped as ``{"mode": "prompting" | "fc", "result": ...}`` so the checker decodes each
  step as the handler that produced it would.

A conversation starts without knowing the run's mode: its first request carries both the prompting messages and
``native_messages`` (the backend picks), and the first reply tells which one answered (a native backend always sets
``tool_calls`` or ``parse_error``).
"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path
from typing import Any, Iterator, Mapping

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError, ToolbenchError
from pytest_toolbench.contract.suite import NOT_SCORED, Case, Generation, Request, Verdict
from pytest_toolbench.scorer_lib.bfcl_handlers import handlers as bfcl_handlers
from ..categories import MULTI_TURN
from ..handler_path import step_decoder
from ..prompt import hinted_functions, native_tools, system_prompt
from .checker import check_multi_turn
from .dialogue import Dialogue, holdout_tools
from .executor import decode_fc_step, decode_prompting_step, execute_calls
from .simulators import new_instances as simulator_instances, simulator_classes


#: ``constants/default_prompts.py``: ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC`` (the FC holdout message) and
#: ``..._PROMPTING`` (``"{functions}\n"`` + the same sentence).
HOLDOUT_SENTENCE = "I have updated some more functions you can choose from. What about now?"

#: ``constants/executable_backend_config.py``: class -> doc file under ``multi_turn_func_doc/``.
CLASS_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}

ENTRY_SCHEMA = {
    "type": "object",
    "required": ["id", "question", "initial_config", "involved_classes"],
    "properties": {
        "id": {"type": "string"},
        "question": {"type": "array", "minItems": 1, "items": {"type": "array", "items": {
            "type": "object", "required": ["role", "content"],
            "properties": {"role": {"type": "string"}, "content": {"type": "string"}}}}},
        "initial_config": {"type": "object"},
        "involved_classes": {"type": "array", "minItems": 1,
                             "items": {"type": "string", "enum": sorted(CLASS_DOC_FILES)}},
        "missed_function": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    },
}
GROUND_TRUTH_SCHEMA = {
    "type": "object",
    "required": ["id", "ground_truth"],
    "properties": {
        "id": {"type": "string"},
        "ground_truth": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    },
}
DOC_SCHEMA = {
    "type": "object",
    "required": ["name", "description", "parameters"],
    "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                   "parameters": {"type": "object", "required": ["properties"]}},
}


def load_class_docs(data_dir: Path, classes: Any) -> dict[str, list[dict]]:
    """The function docs of each class, as ``multi_turn_func_doc/`` lists them (one JSON object per line)."""
    docs = {}
    for name in classes:
        docs[name] = load_jsonl(Path(data_dir) / "multi_turn_func_doc" / CLASS_DOC_FILES[name], DOC_SCHEMA)
    return docs


def load_multi_turn_cases(data_dir: Path, categories: list[str]) -> list[Case]:
    data_dir = Path(data_dir)
    cases: list[Case] = []
    docs: dict[str, list[dict]] | None = None
    for category in categories:
        prompt_file = data_dir / f"BFCL_v4_{category}.json"
        if not prompt_file.is_file():
            continue
        if docs is None:
            docs = load_class_docs(data_dir, [c for c in CLASS_DOC_FILES if not c.startswith(("Memory", "WebSearch"))])
        entries = load_jsonl(prompt_file, ENTRY_SCHEMA)
        answer_file = data_dir / "possible_answer" / prompt_file.name
        answers = load_jsonl(answer_file, GROUND_TRUTH_SCHEMA)
        if len(answers) != len(entries):
            raise DataError(answer_file, f"{len(answers)} answers for {len(entries)} entries")
        for index, (entry, answer) in enumerate(zip(entries, answers)):
            if len(answer["ground_truth"]) != len(entry["question"]):
                raise DataError(answer_file, f"line {index + 1}: {len(answer['ground_truth'])} ground-truth turns "
                                             f"for {len(entry['question'])} question turns ({entry['id']})")
            offered, holdout = _offered_and_held_out(entry, docs)
            cases.append(Case(
                case_id=entry["id"],
                category=category,
                payload={
                    "id": entry["id"],
                    "index": index,
                    "question": entry["question"],
                    "initial_config": entry["initial_config"],
                    "involved_classes": entry["involved_classes"],
                    "function": offered,
                    "holdout": holdout,
                    "ground_truth": answer["ground_truth"],
                },
                keywords=("multi_turn", "python"),
            ))
    return cases


def _offered_and_held_out(entry: Mapping[str, Any], docs: Mapping[str, list[dict]]) -> tuple[list, dict]:
    offered = [doc for name in entry["involved_classes"] for doc in docs[name]]
    holdout: dict[str, list[dict]] = {}
    for turn, names in (entry.get("missed_function") or {}).items():
        holdout[turn] = []
        for name in names:
            for position, doc in enumerate(offered):
                if doc["name"] == name:
                    holdout[turn].append(offered.pop(position))
                    break
    return offered, holdout


# -- the conversation -------------------------------------------------------------------------------------------------

def conversation(case: Case) -> Iterator[Request]:
    """The §6.4 loop for one multi-turn entry (see the module docstring). Yields requests, receives generations,
    returns ``{"mode", "result"}``."""
    payload = case.payload
    instances: dict[str, Any] = {}

    def execute(calls: list[str]) -> list[str]:
        if not instances:  # built on the first call: a conversation without calls never needs the classes
            instances.update(new_instances(case))
        return execute_calls(calls, instances, entry_id=payload["id"])

    offered = payload["function"]
    hinted = hinted_functions(offered, case.category)
    dialogue = Dialogue(payload["question"][0], system_prompt(hinted), native_tools(offered, case.category),
                        functions=hinted)
    result: list[list[Any]] = []
    for turn, turn_messages in enumerate(payload["question"]):
        held_out = payload["holdout"].get(str(turn))
        if turn > 0 and held_out is not None:
            if dialogue.native is not False:
                dialogue.tools = dialogue.tools + holdout_tools(held_out)
            dialogue.add_user({"role": "user", "content": f"{held_out}\n{HOLDOUT_SENTENCE}"},
                              {"role": "user", "content": HOLDOUT_SENTENCE})
        elif turn > 0:
            for message in turn_messages:
                dialogue.add_user(message)
        steps, force_quit = yield from dialogue.turn(execute)
        result.append(steps)
        if force_quit:
            break
    return transcript(dialogue.mode, result, dialogue.handler)


def transcript(mode: str, result: Any, handler: str | None) -> dict[str, Any]:
    """The finished output: ``{"mode", "result"}``, plus ``"handler"`` when a BFCL row's handler rendered the
    conversation (its steps are that handler's recorded answers, decoded by its ``decode_execute``)."""
    return {"mode": mode, "result": result, **({"handler": handler} if handler else {})}


def new_instances(case: Case) -> dict[str, Any]:
    payload = case.payload
    return simulator_instances(payload["involved_classes"], payload["initial_config"], case.category, data_dirs(case))


def data_dirs(case: Case) -> list[str]:
    """The suite's data folder in this run (its context), beside which the simulator wheel is looked for first
    (``<data root>/bfcl-eval/``, see simulators.py); none for a case bound to no context."""
    return [str(case.context.data_dir)] if case.context is not None else []


# -- gold -------------------------------------------------------------------------------------------------------------

def _turn_of(request: Request) -> tuple[int, bool]:
    """(turn index, whether this is the turn's first step), read from the request: one user message per turn."""
    messages = list(request.messages)
    turn = sum(1 for m in messages if m.get("role") == "user") - 1
    return turn, bool(messages) and messages[-1].get("role") == "user"


def gold_reply(case: Case, step: int, request: Request) -> str:
    """The reference reply for one step: the turn's ground-truth calls with keyword arguments on the turn's first
    step (upstream's own decoder drops positional arguments), then an empty reply that ends the turn. A turn with
    no ground truth (miss_param's "should ask" turn, the turn before a holdout) gets a plain-text reply."""
    turn, first = _turn_of(request)
    if not first:
        return ""
    calls = case.payload["ground_truth"][turn]
    if not calls:
        return "I need more information to do that."
    return "[" + ", ".join(keyword_call(call, case.payload["involved_classes"], data_dirs(case))
                           for call in calls) + "]"


def keyword_call(call: str, involved_classes: list[str], near: list[str] = ()) -> str:
    """A ground-truth call string with every positional argument named after the method's parameter."""
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call) or not node.args:
        return call
    name = ast.unparse(node.func)
    parameters = _parameters(name.rsplit(".", 1)[-1], involved_classes, near)
    arguments = [f"{parameter}={ast.unparse(value)}" for parameter, value in zip(parameters, node.args)]
    arguments += [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords]
    return f"{name}({', '.join(arguments)})"


def _parameters(method: str, involved_classes: list[str], near: list[str]) -> list[str]:
    for name, cls in simulator_classes(near).items():
        if name in involved_classes and callable(getattr(cls, method, None)):
            return [p for p in inspect.signature(getattr(cls, method)).parameters if p != "self"]
    raise ValueError(f"no involved class has a method {method!r}")


def gold_transcript(case: Case) -> str:
    """The transcript a perfect prompting model leaves (used where a finished output is needed)."""
    result = []
    for turn, calls in enumerate(case.payload["ground_truth"]):
        if calls:
            result.append(["[" + ", ".join(keyword_call(c, case.payload["involved_classes"], data_dirs(case))
                                           for c in calls) + "]",
                           ""])
        else:
            result.append(["I need more information to do that."])
    return json.dumps({"mode": "prompting", "result": result})


def transcript_of(output: str) -> tuple[str, Any]:
    """(mode, result) of a finished output: ours (``{"mode", "result"}``: a live conversation, whose mode is the
    backend's, or a replayed record, whose mode is its file's, see :mod:`..replay`) or a bare upstream ``result``,
    which alone cannot say its mode: FC when it holds a structured step."""
    try:
        data = json.loads(output)
    except (ValueError, RecursionError):
        return "prompting", output
    if isinstance(data, dict) and set(data) - {"handler"} == {"mode", "result"} and data["mode"] in ("prompting",
                                                                                                    "fc"):
        return data["mode"], data["result"]
    return ("fc" if _has_fc_step(data) else "prompting"), data


def transcript_handler(output: str) -> str | None:
    """The BFCL handler class a finished output names (:func:`transcript`), when it is one reproduced here."""
    try:
        data = json.loads(output)
    except (ValueError, RecursionError):
        return None
    handler = data.get("handler") if isinstance(data, dict) else None
    return handler if isinstance(handler, str) and handler in bfcl_handlers.HANDLERS else None


def _has_fc_step(result: Any) -> bool:
    if not isinstance(result, list):
        return False
    return any(isinstance(turn, list) and any(isinstance(step, list) for step in turn) for turn in result)


__all__ = ["MULTI_TURN", "load_multi_turn_cases", "conversation", "gold_reply", "gold_transcript", "transcript_of"]


# -- scoring ----------------------------------------------------------------------------------------------------------

def score(case: Case, generation: Generation) -> Verdict:
    """The official multi-turn checker on the transcript (ours or a replayed ``result``), each step decoded as the
    handler that produced it would (prompting text or FC calls)."""

    mode, result = transcript_of(generation.text or "")
    handler = transcript_handler(generation.text or "")
    decode = (step_decoder(handler) if handler else
              decode_fc_step if mode == "fc" else decode_prompting_step)
    try:
        verdict = check_multi_turn(case.payload, result, decode_step=decode, category=case.category,
                                   wheel_near=data_dirs(case))
    except ToolbenchError as error:  # the simulator classes cannot be had (no wheel, no network)
        return Verdict(passed=False, error_type=NOT_SCORED, explanation=str(error),
                       counts={"correct": 0.0}, labels={"outcome": NOT_SCORED, "mode": mode})
    verdict.labels["mode"] = mode
    return verdict
