"""The resolved options of a run, per layer, as plain data: built once by the pytest glue (``plugin/options.py``
resolves the command line, ini and environment into them) and shipped to xdist workers as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..backends.kind import BackendKind

#: Seconds of generation after which finished answers are committed even when fewer than --toolbench-commit-every.
DEFAULT_COMMIT_SECONDS = 30.0


@dataclass(frozen=True)
class DataOptions:
    """Where the suites' data come from and how much of it runs."""

    data_dir: str | None = None
    data_dir_origin: str = ""  # which of --toolbench-data, the ini value or the environment gave data_dir
    download: bool = True
    limit: int | None = None
    #: ``--toolbench-sample``: ``run.sampling.SampleSpec.to_json()`` (count or fraction, seed), or None
    sample: dict[str, Any] | None = None
    data_unverified: bool = False
    #: ``--toolbench-suite-option`` overrides: suite name -> {declared option key -> value}
    suite_options: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class GenerationOptions:
    """How requests are asked and sampled, whichever model backend answers them."""

    mode: str = "prompt"
    tool_parser: str | None = None
    max_tokens: int | None = None
    #: ``--toolbench-temperature``; None: each suite's own (suite.yaml ``generation.temperature``, else greedy)
    temperature: float | None = None
    #: ``--toolbench-seed``; None: not given (the vllm backend seeds with 0, the openai backend sends none)
    seed: int | None = None
    #: ``--toolbench-repeat``: samples per case (1: a plain run)
    repeat: int = 1
    #: the simulated user of interactive suites (``--toolbench-user-model``/``--toolbench-user-base-url``)
    user_model: str | None = None
    user_base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    #: the leaderboard row a checkpoint is prompted and decoded as, named by the option of the handler library the
    #: suites declare (suite.yaml ``generation.handlers``; None: detected)
    handler_row: str | None = None
    #: ``--toolbench-keep-prompts``: keep each rendered prompt in the cache and the records
    keep_prompts: bool = False

    def sampling(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class CacheOptions:
    """The generation cache: where it is, whether it may be written, and how often generations are committed."""

    cache_dir: str = ""
    offline: bool = False
    commit_every: int | None = None
    commit_seconds: float = DEFAULT_COMMIT_SECONDS


@dataclass(frozen=True)
class RunOptions:
    """The resolved options of a run, per layer; built once in ``pytest_configure`` and shipped to xdist workers
    as JSON (``backend_options`` is the chosen backend kind's own options dataclass)."""

    backend: str
    model: str | None = None
    backend_options: Any = None
    data: DataOptions = field(default_factory=DataOptions)
    generation: GenerationOptions = field(default_factory=GenerationOptions)
    cache: CacheOptions = field(default_factory=CacheOptions)

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"backend": self.backend, "model": self.model,
                "backend_options": asdict(self.backend_options) if self.backend_options is not None else None,
                "data": asdict(self.data), "generation": asdict(self.generation), "cache": asdict(self.cache)}

    @classmethod
    def from_json(cls, data: dict[str, Any], kind: type[BackendKind]) -> "RunOptions":
        backend_options = data.get("backend_options")
        return cls(backend=data["backend"], model=data.get("model"),
                   backend_options=kind.options_from_json(backend_options) if backend_options is not None else None,
                   data=DataOptions(**data["data"]), generation=GenerationOptions(**data["generation"]),
                   cache=CacheOptions(**data["cache"]))

    def sampling(self) -> dict[str, Any]:
        return self.generation.sampling()
