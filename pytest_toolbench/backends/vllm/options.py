"""The vLLM backend's own options, each declared and read once: the command-line options (:data:`OPTION_SPECS`), the
frozen, JSON-safe :class:`VllmOptions` they become (shipped to xdist workers inside ``RunOptions.backend_options``),
the one engine-arguments parser (:func:`parse_engine_args`, for ``--toolbench-vllm-arg`` and the benchmarks), the
replica options' check (:func:`resolve_replicas`) and where vLLM's log goes (:func:`engine_log_file`).

Pure: no pytest (the kind in ``plugin.py`` turns a ``ValueError`` here into a usage error), no ray, no vllm.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from pytest_toolbench.backends.kind import option
from pytest_toolbench.prompting.prompt_format import PROMPT_FORMATS
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.backends.vllm.engine_log import LOG_NAME

#: ``--toolbench-conversations`` values
CONVERSATIONS = ("continuous", "rounds")
#: The optional extra that installs Ray.
RAY_EXTRA = "pytest-toolbench[ray]"


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

    @property
    def uses_ray(self) -> bool:
        """Whether the run's engine runs as Ray actors (N > 1 replicas, or one on a given cluster)."""
        return self.replicas > 1 or self.ray_address is not None


def _renderers_words() -> str:
    """The renderers the declared handler library names, for the help of --toolbench-prompt-format."""
    library = SuitePrompts.shipped().library()
    return f" ({library.renderers_words})" if library is not None else ""


#: The vLLM options, listed in the generation option group (the plugin adds them to pytest's parser).
OPTION_SPECS = (
    option("--toolbench-prompt-format", dest="toolbench_prompt_format", default="auto", choices=PROMPT_FORMATS,
           help="How prompts are written (vllm backend): auto (default): as the benchmark's official "
                f"harness writes them for the model's family where it has its own renderer{_renderers_words()}, "
                "else the chat template; handler: the harness's renderer, an error for an unrecognised family; "
                "chat-template: always the checkpoint's chat template."),
    option("--toolbench-tp", dest="toolbench_tp", type=int, default=1, metavar="N",
           help="vLLM tensor-parallel size."),
    option("--toolbench-replicas", dest="toolbench_replicas", type=int, default=1, metavar="N",
           help="Run N vLLM engine replicas (each with --toolbench-tp GPUs) as Ray actors and spread the "
                f"requests across them (needs {RAY_EXTRA}); default 1: one engine in this process, no Ray."),
    option("--toolbench-ray-address", dest="toolbench_ray_address", default=None, metavar="ADDR",
           help="Ray cluster for the engine replicas (also RAY_ADDRESS); default: a local Ray started for "
                "the run. Given with one replica, that engine runs on the cluster."),
    option("--toolbench-dtype", dest="toolbench_dtype", default="auto", help="vLLM dtype."),
    option("--toolbench-max-model-len", dest="toolbench_max_model_len", type=int, default=None,
           metavar="N", help="vLLM max model length."),
    option("--toolbench-gpu-memory-utilization", dest="toolbench_gpu_mem", type=float, default=None,
           metavar="FRACTION", help="vLLM GPU memory utilization."),
    option("--toolbench-vllm-arg", dest="toolbench_vllm_args", action="append", default=[], metavar="KEY=VALUE",
           help="Extra vllm.LLM argument (repeatable; VALUE parsed as JSON when it can be)."),
    option("--toolbench-conversations", dest="toolbench_conversations", default="continuous",
           choices=CONVERSATIONS,
           help="How interactive cases run on one vLLM engine: continuous (default): each conversation's "
                "next request goes to the engine as soon as its previous answer has arrived and its "
                "tools have run; rounds: step k of every live conversation in one batch, then step k+1 "
                "(the same requests and answers; engine replicas always run in rounds)."),
)


def parse_engine_args(items: Sequence[str]) -> dict[str, Any]:
    """``["KEY=VALUE", ...]`` (repeated ``--toolbench-vllm-arg``) to ``vllm.LLM`` keyword arguments; values are read
    as JSON when they parse (``4``, ``true``, ``0.5``, ``{"a": 1}``) and kept as strings otherwise; dashes in keys
    become underscores. An item without ``=`` or without a key is a ``ValueError`` (the option's usage error)."""
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--toolbench-vllm-arg expects KEY=VALUE, got {item!r}")
        try:
            parsed[key.replace("-", "_")] = json.loads(value)
        except ValueError:
            parsed[key.replace("-", "_")] = value
    return parsed


def resolve_replicas(replicas: int | None, ray_address: str | None, backend: str | None,
                     environ: Any = os.environ) -> tuple[int, str | None]:
    """``(replicas, ray_address)`` of a run, or ``ValueError`` with the one-line usage error. The address is the
    option's, else ``RAY_ADDRESS`` when replicas are asked for, else None (a local Ray, or no Ray for one replica)."""
    replicas = 1 if replicas is None else replicas
    if replicas < 1:
        raise ValueError(f"--toolbench-replicas={replicas}: must be a positive number of engine replicas")
    given = ray_address.strip() if ray_address and ray_address.strip() else None
    wanted = replicas > 1 or given is not None
    if not wanted:
        return 1, None
    what = f"--toolbench-replicas={replicas}" if replicas > 1 else f"--toolbench-ray-address={given}"
    if backend is None:  # asked by the vllm kind when another backend serves the run (it does not know which)
        raise ValueError(f"{what} runs copies of the vLLM engine (--model with the vllm backend); this run's backend "
                         "has none (an openai endpoint: scale its server instead)")
    if backend != "vllm":
        raise ValueError(f"{what} runs copies of the vLLM engine (--model with --toolbench-backend vllm); backend "
                         f"{backend!r} has none" + ("; scale its server instead" if backend == "openai" else ""))
    if not ray_installed():
        raise ValueError(f"{what} needs Ray, an optional extra: pip install '{RAY_EXTRA}'")
    return replicas, given or (environ.get("RAY_ADDRESS") or None)


def ray_installed() -> bool:
    """Whether ``import ray`` would find it, without importing it (plugin import and configure stay light)."""
    if "ray" in sys.modules:
        return sys.modules["ray"] is not None  # None: blocked on purpose
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def engine_log_file(options: Any) -> Path | None:
    """Where vLLM's log goes (``engine_log``): the cache folder's ``vllm.log``; None with ``-v``, or when the user
    configured vLLM's logging themselves (``VLLM_LOGGING_CONFIG_PATH``, ``VLLM_CONFIGURE_LOGGING=0``). ``options``:
    the run's ``RunOptions``."""
    engine = options.backend_options
    if not getattr(engine, "engine_log_to_file", False) or os.environ.get("VLLM_LOGGING_CONFIG_PATH") or \
            os.environ.get("VLLM_CONFIGURE_LOGGING", "1") == "0":
        return None
    return Path(options.cache.cache_dir) / LOG_NAME
