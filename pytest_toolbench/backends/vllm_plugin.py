"""The ``vllm`` backend as the plugin sees it: its options and capabilities (``VllmKind``). The engine itself
(``vllm_engine.VllmBackend``) is imported only when the run's owner builds it; this module imports no vllm, torch
or transformers, so ``pytest --help`` and xdist workers stay light.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import pytest

from ..contract.suite import Backend
from .kind import BackendKind, SuiteLookup

if TYPE_CHECKING:
    from ..plugin.options import RunOptions


@dataclasses.dataclass(frozen=True)
class VllmOptions:
    #: ``--toolbench-prompt-format``: auto, handler or chat-template
    prompt_format: str = "auto"
    tensor_parallel_size: int = 1
    dtype: str = "auto"
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    #: ``--toolbench-vllm-arg KEY=VALUE``: extra ``vllm.LLM`` arguments
    engine_args: dict[str, Any] = dataclasses.field(default_factory=dict)


class VllmKind(BackendKind):
    """Claims a run given ``--model`` (and no saved outputs to replay)."""

    name = "vllm"
    pregenerates = True
    options_type = VllmOptions

    @classmethod
    def add_options(cls, parser: pytest.Parser) -> None:
        gen = parser.getgroup("toolbench-generation")
        gen.addoption("--toolbench-prompt-format", dest="toolbench_prompt_format", default="auto",
                      choices=("auto", "handler", "chat-template"),
                      help="How prompts are written (vllm backend): auto (default): as the benchmark's official "
                           "harness writes them for the model's family where it has its own renderer (BFCL's "
                           "handlers for Qwen, Llama 3/4, Gemma 3), else the chat template; handler: the harness's "
                           "renderer, an error for an unrecognised family; chat-template: always the checkpoint's "
                           "chat template.")
        gen.addoption("--toolbench-tp", dest="toolbench_tp", type=int, default=1, metavar="N",
                      help="vLLM tensor-parallel size.")
        gen.addoption("--toolbench-dtype", dest="toolbench_dtype", default="auto", help="vLLM dtype.")
        gen.addoption("--toolbench-max-model-len", dest="toolbench_max_model_len", type=int, default=None,
                      metavar="N", help="vLLM max model length.")
        gen.addoption("--toolbench-gpu-memory-utilization", dest="toolbench_gpu_mem", type=float, default=None,
                      metavar="FRACTION", help="vLLM GPU memory utilization.")
        gen.addoption("--toolbench-vllm-arg", dest="toolbench_vllm_args", action="append", default=[],
                      metavar="KEY=VALUE",
                      help="Extra vllm.LLM argument (repeatable; VALUE parsed as JSON when it can be).")

    @classmethod
    def claims(cls, config: pytest.Config) -> bool:
        return bool(config.getoption("toolbench_model"))

    @classmethod
    def from_config(cls, config: pytest.Config, model: str | None) -> VllmOptions:
        if not model:
            raise pytest.UsageError("--toolbench-backend vllm needs --model <hf-id-or-path>")
        get = config.getoption
        return VllmOptions(prompt_format=get("toolbench_prompt_format"), tensor_parallel_size=get("toolbench_tp"),
                           dtype=get("toolbench_dtype"), max_model_len=get("toolbench_max_model_len"),
                           gpu_memory_utilization=get("toolbench_gpu_mem"),
                           engine_args=parse_vllm_args(get("toolbench_vllm_args")))

    @classmethod
    def build(cls, options: "RunOptions", suites: SuiteLookup) -> Backend:
        from .vllm_engine import VllmBackend

        return VllmBackend.from_options(options)

    @classmethod
    def check_model(cls, options: "RunOptions") -> str | None:
        from .model_source import locate_model

        if not options.model:
            return None
        return locate_model(options.model, network=not options.cache.offline).note


def parse_vllm_args(pairs: list[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise pytest.UsageError(f"--toolbench-vllm-arg expects KEY=VALUE, got {pair!r}")
        try:
            parsed[key.replace("-", "_")] = json.loads(value)
        except ValueError:
            parsed[key.replace("-", "_")] = value
    return parsed


BACKEND_KIND = VllmKind


@pytest.hookimpl
def pytest_toolbench_backend_kind(config: pytest.Config, name: str | None) -> type[BackendKind] | None:
    return VllmKind.choose(config, name)
