"""The in-process vLLM backend: one ``vllm.LLM`` owned by the calling process, every task in one batched call.

Why in-process and offline (``LLM.generate`` on token ids) rather than a server: no HTTP overhead, whole-run
batching sorted longest-first (so OOMs surface early and the ETA is an upper bound), prefix caching across shared
system prompts and tool docs, and no dependence on server-side tool parsers (design notes R1, R4).

The backend is built from three parts of this package: prompt preparation (``prompts.PromptPreparation``: tokenizer,
chat template, renderer, token ids), request preparation (``batch.BatchPreparation``: sampling, over-long prompts,
the engine's order) and the engine at work (``stream``: batched, streamed, conversations), run by the one
``generate`` skeleton (``executor.generate_with``). Decoding keeps special tokens and does not insert spaces between
them, so ``Generation.text`` is exactly what the model wrote.

vllm, torch and transformers are imported inside methods only.
"""

from __future__ import annotations

import gc
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Sequence

from pytest_toolbench.backends.common import (
    MODES,
    ChunkCallback,
    ModelBackend,
    ProgressCallback,
    Stopwatch,
)
from pytest_toolbench.backends.model_source import hash_local_checkpoint, resolve_hub_revision
from pytest_toolbench.prompting import rows
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.backends.vllm.engine_log import route as route_engine_log
from pytest_toolbench.backends.vllm.batch import BatchPreparation
from pytest_toolbench.backends.vllm.executor import generate_with
from pytest_toolbench.backends.vllm.options import VllmOptions, engine_log_file
from pytest_toolbench.backends.vllm.shims import CPU_ENGINE_DEFAULTS, apply_cpu_environment, can_enqueue, \
    engine_versions, is_cpu_build
from pytest_toolbench.backends.vllm.stream import EngineStream, InProcessExecutor
from pytest_toolbench.contract.engine import StartableBackend, StreamingBackend
from pytest_toolbench.contract.suite import Generation, Task
from pytest_toolbench.parsing.tool_calls import get_parser

# Engine arguments that only size memory pools; they cannot change a generation, so they stay out of the
# fingerprint (changing them must not invalidate the cache).
_MEMORY_ONLY_ENGINE_ARGS = frozenset({"gpu_memory_utilization", "kv_cache_memory_bytes", "swap_space", "disable_log_stats"})


class VllmBackend(BatchPreparation, ModelBackend, StartableBackend, StreamingBackend):
    """Generates every task with one in-process ``vllm.LLM``, created on the first :meth:`generate` call."""

    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        mode: str = "prompt",
        tool_parser: str | None = None,
        revision: str | None = None,
        temperature: float | None = None,
        top_p: float = 1.0,
        max_tokens: int = 512,
        seed: int | None = 0,
        settings: VllmOptions | None = None,
        chunk_size: int | None = None,
        commit_seconds: float = 30.0,
        on_progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        llm: Any = None,
        engine_log: Path | str | None = None,
        handler_row: str | None = None,
        suite_prompts: SuitePrompts | None = None,
        keep_prompts: bool = False,
    ):
        """``settings``: the vLLM options (``--toolbench-tp``, ``--toolbench-dtype``, ``--toolbench-vllm-arg``, ...,
        each declared once, in ``options.VllmOptions``; default: every option's default); ``chunk_size``: results
        per ``on_chunk`` hand-over (default 256), or every ``commit_seconds`` of generation, whichever comes first;
        ``llm``: an already started
        ``vllm.LLM`` to reuse (tests, benchmarks), in which case the engine arguments here are not applied;
        ``suite_prompts``: which suites declare an official handler or a text prompt (default: the shipped suites'
        declarations)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if tool_parser is not None:
            get_parser(tool_parser)  # fail early on an unknown name
        if chunk_size is not None and chunk_size < 1:
            raise ValueError("chunk_size must be >= 1")
        super().__init__(model, mode=mode, temperature=temperature, max_tokens=max_tokens, seed=seed,
                         chunk_size=chunk_size, commit_seconds=commit_seconds, on_progress=on_progress,
                         on_chunk=on_chunk, keep_prompts=keep_prompts)
        self.revision = revision
        self.top_p = top_p
        self.settings = settings if settings is not None else VllmOptions()
        #: the ``vllm.LLM`` arguments of ``--toolbench-vllm-arg``, with the CPU build's defaults
        self.engine_args = dict(self.settings.engine_args)
        if llm is None and is_cpu_build() and "compilation_config" not in self.engine_args:
            for key, value in CPU_ENGINE_DEFAULTS.items():
                self.engine_args.setdefault(key, value)
        self.handler_row = handler_row  # the row the declared handler library's option names
        self.suite_prompts = suite_prompts if suite_prompts is not None else SuitePrompts.shipped()
        self._init_prompts(tool_parser)
        self._llm: Any = llm
        self._owns_engine = llm is None
        self._fingerprint: dict[str, Any] | None = None
        self._generation_config: dict[str, Any] | None = None
        self.engine_log = engine_log  # vLLM's log file (``engine_log``); None: vLLM logs as it sets itself up

    @classmethod
    def from_options(cls, options: Any, suite_prompts: SuitePrompts | None = None) -> "VllmBackend":
        """From the plugin's resolved ``RunOptions``: the shared model settings (``--model``, ``--toolbench-mode``,
        sampling, commit rhythm) and the vLLM options (``backend_options``, a ``VllmOptions``)."""
        shared = cls.settings_from(options)
        shared["seed"] = 0 if shared["seed"] is None else shared["seed"]  # reproducible by default
        return cls(
            options.model,
            **shared,
            tool_parser=options.generation.tool_parser,
            settings=options.backend_options,
            engine_log=engine_log_file(options),
            handler_row=options.generation.handler_row,
            suite_prompts=suite_prompts,
        )

    def fingerprint(self) -> dict[str, Any]:
        """Everything that can change a generation; computed without starting the engine.

        Local checkpoints are identified by content (see :func:`hash_local_checkpoint`) plus their folder name, not
        by absolute path, so moving a checkpoint keeps its cache; Hub ids by their resolved commit.
        """
        if self._fingerprint is None:
            local = self.local_model_dir
            if local is not None:
                model_identity = {"model": local.name, **hash_local_checkpoint(local)}
            else:
                model_identity = {"model": self.model, **resolve_hub_revision(self.model, self.revision)}
            engine = {
                key: value
                for key, value in sorted(self.engine_args.items())
                if key not in _MEMORY_ONLY_ENGINE_ARGS and key != "chat_template"
            }
            self._fingerprint = {
                "backend": self.name,
                **model_identity,
                "chat_template_sha256": hashlib.sha256(self.chat_template().encode()).hexdigest(),
                "prompt_format": self.prompt_formats().describe(),
                **({rows.header_key(self.suite_prompts): self.row_choice().row} if self.handler_row else {}),
                "mode": self.mode,
                "tool_parser": self.tool_parser,
                "sampling": self.sampling(),
                "dtype": self.settings.dtype,
                "max_model_len": self.settings.max_model_len,
                "tensor_parallel_size": self.settings.tensor_parallel_size,
                "engine_args": engine,
                "batch_invariant": os.environ.get("VLLM_BATCH_INVARIANT", "0"),
                "versions": engine_versions(),
            }
        return dict(self._fingerprint)

    def start(self) -> None:
        """Start the engine now (pre-generation calls this before the first request, so the start-up is timed apart
        from generation). The tokenizer loads on a thread of its own meanwhile: the engine's start is mostly waiting
        (on a GPU its core loads weights and compiles in a process of its own), and the first prompt needs the
        tokenizer, which would otherwise load after the engine is ready, while it waits."""
        self.engine(load_tokenizer=self._tokenizer_obj is None)

    def engine_kwargs(self) -> dict[str, Any]:
        """The ``vllm.LLM`` keyword arguments (JSON-safe: engine replicas on Ray are built from the same ones)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "revision": self.revision,
            "tensor_parallel_size": self.settings.tensor_parallel_size,
            "dtype": self.settings.dtype,
            "enable_prefix_caching": True,
            "seed": self.seed if self.seed is not None else 0,
        }
        if self.settings.max_model_len is not None:
            kwargs["max_model_len"] = self.settings.max_model_len
        if self.settings.gpu_memory_utilization is not None:
            kwargs["gpu_memory_utilization"] = self.settings.gpu_memory_utilization
        kwargs.update({k: v for k, v in self.engine_args.items() if k != "chat_template"})
        return kwargs

    def engine(self, load_tokenizer: bool = False) -> Any:
        """The ``vllm.LLM``, started on first use (start time is recorded in :meth:`stats`); ``load_tokenizer``:
        load the tokenizer on a thread while it starts (:meth:`start`)."""
        if self._llm is None:
            if is_cpu_build():
                apply_cpu_environment()
            # vLLM's INFO lines to the log file, its warnings once (read when vllm is imported, here and by the
            # engine processes LLM starts, which inherit the environment)
            routed = route_engine_log(self.engine_log)
            try:
                from vllm import LLM

                if load_tokenizer:
                    # imported here first, on this thread: two threads importing transformers' lazy modules at
                    # once can see them half made ("cannot import name"); the loader then only reads files
                    from transformers import AutoTokenizer  # noqa: F401

                    threading.Thread(target=self._load_tokenizer_in_background, name="toolbench-tokenizer",
                                     daemon=True).start()

                with Stopwatch() as watch:
                    self._llm = LLM(**self.engine_kwargs())
            finally:
                if routed is not None:
                    os.environ.pop("VLLM_LOGGING_CONFIG_PATH", None)
            self._stats.engine_start_seconds = watch.seconds
        return self._llm

    def generate(
        self,
        tasks: Sequence[Task],
        *,
        on_chunk: ChunkCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[Generation]:
        """Answer every task, returned in input order; the engine sees them longest prompt first (batched, or
        streamed part by part with ``on_chunk``: ``stream.InProcessExecutor``). The stats' generation seconds are the
        whole call, preparation included."""
        return generate_with(InProcessExecutor(self), self._stats, tasks, on_chunk or self.on_chunk,
                             on_progress or self.on_progress)

    @property
    def continuous(self) -> bool:
        """``--toolbench-conversations=continuous``: conversations step through :meth:`open_stream`, without rounds
        (pre-generation asks this before it asks for a stream)."""
        return self.settings.conversations == "continuous"

    def open_stream(self) -> EngineStream | None:
        """An :class:`EngineStream` on the started engine (conversations step without rounds), or None where they
        run in rounds: ``--toolbench-conversations=rounds``, or an engine that cannot take requests while it runs."""
        llm = self.engine()
        if not self.continuous or not can_enqueue(llm):
            return None
        from vllm import SamplingParams

        return EngineStream(self, llm, SamplingParams)

    def close(self) -> None:
        """Drop the engine. vLLM does not reliably free accelerator memory in-process (vllm #1908), so callers that
        need the memory back should run the engine in a child process and let it exit."""
        llm, self._llm = self._llm, None
        if llm is None or not self._owns_engine:
            return
        engine_core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del llm
        gc.collect()
