"""WildToolBench: every metric rule pinned with hand-made model outputs, read off the pinned upstream code
(yupeijei1997/WildToolBench @ 80a5f427fb26c9a14eb419ccb565675671650065, ``wild-tool-bench/wtb/``): path enumeration
(``tool_call_graph.py``), the step loop and the history (``model_handler/base_handler.py``), the argument checker
(``checker_utils.py``, with ``rouge==1.0.1``), the offline walk and the metrics (``eval_runner.py``), replay of the
runner's result files. Each test names the upstream rule it pins."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from itertools import combinations

import pytest

from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import FORMAT_ERROR, CaseResult, Generation, SuiteContext
from conftest import REPO

from shipped import scorer

SUITE_DIR = REPO / "suites" / "wildtoolbench"
SAMPLES = SUITE_DIR / "samples"
wtb = scorer("wildtoolbench")
graph_mod = scorer("wildtoolbench", "graph")
loop = scorer("wildtoolbench", "loop")
loading = scorer("wildtoolbench", "loading")
prompt = scorer("wildtoolbench", "prompt")
arguments = scorer("wildtoolbench", "arguments")
rouge = scorer("wildtoolbench", "rouge")
checker = scorer("wildtoolbench", "checker")
replay = scorer("wildtoolbench", "replay")


@pytest.fixture(scope="module")
def definition() -> dict:
    return dict(load_definition(SUITE_DIR / "suite.yaml").raw)


@pytest.fixture(scope="module")
def cases(definition) -> dict:
    return {case.case_id: case for case in wtb.load_cases(SuiteContext(SAMPLES, definition))}


def node(name, args=None, deps=(), observation="obs", **extra):
    return {"action": {"name": name, "arguments": args or {}}, "observation": observation,
            "dependency_list": list(deps), **extra}


def calls(*pairs):
    """A native-mode Generation with the given (name, arguments) calls."""
    return Generation(text="", tool_calls=[{"name": name, "arguments": args} for name, args in pairs])


def text(content):
    return Generation(text=content)


def drive(case, generations):
    """Run the step loop with scripted generations; returns (transcript, requests seen)."""
    seen = []

    def reply(step, request):
        seen.append(request)
        return generations[step]

    return loop.run_with(case, reply), seen


def verdict_of(case, transcript):
    return wtb.score(case, Generation(text=json.dumps(transcript)))


def gold_args(case, index):
    return case.payload["nodes"][index]["action"]["arguments"]


# ------------------------------------------------------------------------------------------------------------------
# Loading, tools, history (base_handler: convert_to_tool, _pre_messages_processing, _add_action_observation)


def test_samples_one_case_per_task_with_upstream_ids_and_markers(cases):
    assert len(cases) == 12  # 3 hand-made dialogues x 4 tasks
    case = cases["wild_tool_bench_0-task1"]
    assert case.category == "parallel_multi_tool"
    assert case.keywords == ("multi_tool", "layer1", "coreferential_reference")
    assert cases["wild_tool_bench_0-task0"].keywords == ("layer0", "first_turn")
    assert {c.category for c in cases.values()} == {"single_tool", "parallel_multi_tool", "sequential_multi_tool",
                                                    "mixed_multi_tool", "clarify", "chat"}


def test_float_type_becomes_number_in_the_request_tools(cases):
    # convert_to_tool: '"type": "float"' -> '"type": "number"' on the JSON text
    case = cases["wild_tool_bench_1-task1"]
    request = wtb.build_request(case)
    schema = next(t for t in request.tools if t["function"]["name"] == "convertCurrency")["function"]["parameters"]
    assert schema["properties"]["amount"]["type"] == "number"
    assert '"type": "float"' not in json.dumps(request.tools)
    assert prompt.convert_tools([{"a": {"type": "float"}, "b": "x \"type\": \"float\""}]) == \
        [{"a": {"type": "number"}, "b": "x \"type\": \"float\""}]  # a string value is escaped, untouched


def test_history_is_the_gold_trajectory_along_the_first_optimal_path(cases):
    # _pre_messages_processing: system "Current Date: <env>", then per earlier task its user message, the gold calls
    # (content "", arguments as JSON text), one tool message per call with json.dumps(observation), the gold answer
    case = cases["wild_tool_bench_0-task2"]
    messages = wtb.build_request(case).messages
    assert messages[0] == {"role": "system", "content": "Current Date: 2024-07-11 22:11:58 Thursday"}
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant",  # task 0
                     "user", "assistant", "tool", "tool", "assistant",  # task 1: ONE parallel step (optimal path)
                     "user"]
    parallel = messages[6]
    assert parallel["content"] == "" and [c["function"]["name"] for c in parallel["tool_calls"]] == \
        ["getCityForecast", "getCityForecast"]
    assert json.loads(parallel["tool_calls"][0]["function"]["arguments"])["city"] == "Las Vegas"
    for call, tool_message in zip(parallel["tool_calls"], messages[7:9]):
        assert re.fullmatch(r"toolu_bdrk_[A-Za-z0-9]{24}", call["id"])
        assert tool_message["tool_call_id"] == call["id"]
    assert json.loads(messages[7]["content"])["response"]["forecast"][0]["weather"] == "Sunny"
    assert messages[9]["content"].startswith("Las Vegas will be sunny")
    assert messages[-1] == {"role": "user", "content": case.payload["task"]}
    # the same prompt every time (deterministic ids): cacheable
    assert wtb.build_request(case) == wtb.build_request(cases["wild_tool_bench_0-task2"])


def test_history_json_quotes_string_observations_and_keeps_clarifications():
    # _convert_to_tool_calls: tool content = json.dumps(content), so a string observation is quoted; a clarification
    # is the gold question (assistant) and the scripted user_input (user)
    nodes = [node("ask_user_for_required_parameters", observation="Which city?", user_input="Rome"),
             node("f", {"city": "Rome"}, [0], observation="sunny"), node("prepare_to_answer", deps=[1],
                                                                          observation="It is sunny.")]
    trajectory = prompt.task_trajectory("weather?", nodes, [[0], [1], [2]])
    messages = prompt.opening_messages("today", [trajectory], "next", "seed")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "tool", "assistant",
                                             "user"]
    assert messages[2]["content"] == "Which city?" and messages[3]["content"] == "Rome"
    assert messages[5]["content"] == '"sunny"'


def test_ap_denominator_reads_the_other_language_answer_list(definition):
    # calc_accuracy: total_step = len(test_entry["answer_list"][i]) (not english_answer_list)
    record = json.loads((SAMPLES / "Wild-Tool-Bench.jsonl").read_text().splitlines()[1])
    record["answer_list"][0] = record["answer_list"][0] + [{"extra": True}]
    built = loading.dialogue_cases(record, {"language": "en", "max_graph_combinations": 100000})
    assert built[0].payload["ap_total"] == 4 and len(built[0].payload["nodes"]) == 3


def test_loader_rejects_malformed_lines_and_unknown_language(tmp_path, definition):
    (tmp_path / "Wild-Tool-Bench.jsonl").write_text(json.dumps({"id": "wild_tool_bench_0"}) + "\n")
    with pytest.raises(DataError) as error:
        wtb.load_cases(SuiteContext(tmp_path, definition))
    assert "Wild-Tool-Bench.jsonl:1" in str(error.value) and "english_env_info" in str(error.value)
    from shipped import option_refusal

    assert "wildtoolbench.language=\"zh\": not accepted: wildtoolbench.language must be one of en" in \
        option_refusal("wildtoolbench", language="zh")
    assert "wildtoolbench.max_graph_combinations=" in option_refusal("wildtoolbench", max_graph_combinations=0)


# ------------------------------------------------------------------------------------------------------------------
# Path enumeration (tool_call_graph.ToolCallGraph.dfs / split_path / init_step_to_answer)


def paths_of(nodes):
    """Every path as upstream lists it (brute force over the lazy graph's branches)."""
    graph = graph_mod.ToolCallGraph(nodes)
    found = []

    def walk(state, prefix):
        if state == graph.full:
            found.append([list(g) for g in prefix])
            return
        for steps, next_state in graph.children(state):
            walk(next_state, prefix + list(steps))

    walk(0, [])
    return found


def test_same_name_run_is_either_one_parallel_step_or_sequential_in_index_order():
    # dfs: ready [0:A, 1:A]; (0,) expands to the whole run one node per step; (1,) is a name repeat; (0, 1) kept
    nodes = [node("A"), node("A"), node("prepare_to_answer", deps=[0, 1])]
    assert paths_of(nodes) == [[[0], [1], [2]], [[0, 1], [2]]]
    graph = graph_mod.ToolCallGraph(nodes)
    assert graph.min_length == 2 and graph.first_optimal_path() == [(0, 1), (2,)]


def test_name_deduplication_drops_later_same_named_starts():
    # dfs: ready [0:A, 1:B, 2:A]; (2,) repeats "A" and is dropped, (1, 2) "B|A" kept, (0, 2) "A|A" kept
    nodes = [node("A"), node("B"), node("A"), node("prepare_to_answer", deps=[0, 1, 2])]
    first_steps = [p[0] for p in paths_of(nodes)]
    assert [2] not in first_steps
    assert first_steps.count([0]) > 0 and [1, 2] in first_steps and [0, 2] in first_steps and [0, 1, 2] in first_steps
    assert graph_mod.ToolCallGraph(nodes).min_length == 2


def test_distinct_parallel_calls_give_every_ordered_grouping():
    # three independent distinct calls: the ordered set partitions (Fubini number 13), each followed by the answer
    nodes = [node("A"), node("B"), node("C"), node("prepare_to_answer", deps=[0, 1, 2])]
    paths = paths_of(nodes)
    assert len(paths) == 13 and paths[0] == [[0], [1], [2], [3]]
    assert min(len(p) for p in paths) == 2 == graph_mod.ToolCallGraph(nodes).min_length


def test_candidates_follow_path_order_and_pruning(cases):
    # init_step_to_answer + update_updating_all_path_list: the candidates at a step are the groups of the alive paths
    graph = graph_mod.ToolCallGraph([node("A"), node("B"), node("prepare_to_answer", deps=[0, 1])])
    tracker = graph.tracker()
    assert tracker.candidates(0) == [(0,), (1,), (0, 1)]
    tracker.prune(0, (1,))
    assert tracker.candidates(1) == [(0,)]
    assert tracker.candidates(2) == [(2,)]


def _brute_paths(nodes):
    """An independent materialising port of upstream's dfs (lists of paths, deep copies), for the differential."""
    names = [n["action"]["name"] for n in nodes]
    count = len(nodes)
    successors = [[] for _ in range(count)]
    degree0 = [0] * count
    for i, n in enumerate(nodes):
        for d in n["dependency_list"]:
            successors[d].append(i)
            degree0[i] += 1
    out = []

    def dfs(degree, visited, path):
        if sum(len(p) for p in path) == count:
            out.append(path)
            return
        ready = [v for v in range(count) if degree[v] == 0 and not visited[v]]
        runs = []
        for i, v in enumerate(ready):
            if i == 0 or names[v] != names[ready[i - 1]]:
                runs.append([v])
            else:
                runs[-1].append(v)
        need, whole = [], []
        for run in runs:
            if len(run) > 1:
                for r in range(1, len(run)):
                    need.extend(combinations(run, r))
                whole.append(tuple(run))
        seen, final = set(), []
        for r in range(1, len(ready) + 1):
            for comb in combinations(ready, r):
                key = "|".join(names[c] for c in comb)
                if key in seen:
                    continue
                seen.add(key)
                if r > 1:
                    prefixes = [comb[:i + 1] for i in range(r)]
                    drop = comb in need or any(p in need for p in prefixes)
                    if any(p in whole for p in prefixes):
                        drop = False
                    if drop:
                        continue
                final.append(comb)
        for comb in final:
            steps = [list(comb)]
            if len(comb) == 1:
                for w in whole:
                    if comb[0] == w[0]:
                        steps = [[x] for x in w]
                        break
            new_degree, new_visited = list(degree), list(visited)
            for group in steps:
                for v in group:
                    new_visited[v] = True
                    for s in successors[v]:
                        new_degree[s] -= 1
            dfs(new_degree, new_visited, path + steps)

    dfs(degree0, [False] * count, [])
    return out


def test_lazy_enumeration_equals_materialised_paths_on_random_dags():
    # differential: min_length, optimal_path_list[0], step candidates under random pruning, the IndexError case
    rng = random.Random(20260405)
    checked = 0
    for _ in range(300):
        count = rng.randint(1, 6)
        nodes = []
        for i in range(count):
            deps = sorted(rng.sample(range(i), rng.randint(0, min(i, 2)))) if rng.random() < 0.6 else []
            nodes.append(node(rng.choice("ABC") if i < count - 1 else "prepare_to_answer", deps=deps))
        paths = _brute_paths(nodes)
        graph = graph_mod.ToolCallGraph(nodes)
        shortest = min(len(p) for p in paths)
        assert graph.min_length == shortest
        assert [list(g) for g in graph.first_optimal_path()] == next(p for p in paths if len(p) == shortest)
        alive, tracker = list(paths), graph.tracker()
        for step in range(count):
            expected = []
            for p in alive:
                if len(p) > step and p[step] not in expected:
                    expected.append(p[step])
            assert [list(g) for g in tracker.candidates(step)] == expected
            if not expected:
                break
            checked += 1
            choice = rng.choice(expected)
            if rng.random() < 0.3:
                continue  # a clarification step: no pruning
            ends = any(len(p) <= step for p in alive)
            assert tracker.alive_path_ends_by(step) == ends
            if ends:
                break
            alive = [p for p in alive if p[step] == choice]
            tracker.prune(step, tuple(choice))
    assert checked > 300


def test_wide_dag_fails_fast_with_a_bound_never_hangs():
    nodes = [node(f"f{i}") for i in range(30)] + [node("prepare_to_answer", deps=list(range(30)))]
    started = time.perf_counter()
    with pytest.raises(graph_mod.PathLimitExceeded, match="max_graph_combinations"):
        graph_mod.ToolCallGraph(nodes, max_combinations=100_000).min_length
    assert time.perf_counter() - started < 10


def test_bound_exceeded_is_a_clear_failure_verdict(definition):
    options = {**definition["options"], "max_graph_combinations": 10}
    small = {c.case_id: c for c in wtb.load_cases(SuiteContext(SAMPLES, {**definition, "options": options}))}
    case = small["wild_tool_bench_2-task1"]  # three distinct parallel calls
    transcript, seen = drive(case, [])
    assert seen == []  # nothing is asked of the model
    verdict = verdict_of(case, transcript)
    assert not verdict.passed and verdict.error_type == "path_limit" and "max_graph_combinations" in \
        verdict.explanation
    later = verdict_of(small["wild_tool_bench_2-task2"], drive(small["wild_tool_bench_2-task2"], [])[0])
    assert later.error_type == "data_defect" and "history" in later.explanation


def test_dependency_out_of_range_and_cycles_are_graph_errors():
    with pytest.raises(graph_mod.GraphError):
        graph_mod.ToolCallGraph([node("A", deps=[3])])
    cyclic = graph_mod.ToolCallGraph([node("A", deps=[1]), node("B", deps=[0])])
    assert cyclic.min_length is None


# ------------------------------------------------------------------------------------------------------------------
# The step loop (base_handler.inference_and_eval_multi_step)


def test_parallel_calls_in_one_turn_in_any_order_are_optimal(cases):
    case = cases["wild_tool_bench_0-task1"]
    transcript, _ = drive(case, [calls(("getCityForecast", gold_args(case, 1)), ("getCityForecast", gold_args(case, 0))),
                                 text("Here you go.")])
    verdict = verdict_of(case, transcript)
    assert verdict.passed and verdict.counts["optimal"] == 1 and verdict.counts["model_turns"] == 2


def test_sequential_execution_of_a_parallel_task_is_correct_but_not_optimal(cases):
    # is_optimal = step == min_length - 1
    case = cases["wild_tool_bench_0-task1"]
    transcript, _ = drive(case, [calls(("getCityForecast", gold_args(case, 0))),
                                 calls(("getCityForecast", gold_args(case, 1))), text("Done.")])
    verdict = verdict_of(case, transcript)
    assert verdict.passed and verdict.counts["optimal"] == 0


def test_same_named_calls_one_by_one_must_follow_index_order(cases):
    # the sequential path of a same-name run is [0], [1]: the first call is matched to node 0 (Las Vegas) by name,
    # so calling Miami first fails the offline argument check (and gets Las Vegas' observation meanwhile)
    case = cases["wild_tool_bench_0-task1"]
    transcript, seen = drive(case, [calls(("getCityForecast", gold_args(case, 1))),
                                    calls(("getCityForecast", gold_args(case, 0))), text("Done.")])
    assert transcript["action_name_label"] == "correct"
    assert "Sunny" in seen[1].messages[-1]["content"]  # Las Vegas' recorded forecast answers the Miami call
    verdict = verdict_of(case, transcript)
    assert not verdict.passed and verdict.error_type == "argument_match"
    assert "step_0" in verdict.explanation and "'city'" in verdict.explanation
    assert "expected Las Vegas, got Miami" in verdict.explanation


def test_wrong_names_extra_calls_text_and_empty_output_fail(cases):
    case = cases["wild_tool_bench_0-task1"]
    args = gold_args(case, 0)
    wrong, _ = drive(case, [calls(("getRealtimeCity", {"city": "Las Vegas"}))])
    assert verdict_of(case, wrong).error_type == "wrong_action"
    assert "action name not in candidate_answer_function_list" in verdict_of(case, wrong).explanation
    extra, _ = drive(case, [calls(("getCityForecast", args), ("getCityForecast", args), ("getCityForecast", args))])
    assert verdict_of(case, extra).error_type == "wrong_action"
    early, _ = drive(case, [text("I think it will be sunny.")])  # text where only tool groups are candidates
    assert verdict_of(case, early).error_type == "wrong_action"
    empty, _ = drive(case, [text("")])
    assert verdict_of(case, empty).error_type == "empty_output"
    garbled, _ = drive(case, [Generation(text="<tool_call>{not json</tool_call>")])
    assert verdict_of(case, garbled).error_type == FORMAT_ERROR
    native_error, _ = drive(case, [Generation(text="", parse_error="arguments are not JSON")])
    assert verdict_of(case, native_error).error_type == FORMAT_ERROR
    after_end, _ = drive(cases["wild_tool_bench_0-task3"], [calls(("getRealtimeCity", {"city": "Chicago"}))])
    assert verdict_of(cases["wild_tool_bench_0-task3"], after_end).error_type == "wrong_action"


def test_whitespace_only_text_is_an_answer(cases):
    # upstream tests content is None or content == "": whitespace is non-empty text
    case = cases["wild_tool_bench_0-task3"]
    assert verdict_of(case, drive(case, [text("  ")])[0]).passed


def test_clarify_text_gets_the_scripted_reply_and_continues(cases):
    # text where ask_user_for_required_parameters is a candidate: the model's own text, then user_input; no pruning
    case = cases["wild_tool_bench_0-task2"]
    transcript, seen = drive(case, [text("Which dates?"), calls(("getCityShow", gold_args(case, 1))),
                                    text("Cirque du Soleil.")])
    assert seen[1].messages[-2:] == [{"role": "assistant", "content": "Which dates?"},
                                     {"role": "user", "content": "Saturday only, please."}]
    verdict = verdict_of(case, transcript)
    assert verdict.passed and verdict.counts["model_turns"] == 3
    direct, _ = drive(case, [calls(("getCityShow", gold_args(case, 1)))])  # guessing the dates instead of asking
    assert verdict_of(case, direct).error_type == "wrong_action"


def synthetic_case(nodes, task_type="Clarify"):
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
             for name in ("A", "B")]
    record = {"id": "wild_tool_bench_9", "english_env_info": "today", "english_tools": tools,
              "english_tasks": ["do it"], "english_answer_list": [nodes], "english_task_types": [task_type],
              "english_turn_subtypes": []}
    return loading.dialogue_cases(record, {"language": "en", "max_graph_combinations": 100000})[0]


def test_a_clarification_step_does_not_prune_the_alive_paths():
    # text branch: no update_updating_all_path_list, so at the next step the paths that did A first are still alive
    # and their step-1 group is the clarification again: a second question also counts as a correct step
    case = synthetic_case([node("ask_user_for_required_parameters", observation="?", user_input="yes"), node("A"),
                           node("B", deps=[0]), node("prepare_to_answer", deps=[1, 2])])
    transcript, seen = drive(case, [text("first question"), text("second question"), calls(("A", {})),
                                    calls(("B", {})), text("done")])
    log = transcript["inference_log"]
    assert [log[f"step_{i}"]["inference_output"]["current_action_name_label"] for i in range(2)] == ["correct"] * 2
    assert [m["content"] for m in seen[2].messages if m["role"] == "user"][-2:] == ["yes", "yes"]


def test_chat_task_passes_on_any_text_and_fails_on_a_call(cases):
    case = cases["wild_tool_bench_2-task0"]
    assert verdict_of(case, drive(case, [text("Go to a museum!")])[0]).passed
    assert not verdict_of(case, drive(case, [calls(("getAttractions", {"city": "Lisbon"}))])[0]).passed


def test_tool_messages_pair_name_sorted_observations_with_the_models_call_order(cases):
    # observation j of the matched group (sorted by name) answers the model's j-th call id (the model's order)
    case = cases["wild_tool_bench_2-task1"]
    order = [("searchFlights", gold_args(case, 0)), ("searchHotels", gold_args(case, 1)),
             ("getAttractions", gold_args(case, 2))]
    transcript, seen = drive(case, [calls(*order), text("ok")])
    assistant, *tools = seen[1].messages[-4:]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["searchFlights", "searchHotels",
                                                                        "getAttractions"]
    assert tools[0]["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "Belem Tower" in tools[0]["content"]  # getAttractions' observation, first by name
    assert verdict_of(case, transcript).passed


def test_mixed_task_progress_and_text_output_mode(cases):
    # Hermes <tool_call> text (prompting mode / gold) is read like native calls
    case = cases["wild_tool_bench_1-task1"]
    replies = loop.gold_replies(case)
    assert replies[0].count("<tool_call>") == 2 and len(replies) == 3
    transcript, _ = drive(case, [text(r) for r in replies])
    verdict = verdict_of(case, transcript)
    assert verdict.passed and verdict.counts["optimal"] == 1
    assert verdict.counts["ap_steps"] == 3 and verdict.counts["ap_total"] == 4  # turns vs gold nodes


# ------------------------------------------------------------------------------------------------------------------
# The argument checker (checker_utils.ToolArgsChecker.check)

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object",
    "properties": {
        "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
        "e": {"type": "string", "enum": ["a", "b"]}, "any": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "untyped": {"description": "no type: a string"},
        "o": {"type": "object", "properties": {"k": {"type": "string"}, "m": {"type": "string", "enum": ["x"]}},
              "required": ["k"]},
        "open": {"type": "object", "properties": {}, "additionalProperties": True},
        "l": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["s"],
    "additionalProperties": True,  # not carried to the top level by upstream
}}}]


def check(predicted, gold):
    return arguments.ArgumentChecker().check(TOOLS, "f", json.dumps(predicted), json.dumps(gold))


@pytest.mark.parametrize("predicted, expected", [
    ({}, "error_schema: required args missing"),
    ({"s": "x", "zz": 1}, "error_schema: args not defined"),  # top-level additionalProperties is ignored
    # QUIRK: a property sits at path "<name>", not "", so its errors are the "nested" variants
    ({"s": 1}, "error_schema: nested args type inconsistent"),
    ({"s": "x", "i": 1.5}, "error_schema: nested args type inconsistent"),
    ({"s": "x", "e": "c"}, "error_schema: nested args value not in enum"),
    ({"s": "x", "any": 1.5}, "error_schema: nested args type inconsistent"),  # anyOf: the first branch's error
    ({"s": "x", "untyped": 3}, "error_schema: nested args type inconsistent"),
    ({"s": "x", "o": {}}, "error_schema: required nested args missing"),
    ({"s": "x", "o": {"k": "v", "q": 1}}, "error_schema: nested args not defined"),
    ({"s": "x", "o": {"k": 1}}, "error_schema: nested args type inconsistent"),
    ({"s": "x", "o": {"k": "v", "m": "y"}}, "error_schema: nested args value not in enum"),
    ({"s": "x", "l": [1, "2"]}, "error_schema: nested args type inconsistent"),
])
def test_schema_rules(predicted, expected):
    assert check(predicted, predicted) == expected


def test_root_that_is_not_an_object_is_the_plain_type_error():
    assert arguments.ArgumentChecker().check(TOOLS, "f", "[1]", "{}") == "error_schema: args type inconsistent"


def test_schema_passes_number_int_bool_as_integer_and_open_objects():
    assert check({"s": "x", "n": 3, "i": True, "open": {"anything": [1]}, "any": "v"},
                 {"s": "x", "n": 3, "i": True, "open": {"anything": [1]}, "any": "v"}) == "correct"
    assert arguments.ArgumentChecker().check(TOOLS, "f", "{not json", "{}") == "error: args invalid json format"


@pytest.mark.parametrize("predicted, gold, expected", [
    ({"s": "x", "n": 5}, {"s": "x", "n": 5.0}, "error_match: value type inconsistent at 'n'"),
    ({"s": "x", "i": True}, {"s": "x", "i": 1}, "error_match: value type inconsistent at 'i'"),
    ({"s": "x", "n": 2}, {"s": "x"}, "error_match: args keys mismatch (extra: ['n'])"),  # an optional extra fails
    ({"s": "x"}, {"s": "x", "n": 2}, "error_match: args keys mismatch (missing: ['n'])"),
    ({"s": "x", "l": [1, 2]}, {"s": "x", "l": [1]}, "error_match: array length mismatch at 'l'"),
    ({"s": "x", "l": [2, 1]}, {"s": "x", "l": [1, 2]}, "error_match: value mismatch at 'l[0]'"),  # order counts
    ({"s": "x", "b": False}, {"s": "x", "b": True}, "error_match: value mismatch at 'b'"),
    ({"s": "x", "o": {"k": "Lyon"}}, {"s": "x", "o": {"k": "Paris"}},
     "error_match: string similarity too low at 'o.k' (edit score: 0.00)"),
])
def test_gold_comparison_rules(predicted, gold, expected):
    assert check(predicted, gold) == expected


@pytest.mark.parametrize("predicted, gold, expected", [
    ("Paris", "Paris", "correct"),  # (a) equal
    ("new  YORK city", "New York City", "correct"),  # (b) equal without whitespace, lower-cased
    ("Le Paris", "Paris", "error_match: string similarity too low at 's' (edit score: 0.77)"),  # (c) difflib < 0.8
    ("Pariss", "Paris", "error_match: string similarity too low at 's' (rouge score: 0.00)"),  # (c) then ROUGE too
    ("a b c d", "a b c", "correct"),  # short gold: difflib 0.83 and ROUGE-L 0.86
    ("Grand Hotel in Paris center", "Grand Hotel Paris center", "correct"),  # (d) ROUGE-L >= 0.7
    ("the cat sat on the mat", "the cat is on the mat", "correct"),  # ROUGE-L 0.79999 >= 0.7
    ("Grand Hotel Paris", "Hotel Grand Paris", "error_match: string similarity too low at 's' (rouge score: 0.67)"),
    ("...", "a long gold string here", "error_match: rouge calculation failed at 's'"),  # rouge raises: no sentence
])
def test_string_thresholds(predicted, gold, expected):
    assert check({"s": predicted}, {"s": gold}) == expected


def test_unknown_tool_is_a_failure_not_a_crash():
    result = arguments.ArgumentChecker().check(TOOLS, "g", "{}", "{}")
    assert result.startswith("error: upstream checker raises")


@pytest.mark.parametrize("hyp, ref, f", [
    ("the cat sat on the mat", "the cat is on the mat", 0.7999999950000002),
    ("a b c. d e", "a c e. b", 0.8888888839506174),  # sentence split on "." and a union of LCS word sets
    ("Grand Hotel Paris", "Hotel Grand Paris", 0.6666666616666668),
    ("the the the", "the cat", 0.6666666622222223),  # distinct words (exclusive=True)
    ("x", "y z", 0.0),
])
def test_rouge_l_equals_rouge_1_0_1(hyp, ref, f):
    # values printed by rouge==1.0.1 Rouge().get_scores(hyp, ref)[0]["rouge-l"]["f"]
    assert rouge.rouge_l_f(hyp, ref) == pytest.approx(f, abs=1e-15)


def test_rouge_raises_where_upstream_raises():
    for hyp, ref in (("", "a"), ("a", "..."), ("...", "...")):
        with pytest.raises(rouge.RougeError):
            rouge.rouge_l_f(hyp, ref)
    long_a = " ".join(f"a{i}" for i in range(1000))
    long_b = " ".join(f"b{i}" for i in range(1000))
    with pytest.raises(rouge.RougeError, match="recursion"):  # upstream's recursive _recon overflows
        rouge.rouge_l_f(long_a, long_b)


# ------------------------------------------------------------------------------------------------------------------
# The offline walk (eval_runner.params_checker)


def result_record(steps, label="correct", optimal=True):
    log = {"task_idx": 0, "begin_of_current_task": {"role": "user", "content": "q"}}
    log.update({f"step_{i}": step for i, step in enumerate(steps)})
    return {"action_name_label": label, "is_optimal": optimal, "inference_log": log}


def tool_step(name, predicted, gold):
    return {"inference_output": {"content": None, "current_action_name_label": "correct", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(predicted)}}]},
        "inference_answer": {"candidate_0_answer_function_list": {"action": [{"name": name,
                                                                              "arguments": json.dumps(gold)}]}}}


def answer_step():
    return {"inference_output": {"content": "done", "tool_calls": [], "current_action_name_label": "correct"},
            "inference_answer": {"candidate_0_answer_function_list": {"action": [
                {"name": "prepare_to_answer", "arguments": "{\"answer_type\": \"tool\"}"}], "observation": "x"}}}


def test_argument_error_deletes_only_the_next_step_entry():
    # params_checker: after a failing step the next step_* entry is deleted and the walk stops; later ones stay
    record = result_record([tool_step("f", {"s": "a"}, {"s": "a"}), tool_step("f", {"s": "Lyon"}, {"s": "Paris"}),
                            tool_step("f", {"s": "b"}, {"s": "b"}), answer_step()])
    found = checker.params_check(record, TOOLS)
    assert found["arguments_label"] == "error" and found["failure"]["step"] == "step_1"
    assert [k for k in record["inference_log"] if k.startswith("step_")] == ["step_0", "step_1", "step_3"]
    assert record["is_optimal"] is False


def test_action_error_ends_the_walk_even_without_candidates():
    # an empty output is logged without inference_answer; the walk stops there (upstream reads it first: KeyError)
    empty = {"inference_output": {"content": "", "tool_calls": [], "current_action_name_label": "error",
                                  "error_reason": "tool_calls and content are None or empty"}}
    record = result_record([tool_step("f", {"s": "a"}, {"s": "a"}), empty], label="error", optimal=False)
    assert checker.params_check(record, TOOLS)["arguments_label"] == "correct"
    assert len([k for k in record["inference_log"] if k.startswith("step_")]) == 2


def test_same_named_parallel_calls_are_paired_after_sorting_by_argument_text():
    # predicted and gold calls sorted by (name, arguments JSON text), then paired by position
    step = tool_step("f", {"s": "b"}, {"s": "a"})
    step["inference_output"]["tool_calls"].append(
        {"id": "d", "type": "function", "function": {"name": "f", "arguments": json.dumps({"s": "a"})}})
    step["inference_answer"]["candidate_0_answer_function_list"]["action"].append(
        {"name": "f", "arguments": json.dumps({"s": "b"})})
    assert checker.params_check(result_record([step, answer_step()]), TOOLS)["arguments_label"] == "correct"


# ------------------------------------------------------------------------------------------------------------------
# Metrics (eval_runner.calc_accuracy)


def case_result(dialogue, layer, task_type, passed, optimal=0, ap_steps=0, ap_total=0, subtype=None):
    subtype = subtype or ("First Turn" if layer == 0 else "Partial Information")
    return CaseResult(suite="wildtoolbench", case_id=f"wild_tool_bench_{dialogue}-task{layer}", category="x",
                      passed=passed, error_type=None if passed else "wrong_action",
                      counts={"optimal": optimal, "ap_steps": ap_steps, "ap_total": ap_total, "dialogue_tasks": 4},
                      labels={"task_type": task_type, "turn_subtype": subtype, "layer": str(layer)})


def test_task_session_type_position_subtype_ap_and_op_arithmetic():
    results = [
        case_result(0, 0, "Single-Tool", True),
        case_result(0, 1, "Parallel Multi-Tool", True, optimal=1),
        case_result(0, 2, "Clarify", True, subtype="Coreferential Reference"),
        case_result(0, 3, "Chat", True, subtype="Long-Range Dependency"),
        case_result(1, 0, "Sequential Multi-Tool", False, ap_steps=2, ap_total=3),
        case_result(1, 1, "Mixed Multi-Tool", True, optimal=0, ap_steps=4, ap_total=5),  # correct, not optimal
        case_result(1, 2, "Parallel Multi-Tool", False),
        case_result(1, 3, "Chat", True),
        case_result(2, 0, "Chat", True),  # a dialogue with one task run: not a session
    ]
    metrics = {m.name: m for m in wtb.aggregate(results)}
    assert (metrics["Task accuracy"].correct, metrics["Task accuracy"].total) == (7, 9)
    assert (metrics["Session accuracy"].correct, metrics["Session accuracy"].total) == (1, 2)
    assert (metrics["Multi-Tool"].correct, metrics["Multi-Tool"].total) == (2, 4)
    assert (metrics["Parallel Multi-Tool"].correct, metrics["Parallel Multi-Tool"].total) == (1, 2)
    assert (metrics["Chat"].correct, metrics["Chat"].total) == (3, 3)
    assert (metrics["position 1 (layer 0)"].correct, metrics["position 1 (layer 0)"].total) == (2, 3)
    assert (metrics["Subsequent Turn"].correct, metrics["Subsequent Turn"].total) == (5, 6)
    assert (metrics["Partial Information"].correct, metrics["Partial Information"].total) == (3, 4)
    assert (metrics["OP"].correct, metrics["OP"].total) == (1, 3)  # Parallel + Mixed; correct AND min_length
    assert (metrics["OP Mixed Multi-Tool"].correct, metrics["OP Mixed Multi-Tool"].total) == (0, 1)
    assert (metrics["AP"].correct, metrics["AP"].total) == (6, 8)  # micro over Sequential + Mixed
    assert metrics["AP"].value == pytest.approx(0.75)
    assert metrics["AP Sequential Multi-Tool"].value == pytest.approx(2 / 3)


# ------------------------------------------------------------------------------------------------------------------
# Gold, hostile output, replay, the plugin run


def test_gold_passes_every_sample_task(cases):
    for case in cases.values():
        verdict = wtb.score(case, Generation(text=wtb.gold_output(case)))
        assert verdict.passed, (case.case_id, verdict.explanation)
        if case.payload["task_type"] in ("Parallel Multi-Tool", "Mixed Multi-Tool"):
            assert verdict.counts["optimal"] == 1


def test_hostile_outputs_never_raise(cases):
    rng = random.Random(7)
    hostile = ["", "\x00", "<tool_call>", "<tool_call>[]</tool_call>", "<tool_call>{\"name\": 3}</tool_call>",
               "<tool_call>{\"name\": \"getCityForecast\", \"arguments\": \"[1]\"}</tool_call>", "{" * 5000,
               "<|im_end|>", "\ud800", "null", json.dumps({"inference_log": []})]
    for case in cases.values():
        for _ in range(15):
            gens = []
            for _ in range(6):
                kind = rng.random()
                if kind < 0.5:
                    gens.append(Generation(text=rng.choice(hostile)))
                else:
                    gens.append(Generation(text=rng.choice(hostile), tool_calls=[
                        {"name": rng.choice(["getCityForecast", "x", "prepare_to_answer"]),
                         "arguments": rng.choice([{}, {"city": None}, {"a": [1, {"b": "\ud800"}]}])}]))
            transcript, _ = drive(case, gens)
            assert isinstance(verdict_of(case, transcript).passed, bool)
        for raw in hostile:
            verdict = wtb.score(case, Generation(text=raw))
            assert verdict.passed is False and verdict.error_type == FORMAT_ERROR
            json.dumps(verdict.to_json())


def upstream_result_file(cases, path):
    """A result file in upstream's layout: dialogue 0 as the gold run writes it (one task with a wrong argument),
    dialogue 1 lost to an inference error."""
    results = []
    for j in range(4):
        transcript = loop.gold_transcript(cases[f"wild_tool_bench_0-task{j}"])
        del transcript["wildtoolbench"]
        for key, step in transcript["inference_log"].items():
            if key.startswith("step_"):
                step["inference_input"] = {"messages": [], "tools": []}
        transcript.update(latency=[0.1], input_token_count=[1], output_token_count=[1])
        results.append(transcript)
    call = results[0]["inference_log"]["step_0"]["inference_output"]["tool_calls"][0]
    call["function"]["arguments"] = json.dumps({"city": "Chicago", "endDate": "2024-07-15", "startDate": "2024-07-13"})
    lines = [{"id": "wild_tool_bench_0", "model_name": "m", "result": results},
             {"id": "wild_tool_bench_1", "result": "Error during inference: timeout"}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_replay_reads_upstream_result_files(tmp_path, cases):
    path = tmp_path / "result" / "m" / "Wild-Tool-Bench_result.jsonl"
    upstream_result_file(cases, path)
    outputs = replay.replay_outputs(tmp_path / "result")
    assert sorted(outputs) == sorted([f"wild_tool_bench_0-task{j}" for j in range(4)] +
                                     [f"wild_tool_bench_1-task{j}" for j in range(4)])
    first = wtb.score(cases["wild_tool_bench_0-task0"], Generation(text=outputs["wild_tool_bench_0-task0"]))
    assert first.error_type == "argument_match" and "endDate" in first.explanation
    assert wtb.score(cases["wild_tool_bench_0-task1"], Generation(text=outputs["wild_tool_bench_0-task1"])).passed
    lost = wtb.score(cases["wild_tool_bench_1-task2"], Generation(text=outputs["wild_tool_bench_1-task2"]))
    assert lost.error_type == "inference_error"
    score_file = tmp_path / "Wild-Tool-Bench_score.jsonl"
    score_file.write_text("{}\n")
    assert any("score file" in str(p) for p in replay.replay_outputs(score_file).problems)


def _run_suite(tmp_path, *extra):
    out = tmp_path / "run.json"
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE_DIR), "-p", "no:cacheprovider", "-q",
         f"--toolbench-cache={tmp_path / 'cache'}", f"--toolbench-json={out}", *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.is_file(), result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(out.read_text()), result


def test_gold_run_on_samples_passes_and_reports_the_metrics(tmp_path):
    document, result = _run_suite(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(document["cases"]) == 12 and all(c["passed"] for c in document["cases"])
    metrics = {m["name"]: m for m in document["suites"]["wildtoolbench"]["metrics"]}
    assert metrics["Session accuracy"]["value"] == 1.0 and metrics["OP"]["value"] == 1.0
    assert (metrics["AP"]["correct"], metrics["AP"]["total"]) == (9, 11)  # Mixed: 3 turns against 4 gold nodes


def test_replay_run_end_to_end(tmp_path, cases):
    upstream_result_file(cases, tmp_path / "res" / "m" / "Wild-Tool-Bench_result.jsonl")
    document, _ = _run_suite(tmp_path, "--toolbench-backend=replay", f"--toolbench-replay={tmp_path / 'res'}",
                             "-k", "wild_tool_bench_0 or wild_tool_bench_1")
    by_id = {c["case_id"]: c for c in document["cases"]}
    assert by_id["wild_tool_bench_0-task0"]["error_type"] == "argument_match"
    assert by_id["wild_tool_bench_0-task3"]["passed"] is True
    assert by_id["wild_tool_bench_1-task0"]["error_type"] == "inference_error"
    metrics = {m["name"]: m for m in document["suites"]["wildtoolbench"]["metrics"]}
    assert (metrics["Task accuracy"]["correct"], metrics["Task accuracy"]["total"]) == (3, 8)
    assert (metrics["Session accuracy"]["correct"], metrics["Session accuracy"]["total"]) == (0, 2)
