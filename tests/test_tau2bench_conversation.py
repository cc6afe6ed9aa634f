"""τ²-bench's conversation (upstream 1.0.1's half-duplex orchestrator, LLMAgent and UserSimulator) driven by a
scripted backend: the requests each role sends (system prompts, views, tools), the message flow with tool calls and
results, every stop condition with its termination reason, and the gold path through the core's ``run_case``. The
shipped samples (mock domain) need no data folder; airline's prompts are checked where the data folder is."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_toolbench.contract.suite import MODEL_BACKEND, CaseRecord, Generation, SuiteContext
from pytest_toolbench.run.cache import GenerationCache
from pytest_toolbench.run.generation import pregenerate
from pytest_toolbench.run.requests import Answerer, run_case
from shipped import scorer

SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
SAMPLES = SUITE / "samples"
#: upstream's texts the samples hold re-serialised (never byte copies): path under the data folder -> text
SAMPLE_TEXTS = json.loads((SAMPLES / "upstream_texts.json").read_text(encoding="utf-8"))


def _cases(data=SAMPLES, kind="samples", domains=("mock",), **options):
    context = SuiteContext(data, {"options": {"domains": list(domains), "split": "base", **options},
                                  "name": "tau2bench"}, kind)
    return {case.case_id: case for case in scorer("tau2bench").load_cases(context)}


def text(content: str) -> Generation:
    return Generation(text=content + "<|im_end|>", finish_reason="stop", prompt_tokens=100, output_tokens=7,
                      tool_calls=[])


def call(name: str, **arguments) -> Generation:
    return Generation(text=f'<tool_call>{json.dumps({"name": name, "arguments": arguments})}</tool_call>',
                      finish_reason="stop", prompt_tokens=120, output_tokens=20,
                      tool_calls=[{"name": name, "arguments": arguments}])


MODES = ("native", "prompt")


def as_answered(reply: Generation, mode: str) -> Generation:
    """A reply as a backend in ``mode`` hands it over: native mode with the parser's calls, prompt mode the text
    alone (no parser runs: the conversation reads the Hermes blocks itself)."""
    return reply if mode == "native" else dataclasses.replace(reply, tool_calls=None, parse_error=None)


def drive(case, agent, user, mode="native"):
    """Runs the conversation; ``agent``/``user`` are lists of replies (or callables of the request) taken in
    order, answered as a backend in ``mode`` answers. Returns the transcript and the requests, each with its
    role (``sent(request)``: the messages upstream sends, native mode's)."""
    conversation = scorer("tau2bench").conversation(case)
    requests = []
    queues = {"agent": list(agent), "user": list(user)}
    try:
        request = next(conversation)
        while True:
            role = "user" if request.simulates == "user" else "agent"
            requests.append((role, request))
            reply = queues[role].pop(0)
            request = conversation.send(as_answered(reply(request) if callable(reply) else reply, mode))
    except StopIteration as done:
        return done.value, requests


def sent(request):
    return request.messages_for(True)


def test_the_user_answers_the_greeting_first_with_upstreams_system_prompt():
    case = _cases()["mock_create_task_1"]
    transcript, requests = drive(case, [], [text("###STOP###")])
    role, request = requests[0]
    guidelines = SAMPLE_TEXTS["user_simulator/simulation_guidelines_tools.md"]
    assert role == "user" and request.simulates == "user" and request.temperature == 0.0
    assert sent(request)[0] == {"role": "system", "content": guidelines + "\n\n<scenario>\nPersona:\n\tProfessional "
                                   "and direct communicator who writes in a clear and concise style\nInstructions:\n"
                                   "\tYou are a team member who needs to create a task for an upcoming meeting. Your "
                                   "goal is to create a task to track this important meeting. Create a new task "
                                   "called 'Important Meeting' for user_1.\n</scenario>"}
    # the agent's greeting, seen by the user simulator with the roles flipped
    assert sent(request)[1:] == [{"role": "user", "content": "Hi! How can I help you today?"}]
    # mock's user has tools: their schemas go with the user's request (and the tools variant of the guidelines)
    assert [t["function"]["name"] for t in request.tools] == ["check_notifications", "dismiss_notification"]
    assert transcript["termination_reason"] == "user_stop"
    assert [m["role"] for m in transcript["messages"]] == ["assistant", "user"]


@pytest.mark.parametrize("mode", MODES)
def test_the_message_flow_tool_calls_and_results_and_the_agents_view(mode):
    case = _cases()["mock_create_task_1"]
    agent = [call("create_task", user_id="user_1", title="Important Meeting"), text("Done: task_2 created.")]
    user = [text("Please create a task 'Important Meeting' for user_1."), text("Thanks! ###STOP###")]
    transcript, requests = drive(case, agent, user, mode)
    assert [role for role, _ in requests] == ["user", "agent", "agent", "user"]
    policy = SAMPLE_TEXTS["domains/mock/policy.md"]
    first_agent = requests[1][1]
    assert first_agent.simulates is None and first_agent.temperature is None  # the suite's sampling applies
    assert sent(first_agent)[0]["content"].startswith("<instructions>\nYou are a customer service agent that "
                                                         "helps the user according to the <policy> provided below.")
    assert sent(first_agent)[0]["content"].endswith(f"<policy>\n{policy}\n</policy>")
    assert sent(first_agent)[1:] == [{"role": "assistant", "content": "Hi! How can I help you today?"},
                                        {"role": "user", "content": "Please create a task 'Important Meeting' "
                                                                    "for user_1."}]
    assert "create_task" in [t["function"]["name"] for t in first_agent.tools]
    second_agent = requests[2][1]
    assert sent(second_agent)[-2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1_0", "name": "create_task", "type": "function",
         "function": {"name": "create_task", "arguments": '{"user_id": "user_1", "title": "Important Meeting"}'}}]}
    assert sent(second_agent)[-1]["role"] == "tool" and sent(second_agent)[-1]["tool_call_id"] == "call_1_0"
    assert json.loads(sent(second_agent)[-1]["content"])["task_id"] == "task_2"
    # the user never sees the agent's tool call nor its result
    assert [m["role"] for m in sent(requests[3][1])] == ["system", "user", "assistant", "user"]
    messages = transcript["messages"]
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant", "tool", "assistant", "user"]
    assert messages[2]["tool_calls"][0]["requestor"] == "assistant" and messages[3]["error"] is False
    assert transcript["termination_reason"] == "user_stop"
    cost = transcript["conversation"]
    assert cost["agent"]["requests"] == 2 and cost["user"]["requests"] == 2 and cost["steps"] == 5
    assert cost["agent"]["prompt_tokens"] == 220 and cost["user"]["output_tokens"] == 14
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    assert verdict.passed and verdict.counts["reward"] == 1.0


@pytest.mark.parametrize("token", ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"])
def test_each_user_stop_token_ends_with_user_stop(token):
    case = _cases()["mock_create_task_1"]
    transcript, requests = drive(case, [text("Anything else?")], [text("hello"), text(f"ok {token}")])
    assert transcript["termination_reason"] == "user_stop" and len(requests) == 3


@pytest.mark.parametrize("mode", MODES)
def test_the_agents_transfer_tool_does_not_stop_the_conversation_the_users_transfer_token_does(mode):
    case = _cases()["mock_create_task_1"]
    agent = [call("transfer_to_human_agents", summary="user wants a task"), text("You are being transferred.")]
    transcript, _ = drive(case, agent, [text("I need help"), text("###TRANSFER###")], mode)
    assert [m["role"] for m in transcript["messages"]] == ["assistant", "user", "assistant", "tool", "assistant",
                                                           "user"]
    assert transcript["messages"][3]["content"] == "Transfer successful"
    assert transcript["termination_reason"] == "user_stop"


@pytest.mark.parametrize("mode", MODES)
def test_max_steps_counts_every_step_and_is_checked_only_when_no_tool_result_is_pending(mode):
    case = _cases(max_steps=3)["mock_create_task_1"]
    # steps: user (1), agent calls (2: the environment is to answer, not checked), tools (3) -> max_steps
    transcript, requests = drive(case, [call("get_users"), text("Here.")], [text("hi")], mode)
    assert transcript["termination_reason"] == "max_steps" and transcript["conversation"]["steps"] == 3
    assert [role for role, _ in requests] == ["user", "agent"]
    assert transcript["messages"][-1]["role"] == "tool"


def test_a_stop_on_the_last_step_is_reported_as_max_steps_as_upstream_overrides_it():
    case = _cases(max_steps=1)["mock_create_task_1"]
    transcript, _ = drive(case, [], [text("###STOP###")])
    assert transcript["termination_reason"] == "max_steps"


@pytest.mark.parametrize("mode", MODES)
def test_too_many_errors_counts_every_failing_tool_call(mode):
    case = _cases(max_errors=2)["mock_create_task_1"]
    agent = [call("no_such_tool"), call("create_task", user_id="nobody", title="x"), text("sorry")]
    transcript, _ = drive(case, agent, [text("hi"), text("hmm")], mode)
    errors = [m for m in transcript["messages"] if m["role"] == "tool"]
    assert [m["error"] for m in errors] == [True, True]
    assert errors[0]["content"] == "Error: Tool 'no_such_tool' not found."
    assert transcript["termination_reason"] == "too_many_errors" and transcript["conversation"]["tool_errors"] == 2


@pytest.mark.parametrize("reply, why", [
    (Generation(text="<|im_end|>", tool_calls=[]), "must have either content or tool_calls"),
    (Generation(text="   ", tool_calls=[]), "must have either content or tool_calls"),
    (Generation(text="", tool_calls=[{"name": "get_users", "arguments": "{oops"}]), "arguments are not JSON"),
])
def test_a_reply_upstream_raises_on_ends_as_infrastructure_error(reply, why):
    case = _cases()["mock_create_task_1"]
    transcript, _ = drive(case, [reply], [text("hi")])
    assert transcript["termination_reason"] == "infrastructure_error" and why in transcript["conversation"]["error"]
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    assert not verdict.passed and verdict.counts["reward"] == 0.0


@pytest.mark.parametrize("mode", MODES)
def test_the_users_tool_calls_go_to_the_environment_and_back_to_the_user(mode):
    case = _cases()["mock_update_task_with_user_tools"]
    user = [call("check_notifications"), text("Please mark task_1 completed."),
            call("dismiss_notification", notification_id="notif_1"), text("###STOP###")]
    agent = [call("update_task_status", task_id="task_1", status="completed"), text("Done.")]
    transcript, requests = drive(case, agent, user, mode)
    assert [role for role, _ in requests] == ["user", "user", "agent", "agent", "user", "user"]
    second_user = requests[1][1]
    assert sent(second_user)[-2]["role"] == "assistant" and sent(second_user)[-2]["tool_calls"]
    assert sent(second_user)[-1]["role"] == "tool" and "notif_1" in sent(second_user)[-1]["content"]
    user_calls = [m for m in transcript["messages"] if m["role"] == "user" and m.get("tool_calls")]
    assert all(c["requestor"] == "user" for m in user_calls for c in m["tool_calls"])
    # the agent never sees the user's tool calls nor their results
    assert [m["role"] for m in sent(requests[2][1])] == ["system", "assistant", "user"]
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    # the user did what the scenario asks (env assertion met, gold action taken); the gold run does not dismiss
    # the notification (known_defects.yaml), so the user database differs from the gold one
    assert verdict.details["reward_breakdown"] == {"DB": 0.0, "ENV_ASSERTION": 1.0, "ACTION": 1.0}


def test_a_task_with_a_message_history_continues_it():
    case = _cases()["mock_update_task_with_message_history"]
    history = case.payload["task"]["initial_state"]["message_history"]
    transcript, requests = drive(case, [], [text("Now mark it completed. ###STOP###")])
    role, request = requests[0]
    # the history ends with the agent's text: the user answers it, seeing the texts only
    assert role == "user" and [m["role"] for m in sent(request)] == ["system", "assistant", "user"]
    assert transcript["messages"][:len(history)] == history and transcript["termination_reason"] == "user_stop"


def test_the_gold_backend_ends_the_conversation_with_the_gold_trajectory_and_a_model_reply_never_does():
    cases = _cases()
    suite = SimpleNamespace(benchmark=scorer("tau2bench"), interactive=True,
                            definition=SimpleNamespace(generation={"max_tokens": 4096, "temperature": 0.0},
                                                       max_tokens=4096))
    case = cases["mock_create_task_1"]
    gold = lambda task: Generation(text=scorer("tau2bench").gold_reply(task.case, task.step, task.request),
                                   finish_reason="stop")
    verdict = scorer("tau2bench").score(case, run_case(case, suite, gold, None))
    assert verdict.passed and verdict.details["termination_reason"] == "agent_stop"
    # the same text from a model (not handed out by gold_reply) is a user message like any other
    gold_text = scorer("tau2bench").gold_output(case)
    transcript, _ = drive(case, [text("ok")], [Generation(text=gold_text, tool_calls=[]), text("###STOP###")])
    assert transcript["messages"][1] == {"role": "user", "content": gold_text}


def test_airline_agent_prompt_holds_its_policy_and_the_user_gets_the_plain_guidelines(shared_data):
    data = shared_data / "tau2bench" / "upstream"
    case = _cases(data, "folder", ("airline",))["airline_0"]
    transcript, requests = drive(case, [text("Sure.")], [text("I want to cancel."), text("###STOP###")])
    user_request, agent_request = requests[0][1], requests[1][1]
    assert user_request.tools is None
    assert sent(user_request)[0]["content"].startswith(
        (data / "user_simulator" / "simulation_guidelines.md").read_text() + "\n\n<scenario>\n")
    assert "Instructions:\n\tDomain: airline\n\tReason for call:\n\t\t" in sent(user_request)[0]["content"]
    assert (data / "domains" / "airline" / "policy.md").read_text() in sent(agent_request)[0]["content"]
    assert len(agent_request.tools) == 14 and transcript["termination_reason"] == "user_stop"


def test_the_cost_of_conversations_reaches_the_counts_and_the_figures_agent_and_user_apart():
    case = _cases()["mock_create_task_1"]
    agent = [call("create_task", user_id="user_1", title="Important Meeting"), text("Done.")]
    transcript, _ = drive(case, agent, [text("Create it please."), text("###STOP###")])
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    counts = verdict.counts
    assert (counts["agent_requests"], counts["user_requests"]) == (2.0, 2.0)
    assert (counts["agent_prompt_tokens"], counts["agent_output_tokens"]) == (220.0, 27.0)
    assert (counts["user_prompt_tokens"], counts["user_output_tokens"]) == (200.0, 14.0)
    assert counts["conversation_steps"] == 5.0 and counts["conversation_tool_errors"] == 0.0
    gold = scorer("tau2bench").score(case, Generation(text=scorer("tau2bench").gold_output(case)))
    assert "agent_requests" not in gold.counts  # the gold trajectory is no conversation: no cost
    records = [CaseRecord("tau2bench", "mock_a", "mock", True, counts=counts),
               CaseRecord("tau2bench", "mock_b", "mock", True, counts=dict(counts, agent_requests=4.0)),
               CaseRecord("tau2bench", "airline_0", "airline", True, counts=gold.counts)]
    figures = {m.name: m for m in scorer("tau2bench").aggregate(records) if m.group == "cost"}
    assert figures["mock conversations"].value == 2.0
    assert figures["mock agent requests per conversation"].value == 3.0
    assert figures["mock agent prompt tokens per conversation"].value == 220.0
    assert figures["mock user generated tokens per conversation"].value == 14.0
    assert len(figures) == 7 and not any("seconds" in name for name in figures)  # no clock time in records
    assert not any("seconds" in key for key in counts)
    assert figures["mock user requests per conversation"].unit == "" and \
        figures["mock user requests per conversation"].better == "none"
    assert not any(name.startswith("airline") for name in figures)  # no conversation, no cost figures


def test_the_run_header_says_who_plays_the_user_and_that_the_leaderboards_user_is_gpt_4_1():
    context = SuiteContext(SAMPLES, {"options": {"domains": ["mock"], "split": "base", "max_steps": 30}})
    info = scorer("tau2bench").run_info(context)
    assert "max_steps 30, max_errors 10 (upstream's defaults 200, 10)" in info["tau2bench"]
    assert "gpt-4.1-2025-04-14 at temperature 0.0" in info["tau2bench user simulator"]
    assert "not comparable" in info["tau2bench user simulator"]


@pytest.mark.parametrize("mode", MODES)
def test_tool_calls_the_parser_cannot_read_are_text_to_the_user_as_vllms_server_returns_them(mode):
    case = _cases()["mock_create_task_1"]
    broken = Generation(text="<tool_call>{oops</tool_call><|im_end|>", parse_error="invalid JSON")
    transcript, requests = drive(case, [broken], [text("hi"), text("###STOP###")], mode)
    assert transcript["messages"][2] == {"role": "assistant", "content": "<tool_call>{oops</tool_call>"}
    assert sent(requests[-1][1])[-1] == {"role": "user", "content": "<tool_call>{oops</tool_call>"}
    assert transcript["termination_reason"] == "user_stop"


def test_a_history_already_ended_by_the_user_makes_no_request():
    case = _cases()["mock_update_task_with_message_history"]
    task = json.loads(json.dumps(case.payload["task"]))
    task["initial_state"]["message_history"].append({"role": "user", "content": "Bye ###STOP###"})
    stopped = dataclasses.replace(case, payload={**case.payload, "task": task})
    transcript, requests = drive(stopped, [], [])
    assert requests == [] and transcript["termination_reason"] == "user_stop"
    assert transcript["messages"][-1]["content"] == "Bye ###STOP###"


# -- driven by the core, without rounds and in rounds -----------------------------------------------------------------

class _Model:
    """A cacheable model whose reply is a function of what a backend in ``mode`` sends: the user asks for a task,
    then stops once the agent has answered; the agent looks the users up, then answers (prompt mode: it reads the
    messages as text, the tool results in ``<tool_response>`` blocks, and answers in text). Its stream hands
    answers back out of order."""

    capabilities = MODEL_BACKEND
    chunk_size = 1
    commit_seconds = 30.0

    def __init__(self, continuous: bool, mode: str = "native"):
        self.continuous = continuous
        self.mode = mode

    def fingerprint(self):
        return {"backend": "scripted-tau2", "mode": self.mode}

    def answer(self, task):
        messages = task.request.messages_for(self.mode == "native")
        if task.request.simulates == "user":
            reply = text("###STOP###") if len(messages) > 3 else text("Please create a task for user_1.")
        else:
            last = messages[-1]
            result = last["role"] == "tool" if self.mode == "native" else last["content"].startswith(
                "<tool_response>\n")
            reply = text("Here are the users.") if result else call("get_users")
        return as_answered(reply, self.mode)

    def generate(self, tasks, on_chunk=None, on_progress=None):
        answers = [self.answer(task) for task in tasks]
        if on_chunk is not None:
            on_chunk(list(enumerate(answers)))
        return answers

    def open_stream(self):
        backend = self

        class Stream:
            def __init__(self):
                self.queue, self.draw = [], random.Random(5)

            def add(self, tasks, tags):
                self.queue += list(zip(tags, tasks))

            def pending(self):
                return len(self.queue)

            def step(self):
                chosen = set(self.draw.sample(range(len(self.queue)), min(len(self.queue), 2)))
                done = [self.queue[i] for i in sorted(chosen)]
                self.queue = [item for i, item in enumerate(self.queue) if i not in chosen]
                return [(tag, backend.answer(task)) for tag, task in done]

            def close(self):
                pass

        return Stream() if self.continuous else None


def test_the_core_drives_the_conversations_without_rounds_as_in_rounds_in_both_modes(tmp_path):
    cases = list(_cases().values())
    suite = SimpleNamespace(benchmark=scorer("tau2bench"), interactive=True,
                            definition=SimpleNamespace(generation={"max_tokens": 4096, "temperature": 0.0},
                                                       max_tokens=4096))
    outcomes = {}
    for mode in MODES:
        for continuous in (True, False):
            folder = tmp_path / f"{mode}-{continuous}"
            model = _Model(continuous, mode)
            cache = GenerationCache(folder)
            lines: list[str] = []
            try:
                stats = pregenerate([(suite, case) for case in cases], model, cache, model.fingerprint(), None,
                                    progress=lines.append)
            finally:
                cache.close()
            assert not continuous or any("ran without rounds" in line for line in lines), lines
            cache = GenerationCache(folder, readonly=True)
            answer = Answerer(None, cache, model.fingerprint())
            transcripts = {case.case_id: json.loads(run_case(case, suite, answer, None).text) for case in cases}
            cache.close()
            outcomes[mode, continuous] = (stats.requested, stats.generated, transcripts)
    assert outcomes["native", True] == outcomes["native", False] == outcomes["prompt", True] == \
        outcomes["prompt", False]
    transcripts = outcomes["prompt", True][2]
    assert transcripts["mock_create_task_1"]["termination_reason"] == "user_stop"
    assert [m["role"] for m in transcripts["mock_create_task_1"]["messages"]] == \
        ["assistant", "user", "assistant", "tool", "assistant", "user"]


def test_a_reply_is_read_as_an_openai_server_returns_it():
    messages = scorer("tau2bench", "conversation_messages")
    call_text = 'Let me look.\n<tool_call>\n{"name": "get_users", "arguments": {}}\n</tool_call><|im_end|>'
    native = Generation(text=call_text, tool_calls=[{"name": "get_users", "arguments": {}}])
    assert messages.read_reply(native, True) == messages.Reply("Let me look.\n", [{"name": "get_users",
                                                                                     "arguments": {}}])
    # the gold backend and other parsers that leave tool_calls None: Hermes blocks read from the text
    assert messages.read_reply(Generation(text=call_text), True).calls == [{"name": "get_users", "arguments": {}}]
    # no tools offered (the user of airline and retail): the text is the content, markup and all
    assert messages.read_reply(native, False) == messages.Reply(call_text[:-len("<|im_end|>")])
    endpoint = Generation(text="", tool_calls=[{"name": "get_users", "arguments": '{"a": 1}'}])
    assert messages.read_reply(endpoint, True) == messages.Reply(None, [{"name": "get_users", "arguments": {"a": 1}}])


def test_a_prompt_past_the_context_ends_as_infrastructure_error_and_says_so():
    case = _cases()["mock_create_task_1"]
    full = Generation(text="", finish_reason="length", prompt_tokens=9000, output_tokens=0, tool_calls=[])
    transcript, _ = drive(case, [full], [text("hi")])
    assert transcript["termination_reason"] == "infrastructure_error"
    assert "the prompt fills the model's context" in transcript["conversation"]["error"]


def test_an_endpoints_calls_whose_arguments_are_not_json_end_as_infrastructure_error():
    case = _cases()["mock_create_task_1"]
    endpoint = Generation(text="", tool_calls=None, parse_error="tool call 'f': arguments are not JSON")
    transcript, _ = drive(case, [endpoint], [text("hi")])
    assert transcript["termination_reason"] == "infrastructure_error"
    assert "cannot be decoded" in transcript["conversation"]["error"]
