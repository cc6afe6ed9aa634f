"""The ``vllm`` backend as the core sees it before one is built: its kind (``VllmKind``: options, capabilities, how
it is built; its ``pytest_toolbench_backend_kind`` hookimpl is in ``plugin/backend_kinds.py``). Imports no vllm,
torch, transformers or ray (the engine modules import them inside methods, when an engine starts), so
``pytest --help`` and xdist workers stay light.
"""

from __future__ import annotations

from pytest_toolbench.backends.kind import BackendKind, OptionValues, RunOptions, SuiteLookup
from pytest_toolbench.backends.model_source import check_engine_installed, check_tokenizer_files, locate_model
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import OPTION_SPECS, VllmOptions, engine_log_file, parse_engine_args, \
    resolve_replicas
from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
from pytest_toolbench.contract.errors import UsageProblem
from pytest_toolbench.contract.suite import Backend


class VllmKind(BackendKind):
    """Claims a run given ``--model`` (and no saved outputs to replay)."""

    name = "vllm"
    pregenerates = True
    options_type = VllmOptions
    option_specs = OPTION_SPECS

    @classmethod
    def claims(cls, given: OptionValues) -> bool:
        return bool(given["toolbench_model"])

    @classmethod
    def from_values(cls, given: OptionValues, model: str | None) -> VllmOptions:
        if not model:
            raise UsageProblem("--toolbench-backend vllm needs --model <hf-id-or-path>")
        get = given.__getitem__
        replicas, ray_address = check_replicas(given, cls.name)
        try:
            engine_args = parse_engine_args(get("toolbench_vllm_args"))
        except ValueError as error:
            raise UsageProblem(str(error)) from None
        return VllmOptions(prompt_format=get("toolbench_prompt_format"), tensor_parallel_size=get("toolbench_tp"),
                           dtype=get("toolbench_dtype"), max_model_len=get("toolbench_max_model_len"),
                           gpu_memory_utilization=get("toolbench_gpu_mem"), engine_args=engine_args,
                           replicas=replicas, ray_address=ray_address,
                           conversations=get("toolbench_conversations"),
                           engine_log_to_file=(given.get("verbose", 0) or 0) <= 0)

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
    def check_unchosen(cls, given: OptionValues) -> None:
        check_replicas(given, None)

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


def check_replicas(given: OptionValues, backend: str | None) -> tuple[int, str | None]:
    """``--toolbench-replicas`` and ``--toolbench-ray-address`` of the run, each checked (one usage error): the
    vllm backend's own options, also checked when another backend is chosen (they would be ignored there)."""
    try:
        return resolve_replicas(given.get("toolbench_replicas", 1), given.get("toolbench_ray_address"), backend)
    except ValueError as error:
        raise UsageProblem(str(error)) from None
