"""Native tool-call parsers on hand-written model texts (no engine needed: these always run)."""

from __future__ import annotations

import pytest

from pytest_toolbench.parsing.tool_calls import (
    PARSERS,
    ParseError,
    UnknownToolFormat,
    detect_parser,
    parse_hermes,
    parse_llama3_json,
    parse_mistral,
    parse_pythonic,
    parse_tool_calls,
)

# --- hermes / qwen ---------------------------------------------------------------------------------------------------


def test_hermes_two_calls_with_content_and_end_token():
    text = (
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
        "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call><|im_end|>"
    )
    assert parse_hermes(text) == [
        {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
        {"name": "get_time", "arguments": {}},
    ]


def test_hermes_plain_answer_has_no_calls():
    assert parse_hermes("The capital of France is Paris.<|im_end|>") == []


def test_hermes_unclosed_final_block_is_accepted_when_json_is_complete():
    text = '<tool_call>\n{"name": "f", "arguments": {"x": 1}}<|im_end|>'
    assert parse_hermes(text) == [{"name": "f", "arguments": {"x": 1}}]


def test_hermes_string_encoded_arguments_are_decoded():
    text = '<tool_call>{"name": "f", "arguments": "{\\"x\\": [1, 2]}"}</tool_call>'
    assert parse_hermes(text) == [{"name": "f", "arguments": {"x": [1, 2]}}]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {"x": 1}</tool_call>',  # lost closing brace
        '<tool_call>{"name": "f", "arguments": {}}}</tool_call>',  # extra data
        '<tool_call>{"arguments": {}}</tool_call>',  # no name
        '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',  # arguments not an object
        '<tool_call>["f"]</tool_call>',
        "<tool_call>",  # truncated right after the tag
        '<tool_call>{"name": "f", "arguments": {"x": ',  # truncated by max_tokens
    ],
)
def test_hermes_malformed_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_hermes(text)


# --- llama 3 JSON ----------------------------------------------------------------------------------------------------


def test_llama3_python_tag_with_parameters():
    text = '<|python_tag|>{"name": "search", "parameters": {"query": "pytest"}}<|eom_id|>'
    assert parse_llama3_json(text) == [{"name": "search", "arguments": {"query": "pytest"}}]


def test_llama3_bare_json_several_calls_separated_by_semicolons():
    text = '{"name": "a", "parameters": {"x": 1}}; {"name": "b", "arguments": {"y": "z"}}<|eot_id|>'
    assert parse_llama3_json(text) == [
        {"name": "a", "arguments": {"x": 1}},
        {"name": "b", "arguments": {"y": "z"}},
    ]


def test_llama3_plain_answer_has_no_calls():
    assert parse_llama3_json("I cannot help with that.<|eot_id|>") == []


@pytest.mark.parametrize(
    "text",
    [
        '<|python_tag|>brave_search.call(query="x")',  # built-in tool code, not JSON
        '{"name": "a", "parameters": {"x": 1}} {"name": "b", "parameters": {}}',  # missing separator
        '{"name": "a", "parameters": {"x": 1}',
        "<|python_tag|><|eom_id|>",
        '{"parameters": {"x": 1}}',
    ],
)
def test_llama3_malformed_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_llama3_json(text)


# --- mistral ---------------------------------------------------------------------------------------------------------


def test_mistral_json_list_with_ids():
    text = '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}, "id": "abcdefghi"}, {"name": "g", "arguments": {}}]</s>'
    assert parse_mistral(text) == [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]


def test_mistral_v11_name_args_form():
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}[TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e[ARGS]{}</s>'
    assert parse_mistral(text) == [
        {"name": "get_weather", "arguments": {"city": "Rome"}},
        {"name": "get_time", "arguments": {}},
    ]


def test_mistral_plain_answer_has_no_calls():
    assert parse_mistral("Sure, here is the answer.</s>") == []


@pytest.mark.parametrize(
    "text",
    ["[TOOL_CALLS]", '[TOOL_CALLS][{"name": "f", "arguments": {]', "[TOOL_CALLS]get_weather city=Rome", "[TOOL_CALLS][1]"],
)
def test_mistral_malformed_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_mistral(text)


# --- pythonic --------------------------------------------------------------------------------------------------------


def test_pythonic_calls_with_literals_and_dotted_names():
    text = '[get_weather(city="Paris", units=None), math.factorial(n=-5), f(xs=[1, (2, 3)], d={"k": True})]<|eot|>'
    assert parse_pythonic(text) == [
        {"name": "get_weather", "arguments": {"city": "Paris", "units": None}},
        {"name": "math.factorial", "arguments": {"n": -5}},
        {"name": "f", "arguments": {"xs": [1, [2, 3]], "d": {"k": True}}},
    ]


def test_pythonic_llama4_wrappers_are_removed():
    assert parse_pythonic("<|python_start|>[f(a=1)]<|python_end|><|eom|>") == [{"name": "f", "arguments": {"a": 1}}]


def test_pythonic_plain_answer_has_no_calls():
    assert parse_pythonic("[1] is a footnote, not a call.") == []
    assert parse_pythonic("The answer is 42.") == []


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=1), g(b=2]",  # syntax error
        "[f(1)]",  # positional argument
        "[f(a=open('/etc/passwd'))]",  # a call as a value is never evaluated
        "[f(a=__import__('os').system('true'))]",
        "[f(**kw)]",
        "[f(a=1), 2]",
        "[f(a={1, 2j})]",
        "[f(a=1)] + [g(b=2)]",
    ],
)
def test_pythonic_malformed_or_unsafe_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_pythonic(text)


# --- robustness and registry -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize(
    "text",
    [
        "",
        "<tool_call>" + "[" * 50_000,
        "[TOOL_CALLS]" + "[" * 50_000,
        "<|python_tag|>" + "{\"a\":" * 50_000,
        "[f(a=" + "[" * 50_000 + ")]",
        "\x00\udcff<tool_call>\ufffd</tool_call>",
    ],
    ids=["empty", "hermes-deep", "mistral-deep", "llama-deep", "pythonic-deep", "garbage"],
)
def test_parsers_raise_only_parse_error(parser, text):
    try:
        result = parse_tool_calls(text, parser)
    except ParseError:
        return
    assert isinstance(result, list)


def test_unknown_parser_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown tool-call parser"):
        parse_tool_calls("x", "nope")


@pytest.mark.parametrize(
    "template, expected",
    [
        ("{% for tool in tools %}{{ tool | tojson }}{% endfor %}<tool_call>\\n{\"name\": ...}\\n</tool_call>", "hermes"),
        ("{{ '[AVAILABLE_TOOLS]' }}{{ tools|tojson }}{{ '[/AVAILABLE_TOOLS]' }}{{ '[TOOL_CALLS]' }}", "mistral"),
        ("<|begin_of_text|>... you MUST put it in the format of [func_name1(params_name1=params_value1)]", "pythonic"),
        ("{%- if tool_call %}<|python_start|>{{ call }}<|python_end|>{% endif %}<|eom|>", "pythonic"),
        ('Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
         "{{- '<|eom_id|>' }}", "llama3_json"),
        ("{{- '<|python_tag|>' + tool_call.name }}", "llama3_json"),
    ],
)
def test_detect_parser(template, expected):
    assert detect_parser(template) == expected


def test_detect_parser_unknown_template():
    with pytest.raises(UnknownToolFormat):
        detect_parser("{% for m in messages %}{{ m.content }}{% endfor %}")
