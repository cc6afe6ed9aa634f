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
    from pathlib import Path

    from ..run.options import RunOptions


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
    #: ``--toolbench-replicas``: vLLM engines as Ray actors (1: one in-process engine, no Ray, unless
    #: ``ray_address`` is given); ``ray_address``: the cluster, None for a local Ray (``replicas.py``)
    replicas: int = 1
    ray_address: str | None = None
    #: ``--toolbench-conversations``: continuous (each conversation's next step sent as soon as it exists) or rounds
    conversations: str = "continuous"
    #: vLLM's log to a file in the cache folder, its warnings once on the terminal (False with ``-v``: vLLM's own)
    engine_log_to_file: bool = True


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
        from . import replicas  # light: ray is imported only when replicas start

        replicas.add_options(gen)
        gen.addoption("--toolbench-dtype", dest="toolbench_dtype", default="auto", help="vLLM dtype.")
        gen.addoption("--toolbench-max-model-len", dest="toolbench_max_model_len", type=int, default=None,
                      metavar="N", help="vLLM max model length.")
        gen.addoption("--toolbench-gpu-memory-utilization", dest="toolbench_gpu_mem", type=float, default=None,
                      metavar="FRACTION", help="vLLM GPU memory utilization.")
        gen.addoption("--toolbench-vllm-arg", dest="toolbench_vllm_args", action="append", default=[],
                      metavar="KEY=VALUE",
                      help="Extra vllm.LLM argument (repeatable; VALUE parsed as JSON when it can be).")
        gen.addoption("--toolbench-conversations", dest="toolbench_conversations", default="continuous",
                      choices=("continuous", "rounds"),
                      help="How interactive cases run on one vLLM engine: continuous (default): each conversation's "
                           "next request goes to the engine as soon as its previous answer has arrived and its "
                           "tools have run; rounds: step k of every live conversation in one batch, then step k+1 "
                           "(the same requests and answers; engine replicas always run in rounds).")

    @classmethod
    def claims(cls, config: pytest.Config) -> bool:
        return bool(config.getoption("toolbench_model"))

    @classmethod
    def from_config(cls, config: pytest.Config, model: str | None) -> VllmOptions:
        if not model:
            raise pytest.UsageError("--toolbench-backend vllm needs --model <hf-id-or-path>")
        get = config.getoption
        replicas, ray_address = check_replicas(config, cls.name)
        return VllmOptions(prompt_format=get("toolbench_prompt_format"), tensor_parallel_size=get("toolbench_tp"),
                           dtype=get("toolbench_dtype"), max_model_len=get("toolbench_max_model_len"),
                           gpu_memory_utilization=get("toolbench_gpu_mem"),
                           engine_args=parse_vllm_args(get("toolbench_vllm_args")),
                           replicas=replicas, ray_address=ray_address,
                           conversations=get("toolbench_conversations"),
                           engine_log_to_file=(config.getoption("verbose", 0) or 0) <= 0)

    @classmethod
    def build(cls, options: "RunOptions", suites: SuiteLookup) -> Backend:
        from .vllm_engine import backend_from_options

        return backend_from_options(options)

    @classmethod
    def describe(cls, options: "RunOptions") -> str:
        what = super().describe(options)
        engine = options.backend_options
        log = engine_log_file(options)
        if log is not None:
            what += f"; vLLM's log: {log} (its warnings shown once; -v shows it all here)"
        if engine.replicas > 1 or engine.ray_address:
            what += f", {engine.replicas} engine replica{'s' if engine.replicas > 1 else ''} on Ray " + \
                (f"at {engine.ray_address}" if engine.ray_address else "(local, started for the run)")
        return what

    @classmethod
    def check_unchosen(cls, config: pytest.Config) -> None:
        check_replicas(config, None)

    @classmethod
    def check_model(cls, options: "RunOptions") -> str | None:
        from .model_source import check_engine_installed, check_tokenizer_files, locate_model

        if not options.model:
            return None
        engine = options.backend_options
        # offline scoring generates nothing; on a Ray cluster (an address) the engines run elsewhere
        if not options.cache.offline and engine.ray_address is None:
            check_engine_installed(options.model)
        note = locate_model(options.model, network=not options.cache.offline).note
        check_tokenizer_files(options.model, engine.engine_args)
        return note


def engine_log_file(options: "RunOptions") -> "Path | None":
    """Where vLLM's log goes (``vllm_logging``): the cache folder's ``vllm.log``; None with ``-v``, or when the user
    configured vLLM's logging themselves (``VLLM_LOGGING_CONFIG_PATH``, ``VLLM_CONFIGURE_LOGGING=0``)."""
    import os
    from pathlib import Path

    from .vllm_logging import LOG_NAME

    engine = options.backend_options
    if not getattr(engine, "engine_log_to_file", False) or os.environ.get("VLLM_LOGGING_CONFIG_PATH") or \
            os.environ.get("VLLM_CONFIGURE_LOGGING", "1") == "0":
        return None
    return Path(options.cache.cache_dir) / LOG_NAME


def check_replicas(config: pytest.Config, backend: str | None) -> tuple[int, str | None]:
    """``--toolbench-replicas`` and ``--toolbench-ray-address`` of the run, each checked (one usage error): the
    vllm backend's own options, also checked when another backend is chosen (they would be ignored there)."""
    from . import replicas

    try:
        return replicas.resolve_options(config.getoption("toolbench_replicas", 1),
                                        config.getoption("toolbench_ray_address", None), backend)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


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
