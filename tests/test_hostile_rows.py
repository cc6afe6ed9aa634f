"""Hostile model output through BFCL's handler rows (issue 40, item 4): regressions for what
``benchmarks/bench_hostile_rows.py`` found, each on the smallest input that showed it. The benchmark itself runs
every row's decoder, replay and generation over the seeded corpus of ``benchmarks/hostile_corpus.py``."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import REPO

from pytest_toolbench.contract.safe_values import utf8_text
from pytest_toolbench.scorer_lib.bfcl_handlers import decode_ast, recorded_answer, render
from pytest_toolbench.scorer_lib.bfcl_handlers.common import _json_calls_in_tags

sys.path.insert(0, str(REPO / "benchmarks"))
import hostile_corpus  # noqa: E402

DEEP = "[" * 10_000 + "]" * 10_000
DOC = {"name": "get_weather", "description": "d",
       "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def test_a_tool_call_body_nested_past_the_recursion_limit_is_skipped_as_upstream_skips_it():
    # upstream's _extract_tool_calls: ``except Exception: pass`` around json.loads (RecursionError included)
    text = f"<tool_call>\n{DEEP}\n</tool_call>\n<tool_call>\n" + '{"name": "f", "arguments": {}}' + "\n</tool_call>"
    assert _json_calls_in_tags(text) == [{"name": "f", "arguments": {}}]


@pytest.mark.parametrize("handler", ["QwenFCHandler", "Granite4FCHandler", "NanbeigeFCHandler", "PelicanVLFCHandler"])
def test_a_later_prompt_renders_after_a_reply_nested_past_the_recursion_limit(handler):
    """The generation path re-reads earlier replies when it renders a conversation's next step: a 10,000-deep reply
    stopped the whole run (RecursionError out of the renderer)."""
    messages = [{"role": "user", "content": "weather?"},
                {"role": "assistant", "content": f"<tool_call>\n{DEEP}\n</tool_call>"},
                {"role": "user", "content": "again"}]
    assert "again" in render(handler, messages, [DOC], model_name="m", step=1)


def test_hammer_reads_a_reply_nested_past_the_recursion_limit_as_no_call():
    # HammerHandler.decode_ast: a bare ``except`` around json.loads gives ``[]``
    assert decode_ast("HammerHandler", recorded_answer("HammerHandler", DEEP), "Python", None) == []


def test_a_lone_surrogate_is_written_as_its_escape_text_for_utf8_channels():
    assert utf8_text("a\ud800b") == "a\\ud800b"
    assert utf8_text("plain ✓ \x00") == "plain ✓ \x00"


def _backend(tmp_path, row):
    from pytest_toolbench.backends.vllm.engine import VllmBackend

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ 'x' }}"}))
    return VllmBackend(str(folder), handler_row=row)


def _task(messages, step=1):
    from pytest_toolbench.contract.suite import Case, Request, Task

    return Task(Case(suite="bfcl", case_id="multi_turn_base_0", category="multi_turn_base", payload={}),
                Request(messages=messages, tools=[{"type": "function", "function": DOC}]), step)


class _RustLikeTokenizer:
    """Refuses a lone surrogate as the Rust ``tokenizers`` do (TypeError: TextEncodeInput must be ...)."""

    def __call__(self, texts, add_special_tokens):
        for text in texts:
            text.encode("utf-8")  # UnicodeEncodeError (a ValueError) on a lone surrogate, like the real refusal
        return {"input_ids": [[len(t)] for t in texts]}


def test_a_prompt_holding_a_lone_surrogate_is_tokenized_not_a_failed_run(tmp_path):
    backend = _backend(tmp_path, "Qwen/Qwen3-0.6B-FC")
    backend._tokenizer_obj = _RustLikeTokenizer()
    ids = backend.encode([_task([{"role": "user", "content": "q"}])], ["reply \ud800 fed back"])
    assert ids == [[len("reply \\ud800 fed back")]]


def test_a_prompt_its_renderer_cannot_write_fails_that_request_only(tmp_path):
    """MistralFCHandler stores an id in each call of a JSON reply: a reply ``[1, 2]`` made the next step's render
    raise TypeError, which stopped the run; now that request is answered at once with an error, the others go on."""
    backend = _backend(tmp_path, "mistralai/Ministral-8B-Instruct-2410")
    backend._tokenizer_obj = _RustLikeTokenizer()
    bad = _task([{"role": "user", "content": "q"}, {"role": "assistant", "content": "[1, 2]"},
                 {"role": "user", "content": "again"}])
    good = _task([{"role": "user", "content": "q"}], step=0)
    batch = backend.start_batch([bad, good])
    runnable, early = backend.prepare_part(batch, [bad, good], [0, 1], context=100_000)
    assert runnable == [1]
    assert [index for index, _ in early] == [0]
    generation = early[0][1]
    assert generation.text == "" and generation.finish_reason == "error"


def test_the_corpus_is_seeded_and_round_trips_its_raw_bytes(tmp_path):
    one, two = hostile_corpus.corpus(3), hostile_corpus.corpus(3)
    assert one == two and one != hostile_corpus.corpus(4)
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(hostile_corpus.line_bytes(r) for r in one))
    assert b"\xff\xfe" in path.read_bytes()  # bytes that are not UTF-8, raw in the JSON string
    assert hostile_corpus.read_corpus(path) == one
    payloads = {r["payload"] for r in one}
    assert {"huge_int", "deep_list", "lone_surrogate", "truncated", "megabyte_reply", "nul", "invalid_utf8"} <= payloads


# -- issue 40 item 5: where a developer looks -----------------------------------------------------------------------

def test_a_failure_line_shows_the_start_of_the_output_beside_the_decoded_calls():
    from pytest_toolbench.contract.suite import CaseRecord
    from pytest_toolbench.report.failures import OUTPUT_PREVIEW, failure_line

    hostile = "[get_weather(city='\x00\nParis\ud800')]" + "x" * 500
    line = failure_line(CaseRecord("bfcl", "simple_python_0", "simple_python", False, "ast_decoder:decoder_failed",
                                   output=hostile, explanation="Invalid syntax.\nFailed to decode",
                                   decoded=[{"get_weather": {"city": "Paris"}}]))
    assert "\n" not in line
    assert line.startswith("bfcl::simple_python_0: ast_decoder:decoder_failed: Invalid syntax. / Failed to decode "
                           '| output: "[get_weather(city=\'\\u0000\\nParis\\ud800\')]xxx')
    assert f"… ({len(hostile):,} characters) | decoded: " + '[{"get_weather": {"city": "Paris"}}]' in line
    assert line.encode("utf-8")  # writable on any terminal
    assert len(line) < 400 and OUTPUT_PREVIEW == 80
    empty = failure_line(CaseRecord("bfcl", "c", "simple_python", False, "e", explanation="why"))
    assert empty == "bfcl::c: e: why | output: (empty)"


def _suite(name, header=None):
    """A suite's summary as the run makes it: BFCL's with the run facts its scorer declares (``header_facts``)."""
    from pytest_toolbench.run.summary import SuiteSummary
    from pytest_toolbench.suites.bfcl.scorer import header_facts

    facts = tuple(header_facts(header)) if name == "bfcl" and header is not None else ()
    return SuiteSummary(name, name.upper(), {"description": f"{name} data"}, 2, 1, [], {}, {}, {},
                        header_facts=facts)


def _header(**extra):
    prompt_format = {"suites": {"bfcl": {"renderer": "bfcl-handler:QwenFCHandler"},
                                "acebench": {"renderer": "chat-template"}}}
    return {"backend": "vllm", "model": "/ckpt", "mode": "prompt",
            "fingerprint": {"prompt_format": prompt_format},
            "sampling": {"temperature": 0.001, "sent": {"bfcl": {"requests": 2}, "acebench": {"requests": 3}}},
            **extra}


def test_the_run_header_names_the_bfcl_row_or_says_there_is_none():
    from pytest_toolbench.report import markdown, terminal
    from pytest_toolbench.report.facts import run_facts
    from pytest_toolbench.report.run_report import build
    from pytest_toolbench.run.summary import RunSummary
    from pytest_toolbench.suites.bfcl.scorer.report_notes import NO_ROW

    def run(header, suite):
        return RunSummary(header=header, suites=[_suite(suite, header)])

    row = {"row": "Qwen/Qwen3-0.6B-FC", "handler": "QwenFCHandler", "mode": "FC", "matched": "named", "note": "."}
    named = run(_header(bfcl_row=row), "bfcl")
    expected = "Qwen/Qwen3-0.6B-FC (QwenFCHandler, FC; named by --toolbench-bfcl-model)"
    assert f"bfcl row: {expected}" in terminal.render(build(named))
    assert ("BFCL row", expected) in run_facts(named)
    assert f"| BFCL row | {expected} |" in markdown.render(build(named)).splitlines()
    none = {"row": None, "handler": None, "mode": None, "matched": "none", "note": "."}
    chat = run(_header(bfcl_row=none), "bfcl")
    assert any(line.startswith(f"bfcl row: {NO_ROW}") for line in terminal.render(build(chat)))
    replay = run({"backend": "replay", "replay": "results/"}, "bfcl")
    assert any(line.startswith(f"bfcl row: {NO_ROW} (replayed outputs") for line in terminal.render(build(replay)))
    # no BFCL suite ran, or the reference answers: no row line
    assert not any(line.startswith("bfcl row") for line in terminal.render(
        build(run(_header(bfcl_row=row), "acebench"))))
    assert not any(line.startswith("bfcl row") for line in terminal.render(build(run({"backend": "gold"}, "bfcl"))))


def test_the_markdown_and_html_run_tables_describe_only_the_suites_that_ran():
    from pytest_toolbench.report import html, markdown
    from pytest_toolbench.report.facts import run_facts
    from pytest_toolbench.report.run_report import build
    from pytest_toolbench.run.summary import RunSummary

    summary = RunSummary(header=_header(), suites=[_suite("bfcl")])
    facts = dict(run_facts(summary))
    assert facts["Prompt format"] == "bfcl: bfcl-handler:QwenFCHandler"  # no acebench, no "other suites"
    assert "Sent (bfcl)" in facts and "Sent (acebench)" not in facts
    text = markdown.render(build(summary))
    assert "acebench" not in text
    page = html.summary_html(build(summary))
    assert "acebench" not in page
    both = dict(run_facts(RunSummary(header=_header(), suites=[_suite("bfcl"), _suite("nestools")])))
    assert both["Prompt format"] == "bfcl: bfcl-handler:QwenFCHandler; other suites: chat-template"


def test_the_endpoint_fails_only_the_request_its_renderer_cannot_write():
    from pytest_toolbench.backends.openai_endpoint import OpenAIEndpointBackend

    backend = OpenAIEndpointBackend("http://127.0.0.1:9/v1", "some-model", mode="prompt",
                                    handler_row="mistralai/Ministral-8B-Instruct-2410")
    bad = _task([{"role": "user", "content": "q"}, {"role": "assistant", "content": "[1, 2]"},
                 {"role": "user", "content": "again"}])
    generation = backend._complete(bad)  # no request is sent: the prompt cannot be written
    assert generation.text == "" and generation.finish_reason == "error"
    assert "could not be rendered: TypeError" in generation.parse_error


def _naive_closing(tokens, index, opens, closes):
    depth = 0
    for position in range(index, len(tokens)):
        text = tokens[position].text
        if text in opens:
            depth += 1
        elif text in closes:
            depth -= 1
            if depth == 0:
                return position
    return None


def test_the_look_ahead_for_arrow_functions_and_lambdas_finds_the_same_bracket_in_one_pass():
    """The JavaScript arrow-function and Java lambda look-ahead scanned to the matching bracket from every nesting
    level (a 1 MB reply of nested parentheses: minutes); the one-pass table finds the very same token."""
    import random

    from pytest_toolbench.suites.bfcl.scorer.decoders.common import Token, TokenStream

    draw = random.Random(7)
    for _ in range(300):
        texts = [draw.choice(["(", ")", "[", "]", "{", "}", "x", "=>", "'('"]) for _ in range(draw.randrange(1, 40))]
        tokens = [Token("op", text, i, i + 1) for i, text in enumerate(texts)] + [Token("eof", "", 99, 99)]
        stream = TokenStream(tokens)
        for index, text in enumerate(texts):
            if text == "(":
                assert stream.closing(index) == _naive_closing(tokens, index, ("(", "[", "{"), (")", "]", "}"))
                assert stream.closing(index, "(", ")") == _naive_closing(tokens, index, ("(",), (")",))


@pytest.mark.parametrize("language", ["javascript", "java"])
def test_deeply_nested_parentheses_are_a_decoder_failure(language):
    from pytest_toolbench.suites.bfcl.scorer.decoding import DecodeError, decode

    with pytest.raises(DecodeError, match="nested too deeply"):
        decode("(" * 20_000 + ")" * 20_000, language)
    assert decode("[f(a=(x) => x)]" if language == "javascript" else "[f(a=(x) -> x)]", language)
