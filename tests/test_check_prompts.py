"""``--toolbench-check-prompts``: the pre-flight report on a checkpoint (no engine): per suite the renderer and decoder,
the BFCL row matched, the chat template against the handler's text on canonical conversations, the known traps; the
exit status says whether every selected suite gets its official renderer.

The checkpoints are real tokenizers (a small BPE trained here, no torch) carrying the official chat templates of
``tests/data/chat_templates``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_toolbench.prompting.check import check_prompts
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import VllmOptions

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = REPO / "tests/data/chat_templates"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|start_header_id|>",
           "<|end_header_id|>", "<|eot_id|>"]


def checkpoint(folder: Path, model_type: str, template: str) -> Path:
    tokenizers = pytest.importorskip("tokenizers")
    fast_class = pytest.importorskip("transformers").PreTrainedTokenizerFast
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(["What is the weather in Paris?"] * 4, trainer=tokenizers.trainers.BpeTrainer(
        vocab_size=300, special_tokens=SPECIAL, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    fast = fast_class(tokenizer_object=tokenizer, bos_token="<|begin_of_text|>", eos_token="<|im_end|>")
    fast.chat_template = (TEMPLATES / template).read_text(encoding="utf-8")
    folder.mkdir(parents=True)
    fast.save_pretrained(folder)
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    return folder


def test_a_qwen_checkpoint_gets_the_handler_and_its_traps_are_named(tmp_path):
    folder = checkpoint(tmp_path / "ft-step-1200", "qwen2", "Qwen2.5-7B-Instruct.jinja")
    report = check_prompts(VllmBackend(str(folder)), ["bfcl", "rotbench"])
    bfcl, rotbench = report.suites
    assert (bfcl.renderer, bfcl.official, rotbench.official) == ("bfcl-handler:QwenHandler", True, True)
    assert report.row["matched"] == "family" and report.row["handler"] == "QwenHandler"
    assert bfcl.diffs["first request"] == []  # the template agrees with QwenHandler on a first request ...
    assert any("<think>" in line for line in bfcl.diffs["later step (reply with <think>, two tool results, "
                                                         "follow-up)"])  # ... not once a reply has reasoning
    traps = "\n".join(bfcl.traps)
    assert "inside <think>...</think> is dropped" in traps
    assert "dropped by the handler and passed back by the template" in traps
    assert "default system message" in traps
    assert "tool docs appear 2 times" in traps
    assert not report.missing and report.lines()[-1].startswith("check-prompts: OK")
    # a named row wins over the family, and says so
    named = check_prompts(VllmBackend(str(folder), handler_row="Qwen/Qwen3-8B"), ["bfcl"])
    assert named.row["row"] == "Qwen/Qwen3-8B" and named.row["matched"] == "named"
    # the chat template asked for: BFCL has no official renderer, listed
    template_only = check_prompts(VllmBackend(str(folder), settings=VllmOptions(prompt_format="chat-template")),
                                  ["bfcl"])
    assert [check.suite for check in template_only.missing] == ["bfcl"]
    assert template_only.lines()[-1].startswith("check-prompts: FAILED: no official renderer for bfcl")


def test_llama_date_lines_and_an_unknown_family(tmp_path):
    llama = checkpoint(tmp_path / "llama", "llama", "Llama-3.1-8B-Instruct.jinja")
    report = check_prompts(VllmBackend(str(llama)), ["bfcl"])
    assert report.suites[0].renderer == "bfcl-handler:LlamaHandler"
    assert any("date lines" in trap for trap in report.suites[0].traps)
    unknown = checkpoint(tmp_path / "other", "mistral", "Qwen2.5-7B-Instruct.jinja")
    report = check_prompts(VllmBackend(str(unknown)), ["bfcl"])
    assert report.missing and "not comparable with the leaderboard" in report.missing[0].why_not


def test_the_option_reports_and_exits_without_generating(pytester, tmp_path):
    """End to end on the example suite (its harness uses the chat template: official): exit 0, no generation."""
    shutil.copytree(REPO / "examples/echo_suite", pytester.path, dirs_exist_ok=True)
    folder = checkpoint(tmp_path / "ckpt", "qwen2", "Qwen3-0.6B.jinja")
    # a valid safetensors file holding no tensor: the check never loads weights, the run's model check wants a file
    (folder / "model.safetensors").write_bytes(len(b"{}").to_bytes(8, "little") + b"{}")
    result = pytester.runpytest("suites", "--toolbench-data=data", "-p", "no:randomly",
                                f"--model={folder}", "--toolbench-check-prompts")
    result.stdout.fnmatch_lines(["*check-prompts: model*", "*echo: renderer checkpoint's chat template [[]official]*",
                                 "*check-prompts: OK*"])
    assert result.ret == 0
    assert "pre-generating" not in result.stdout.str() and "not_run" not in result.stdout.str()


def test_a_row_whose_prompt_is_not_the_checkpoints_own_format_is_a_warning_not_ok(tmp_path):
    """A Qwen2.5 checkpoint asked to be Qwen3-0.6B-FC: QwenFCHandler's first request is not what the Qwen2.5 template
    writes (the format the checkpoint was trained on): a WARNING with its consequence, no "OK" line, exit 0."""
    folder = checkpoint(tmp_path / "qwen25", "qwen2", "Qwen2.5-7B-Instruct.jinja")
    report = check_prompts(VllmBackend(str(folder), handler_row="Qwen/Qwen3-0.6B-FC"), ["bfcl"])
    (bfcl,) = report.suites
    assert bfcl.official and bfcl.renderer == "bfcl-handler:QwenFCHandler"
    assert bfcl.diffs["first request"]
    lines = report.lines()
    assert not any(line.startswith("check-prompts: OK") for line in lines)
    (warning,) = [line for line in lines if line.startswith("check-prompts: WARNING: ")]
    assert "BFCL row Qwen/Qwen3-0.6B-FC (QwenFCHandler)" in warning
    assert f"({len(bfcl.diffs['first request'])} diff lines on the first request" in warning
    assert "not trained on" in warning and "--toolbench-prompt-format=chat-template" in warning
    assert not report.missing  # a warning, not a failure


def test_the_end_to_end_check_ends_on_its_own_line_without_an_exit_banner(pytester, tmp_path):
    shutil.copytree(REPO / "examples/echo_suite", pytester.path, dirs_exist_ok=True)
    folder = checkpoint(tmp_path / "ckpt", "qwen2", "Qwen3-0.6B.jinja")
    (folder / "model.safetensors").write_bytes(len(b"{}").to_bytes(8, "little") + b"{}")
    result = pytester.runpytest("suites", "--toolbench-data=data", "-p", "no:randomly",
                                f"--model={folder}", "--toolbench-check-prompts")
    assert result.ret == 0
    out = result.stdout.str() + result.stderr.str()
    assert "check-prompts: OK" in out
    assert "!!!" not in out and "Exit:" not in out and "Traceback" not in out
    assert " passed" not in out and "PASSED" not in out  # no case ran
