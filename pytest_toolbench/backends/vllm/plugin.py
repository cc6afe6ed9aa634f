"""The ``vllm`` backend as the plugin sees it: its kind (``VllmKind``: options, capabilities, how it is built) and
its ``pytest_toolbench_backend_kind`` hookimpl. Imports no vllm, torch, transformers or ray (the engine modules
import them inside methods, when an engine starts), so ``pytest --help`` and xdist workers stay light.
"""

from __future__ import annotations

import pytest

from pytest_toolbench.backends.kind import BackendKind, RunOptions, SuiteLookup
from pytest_toolbench.backends.model_source import check_engine_installed, check_tokenizer_files, locate_model
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import VllmOptions, add_options, engine_log_file, parse_engine_args, \
    resolve_replicas
from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
from pytest_toolbench.contract.suite import Backend


class VllmKind(BackendKind):
    """Claims a run given ``--model`` (and no saved outputs to replay)."""

    name = "vllm"
    pregenerates = True
    options_type = VllmOptions

    @classmethod
    def add_options(cls, parser: pytest.Parser) -> None:
        add_options(parser.getgroup("toolbench-generation"))

    @classmethod
    def claims(cls, config: pytest.Config) -> bool:
        return bool(config.getoption("toolbench_model"))

    @classmethod
    def from_config(cls, config: pytest.Config, model: str | None) -> VllmOptions:
        if not model:
            raise pytest.UsageError("--toolbench-backend vllm needs --model <hf-id-or-path>")
        get = config.getoption
        replicas, ray_address = check_replicas(config, cls.name)
        try:
            engine_args = parse_engine_args(get("toolbench_vllm_args"))
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
        return VllmOptions(prompt_format=get("toolbench_prompt_format"), tensor_parallel_size=get("toolbench_tp"),
                           dtype=get("toolbench_dtype"), max_model_len=get("toolbench_max_model_len"),
                           gpu_memory_utilization=get("toolbench_gpu_mem"), engine_args=engine_args,
                           replicas=replicas, ray_address=ray_address,
                           conversations=get("toolbench_conversations"),
                           engine_log_to_file=(config.getoption("verbose", 0) or 0) <= 0)

    @classmethod
    def build(cls, options: RunOptions, suites: SuiteLookup) -> Backend:
        """One engine in this process, or ``--toolbench-replicas`` engines as Ray actors (``replicas.py``), which
        render, tokenize and parse through the same :class:`VllmBackend`."""
        engine = VllmBackend.from_options(options, SuitePrompts.of_run(suites))
        if not options.backend_options.uses_ray:
            return engine
        return ReplicatedVllmBackend.from_options(options, engine)

    @classmethod
    def describe(cls, options: RunOptions) -> str:
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
    def check_model(cls, options: RunOptions) -> str | None:
        if not options.model:
            return None
        engine = options.backend_options
        # offline scoring generates nothing; on a Ray cluster (an address) the engines run elsewhere
        if not options.cache.offline and engine.ray_address is None:
            check_engine_installed(options.model)
        note = locate_model(options.model, network=not options.cache.offline).note
        check_tokenizer_files(options.model, engine.engine_args)
        return note


def check_replicas(config: pytest.Config, backend: str | None) -> tuple[int, str | None]:
    """``--toolbench-replicas`` and ``--toolbench-ray-address`` of the run, each checked (one usage error): the
    vllm backend's own options, also checked when another backend is chosen (they would be ignored there)."""
    try:
        return resolve_replicas(config.getoption("toolbench_replicas", 1),
                                config.getoption("toolbench_ray_address", None), backend)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


BACKEND_KIND = VllmKind


@pytest.hookimpl
def pytest_toolbench_backend_kind(config: pytest.Config, name: str | None) -> type[BackendKind] | None:
    return VllmKind.choose(config, name)
