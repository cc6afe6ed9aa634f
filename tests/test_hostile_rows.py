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
    return VllmBackend(str(folder), bfcl_row=row)


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
