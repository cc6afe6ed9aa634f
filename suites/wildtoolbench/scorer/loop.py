"""The step loop of one task (upstream ``BaseHandler.inference_and_eval_multi_step``) and the gold replies.

Upstream: yupeijei1997/WildToolBench @ 80a5f427fb26c9a14eb419ccb565675671650065,
``wild-tool-bench/wtb/model_handler/base_handler.py``. At step ``t`` (from 0) the model answers the messages so far
with the task's tools; only action *names* are judged here (arguments are checked offline, :mod:`.checker`):

* **tool calls**: their names, sorted, must equal the name list (sorted by name) of one candidate group at step ``t``
  of the paths still alive, tried in order; the first that matches is taken. The model's assistant message is
  appended, then one ``tool`` message per call: the *j*-th observation of the matched group (in name order) answers
  the model's *j*-th call id (in the model's order: upstream's pairing, kept), a non-string observation JSON-encoded.
  The alive paths are pruned to those whose step ``t`` is the matched group; ``t`` advances. No match: the task
  fails, "action name not in candidate_answer_function_list". Calls past the end of every path: "current step: t,
  idx_list is None".
* **text only** (non-empty content): the candidates at ``t`` are tried in order; the first holding
  ``ask_user_for_required_parameters`` appends the model's text and the scripted ``user_input`` and the loop goes on
  (``t`` advances, **no pruning**); the first holding ``prepare_to_answer`` ends the task action-correct. Neither:
  the task fails. The text itself is never judged.
* **empty** (no calls, no content): the task fails.

``is_optimal``: action-correct and finished at step ``min_length - 1``. The transcript is upstream's per-task result
record (``action_name_label``, ``is_optimal``, ``inference_log`` with ``step_<t>`` entries holding
``inference_output`` and ``inference_answer``), without the bulky ``inference_input``; ``wildtoolbench`` holds this
suite's own additions (the number of model turns, why it stopped).

Where upstream *raises* (text at a step past every gold node: KeyError; a clarification grouped with other nodes:
AssertionError; pruning while an alive path is already complete: IndexError), its whole dialogue would be lost as
"Error during inference"; here the one task fails with ``upstream raises: ...``.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping, Sequence

from pytest_toolbench.contract.suite import Case, Generation, Request
from .decoding import decode_turn
from .graph import ASK_USER, PREPARE, GraphError, PathLimitExceeded, PathTracker, ToolCallGraph
from .loading import settings
from .prompt import call_id

CORRECT = "correct"
ERROR = "error"
EMPTY_OUTPUT = "tool_calls and content are None or empty"
WRONG_ACTION = "action name not in candidate_answer_function_list"
UPSTREAM_RAISES = "upstream raises"


def _answer_actions(graph: ToolCallGraph, group: Sequence[int]) -> list[dict[str, Any]]:
    return [{"arguments": json.dumps(graph.nodes[node]["action"]["arguments"], ensure_ascii=False),
             "name": graph.names[node]} for node in graph.sorted_group(group)]


def _candidate(graph: ToolCallGraph, group: Sequence[int], with_texts: bool) -> dict[str, Any]:
    """Upstream's ``candidate_<i>_answer_function_list`` entry for a group."""
    entry: dict[str, Any] = {"action": _answer_actions(graph, group)}
    if with_texts:
        for node in graph.sorted_group(group):
            if graph.names[node] == ASK_USER:
                entry["observation"] = graph.nodes[node].get("observation")
                entry["user_input"] = graph.nodes[node].get("user_input")
            elif graph.names[node] == PREPARE:
                entry["observation"] = graph.nodes[node].get("observation")
    return entry


def _all_candidates(graph: ToolCallGraph, groups: Sequence[Sequence[int]]) -> dict[str, Any]:
    return {f"candidate_{i}_answer_function_list": _candidate(graph, group, True) for i, group in enumerate(groups)}


def _transcript(label: str, optimal: bool, log: dict[str, Any], turns: int, stop: str) -> dict[str, Any]:
    return {"action_name_label": label, "is_optimal": optimal, "inference_log": log,
            "wildtoolbench": {"model_turns": turns, "stopped": stop}}


def failed_before_start(case: Case, why: str) -> dict[str, Any]:
    """The transcript of a task that cannot be run (its DAG exceeds the bound, its history cannot be built)."""
    log = {"task_idx": case.payload["task_idx"], "begin_of_current_task": {"role": "user",
                                                                           "content": case.payload["task"]}}
    transcript = _transcript(ERROR, False, log, 0, why)
    transcript["wildtoolbench"]["not_run"] = why
    return transcript


def request_for(case: Case, messages: Sequence[Mapping[str, Any]]) -> Request:
    return Request(messages=[dict(m) for m in messages], tools=case.payload["tools"])


def conversation(case: Case) -> Iterator[Request]:
    """Drive one task; yields Requests, receives Generations, returns the transcript."""
    payload = case.payload
    if payload.get("opening_error"):
        return failed_before_start(case, payload["opening_error"])
    try:
        graph = ToolCallGraph(payload["nodes"], settings(case)["max_graph_combinations"])
        min_length = graph.min_length
        tracker = graph.tracker()
    except (GraphError, PathLimitExceeded) as error:
        return failed_before_start(case, f"{type(error).__name__}: {error}")
    if min_length is None:
        return failed_before_start(case, "GraphError: the dependency lists form a cycle: no execution order exists")
    messages = [dict(m) for m in payload["opening"]]
    log: dict[str, Any] = {"task_idx": payload["task_idx"], "begin_of_current_task": messages[-1]}
    step = 0
    label = ERROR
    stop = ""
    while True:
        generation: Generation = yield request_for(case, messages)
        ids = [call_id(f"{case.case_id}/step{step}/call{i}") for i in range(8)]
        turn = decode_turn(generation, ids)
        output: dict[str, Any] = {"reasoning_content": None, "content": turn.content,
                                  "tool_calls": turn.calls}
        entry: dict[str, Any] = {"inference_output": output}
        log[f"step_{step}"] = entry
        try:
            outcome = _step(graph, tracker, step, turn, messages, entry)
        except PathLimitExceeded as error:
            output.update(current_action_name_label=ERROR, error_reason=f"{type(error).__name__}: {error}")
            stop = "path_limit"
            break
        if outcome == "continue":
            step += 1
            continue
        label = CORRECT if outcome == CORRECT else ERROR
        stop = outcome
        break
    optimal = label == CORRECT and step == min_length - 1
    return _transcript(label, optimal, log, step + 1, stop)


def _step(graph: ToolCallGraph, tracker: PathTracker, step: int, turn: Any, messages: list[dict[str, Any]],
          entry: dict[str, Any]) -> str:
    """One step of the loop; returns "continue", "correct" or an error word, filling ``entry`` as upstream."""
    output = entry["inference_output"]
    if turn.parse_error is not None:
        output.update(current_action_name_label=ERROR, error_reason=f"parse tool_calls failed, error: "
                                                                    f"{turn.parse_error}")
        return "format_error"
    if not turn.calls:
        if turn.content is None or turn.content == "":
            output.update(current_action_name_label=ERROR, error_reason=EMPTY_OUTPUT)
            return "empty_output"
        if step >= graph.n:
            output.update(current_action_name_label=ERROR,
                          error_reason=f"{UPSTREAM_RAISES}: KeyError: {step} (a text answer after the last gold step)")
            return "upstream_raises"
        candidates = tracker.candidates(step)
        for group in candidates:
            names = [graph.names[node] for node in graph.sorted_group(group)]
            if ASK_USER in names or PREPARE in names:
                if len(group) != 1:
                    output.update(current_action_name_label=ERROR,
                                  error_reason=f"{UPSTREAM_RAISES}: AssertionError (a clarification or answer "
                                               "grouped with other nodes)")
                    return "upstream_raises"
                messages.append({"role": "assistant", "content": turn.content})
                entry["inference_answer"] = {"candidate_0_answer_function_list": _candidate(graph, group, True)}
                output["current_action_name_label"] = CORRECT
                if ASK_USER in names:
                    messages.append({"role": "user", "content": graph.nodes[group[0]].get("user_input")})
                    return "continue"
                return CORRECT
        entry["inference_answer"] = _all_candidates(graph, candidates)
        if not candidates:
            del entry["inference_answer"]
        output.update(current_action_name_label=ERROR, error_reason=WRONG_ACTION)
        return "wrong_action"
    predicted = sorted(call["function"]["name"] for call in turn.calls)
    if step >= graph.n:
        output.update(current_action_name_label=ERROR, error_reason=f"current step: {step}, idx_list is None")
        return "extra_step"
    candidates = tracker.candidates(step)
    for group in candidates:
        if [graph.names[node] for node in graph.sorted_group(group)] != predicted:
            continue
        if tracker.alive_path_ends_by(step):
            output.update(current_action_name_label=ERROR,
                          error_reason=f"{UPSTREAM_RAISES}: IndexError (pruning step {step} while an alive path "
                                       "already ended)")
            return "upstream_raises"
        messages.append({"role": "assistant", "content": turn.content, "tool_calls": turn.calls})
        for j, node in enumerate(graph.sorted_group(group)):
            observation = graph.nodes[node].get("observation")
            if not isinstance(observation, str):
                observation = json.dumps(observation, ensure_ascii=False)
            messages.append({"role": "tool", "content": observation, "tool_call_id": turn.calls[j]["id"]})
        tracker.prune(step, tuple(group))
        entry["inference_answer"] = {"candidate_0_answer_function_list": _candidate(graph, group, False)}
        output["current_action_name_label"] = CORRECT
        return "continue"
    if candidates:
        entry["inference_answer"] = _all_candidates(graph, candidates)
    output.update(current_action_name_label=ERROR, error_reason=WRONG_ACTION)
    return "wrong_action"


# ---------------------------------------------------------------------------------------------------------------
# Gold


def gold_replies(case: Case) -> list[str]:
    """What a perfect model answers at each step: the first optimal path, one step per turn (calls as Hermes
    ``<tool_call>`` blocks in path order; a clarification or the answer as the gold text)."""
    path = case.payload.get("gold_path") or []
    nodes = case.payload["nodes"]
    replies = []
    for group in path:
        names = [nodes[i]["action"]["name"] for i in group]
        if names[0] in (ASK_USER, PREPARE):
            text = nodes[group[0]].get("observation")
            if not isinstance(text, str) or not text:
                text = json.dumps(text, ensure_ascii=False) if text not in (None, "") else "(gold answer)"
            replies.append(text)
            continue
        blocks = [json.dumps({"name": nodes[i]["action"]["name"], "arguments": nodes[i]["action"]["arguments"]},
                             ensure_ascii=False) for i in group]
        replies.append("".join(f"<tool_call>\n{block}\n</tool_call>\n" for block in blocks).rstrip("\n"))
    return replies


def gold_reply(case: Case, step: int, request: Request | None = None) -> str:
    replies = gold_replies(case)
    return replies[step] if step < len(replies) else ""


def run_with(case: Case, reply) -> dict[str, Any]:
    """Drive :func:`conversation` with ``reply(step, request) -> Generation``; the transcript."""
    driver = conversation(case)
    step = 0
    try:
        request = next(driver)
        while True:
            request = driver.send(reply(step, request))
            step += 1
    except StopIteration as done:
        return done.value


def gold_transcript(case: Case) -> dict[str, Any]:
    return run_with(case, lambda step, request: Generation(text=gold_reply(case, step, request), finish_reason="stop"))
