"""τ²-bench's conversation in the two modes: native (``native_messages`` with ``tools=``, upstream's protocol) and
prompt, the default (``messages``: the tools, calls and results written as text in the Hermes format of the Qwen2.5
chat template). For the Qwen2.5 and Qwen3 templates both give the same prompt text; a user with tools (mock)
keeps them in prompt mode, also when ``--toolbench-user-model`` sends its turns to an endpoint in prompt mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolbench.backends.openai_endpoint import OpenAIEndpointBackend
from pytest_toolbench.backends.vllm.prompts import template_messages
from pytest_toolbench.contract.suite import Generation
from shipped import scorer
from test_tau2bench_conversation import _cases, call, drive, text

TEMPLATES = Path(__file__).resolve().parent / "data" / "chat_templates"
conversation_text = scorer("tau2bench", "conversation_text")


def _with_two_calls_and_text(mode):
    """Agent: text beside a call, then two calls in one message (two tool results in a row), then text; the user
    of mock_update_task_with_user_tools calls its own tools."""
    case = _cases()["mock_update_task_with_user_tools"]
    two = Generation(text='<tool_call>\n{"name": "get_users", "arguments": {}}\n</tool_call>\n<tool_call>\n'
                          '{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}'
                          '\n</tool_call>',
                     tool_calls=[{"name": "get_users", "arguments": {}},
                                 {"name": "update_task_status", "arguments": {"task_id": "task_1",
                                                                             "status": "completed"}}])
    beside = Generation(text='Let me check — ünïcode.<tool_call>\n{"name": "get_users", "arguments": {}}\n'
                             '</tool_call>', tool_calls=[{"name": "get_users", "arguments": {}}])
    agent = [beside, two, text("Done.")]
    user = [call("check_notifications"), text("Please mark task_1 completed."), text("###STOP###")]
    return drive(case, agent, user, mode)


@pytest.mark.parametrize("mode", ["native", "prompt"])
def test_both_modes_hold_the_same_conversation(mode):
    transcript, requests = _with_two_calls_and_text(mode)
    native, _ = _with_two_calls_and_text("native")
    assert transcript == native
    assert transcript["termination_reason"] == "user_stop"
    assert [m["role"] for m in transcript["messages"]].count("tool") == 4


def test_prompt_mode_writes_the_tools_calls_and_results_as_text():
    _, requests = _with_two_calls_and_text("prompt")
    agent = [request for role, request in requests if role == "agent"]
    last = agent[-1]
    tools = conversation_text.tools_block(last.tools)
    assert last.messages[0]["content"] == last.native_messages[0]["content"] + tools
    assert tools.startswith("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.")
    assert '\n{"type": "function", "function": {"name": "create_task", ' in tools
    assert last.messages[-4] == {"role": "assistant", "content": 'Let me check — ünïcode.\n<tool_call>\n{"name": '
                                                                 '"get_users", "arguments": {}}\n</tool_call>'}
    assert last.messages[-2]["role"] == "assistant" and last.messages[-2]["content"].count("<tool_call>") == 2
    results = last.messages[-1]
    assert results["role"] == "user" and results["content"].count("<tool_response>\n") == 2
    assert results["content"].startswith("<tool_response>\n[") and "\n</tool_response>\n<tool_response>\n" in \
        results["content"]
    assert not any(m.get("tool_calls") or m["role"] == "tool" for m in last.messages)
    # the user of mock has tools: its prompt-mode request declares them the same way
    user = [request for role, request in requests if role == "user"][1]
    assert user.messages[0]["content"].endswith(conversation_text.tools_block(user.tools))
    assert [t["function"]["name"] for t in user.tools] == ["check_notifications", "dismiss_notification"]
    assert user.messages[-1]["content"].startswith("<tool_response>\n")


@pytest.mark.parametrize("template", ["Qwen2.5-7B-Instruct.jinja", "Qwen3-4B-Instruct-2507.jinja", "Qwen3-0.6B.jinja"])
def test_the_qwen_templates_render_both_modes_to_the_same_prompt(template):
    render = pytest.importorskip("transformers.utils.chat_template_utils").render_jinja_template
    chat_template = (TEMPLATES / template).read_text(encoding="utf-8")
    _, requests = _with_two_calls_and_text("prompt")
    assert len(requests) == 6
    for role, request in requests:
        prompt = render([list(request.messages)], chat_template=chat_template, add_generation_prompt=True)[0][0]
        native = render([template_messages(request.messages_for(True))], chat_template=chat_template,
                        tools=[dict(tool) for tool in request.tools], add_generation_prompt=True)[0][0]
        assert prompt == native, (role, prompt, native)


def test_a_user_without_tools_sends_the_same_request_in_both_modes(shared_data):
    case = _cases(shared_data / "tau2bench" / "upstream", "folder", ("airline",))["airline_0"]
    _, requests = drive(case, [text("Sure.")], [text("I want to cancel."), text("###STOP###")], "prompt")
    user = [request for role, request in requests if role == "user"]
    assert all(r.tools is None and r.native_messages is None for r in user)
    agent = requests[1][1]
    assert len(agent.tools) == 14 and agent.messages[0]["content"].endswith(
        conversation_text.tools_block(agent.tools))


def test_an_endpoint_in_prompt_mode_sends_the_users_tools_in_the_text():
    """``--toolbench-user-model`` answers the user's turns through an endpoint in prompt mode: no ``tools=``, the
    tools in the system prompt; in native mode the native messages with ``tools=``."""
    _, requests = _with_two_calls_and_text("prompt")
    user = requests[0][1]
    prompt = OpenAIEndpointBackend("http://127.0.0.1:9/v1", "m", mode="prompt").request_body(user)
    assert "tools" not in prompt and prompt["messages"] == [dict(m) for m in user.messages]
    assert "<tools>\n" in prompt["messages"][0]["content"]
    native = OpenAIEndpointBackend("http://127.0.0.1:9/v1", "m", mode="native").request_body(user)
    assert native["messages"] == [dict(m) for m in user.native_messages] and len(native["tools"]) == 2
    assert "<tools>" not in json.dumps(native["messages"])


def test_a_hermes_block_that_does_not_decode_is_the_message_text_in_prompt_mode():
    case = _cases()["mock_create_task_1"]
    broken = Generation(text='Checking.<tool_call>\n{"name": "get_users", "arguments": {oops}\n</tool_call><|im_end|>')
    transcript, _ = drive(case, [broken], [text("hi"), text("###STOP###")], "prompt")
    assert transcript["messages"][2] == {"role": "assistant", "content": broken.text[:-len("<|im_end|>")]}
    assert transcript["termination_reason"] == "user_stop"


TEXT = object()  # the reply's whole text


@pytest.mark.parametrize("reply, calls, content", [
    # vLLM's Hermes parser (upstream's way to a local model): each block a JSON object with name and arguments
    ('<tool_call>\n{"name": "get_users", "arguments": {}}\n</tool_call>', [("get_users", {})], None),
    ('Sure. <tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>\n<tool_call>{"name": "b", "arguments": {}}',
     [("a", {"x": 1}), ("b", {})], "Sure. "),  # an unclosed last block is read to the end
    ('<tool_call>{"name": "get_users", "arguments": {}}<|im_end|>', [("get_users", {})], None),
    # what the parser fails on: the whole reply is text
    ('<tool_call>{"name": "get_users"}</tool_call>', None, TEXT),
    ('<tool_call>{"name": "f", "parameters": {}}</tool_call>', None, TEXT),
    ('<tool_call>{"name": 3, "arguments": {}}</tool_call>', None, TEXT),
    ('<tool_call></tool_call>', None, TEXT),
    ('<tool_call>["get_users"]</tool_call>', None, TEXT),
])
def test_prompt_mode_reads_hermes_blocks_as_vllms_server_does(reply, calls, content):
    read = scorer("tau2bench", "conversation_messages").read_reply(Generation(text=reply + "<|im_end|>"), True)
    assert [(c["name"], c["arguments"]) for c in read.calls] == (calls or [])
    assert read.content == (reply if content is TEXT else content)


@pytest.mark.parametrize("arguments", ['"{\\"x\\": 1}"', "null", "[1]"])
def test_prompt_mode_arguments_that_are_not_an_object_end_as_infrastructure_error(arguments):
    """The server sends ``json.dumps`` of the value; upstream's ``ToolCall(arguments: dict)`` refuses a string, null
    or a list: it retries and records ``infrastructure_error``."""
    case = _cases()["mock_create_task_1"]
    reply = Generation(text='<tool_call>{"name": "get_users", "arguments": ' + arguments + "}</tool_call>")
    transcript, _ = drive(case, [reply], [text("hi")], "prompt")
    assert transcript["termination_reason"] == "infrastructure_error"
    assert "arguments are not an object" in transcript["conversation"]["error"]
