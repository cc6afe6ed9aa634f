"""Backends: where model answers come from. ``gold`` and ``replay`` are cheap and run wherever a test runs;
``vllm`` and ``openai`` are engines whose answers are pre-generated once, on the controller, into the cache."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ToolbenchError
from ..options import RunOptions

#: Backends that generate ahead of the tests (expensive, cached); the others answer on the spot.
ENGINE_BACKENDS = ("vllm", "openai")


class MissingOutput(ToolbenchError):
    """A backend has no answer for a case (e.g. a replay folder without it, or an offline cache miss)."""


def make_backend(options: RunOptions, catalog: Any, extra: dict[str, Callable[..., Any]] | None = None):
    """Build the run's backend. Engine modules are imported here, never at plugin import time."""
    backend = _make_model_backend(options, catalog, extra or {})
    if options.user_model and options.backend not in ("gold", "replay"):
        from .openai_endpoint import OpenAIEndpointBackend
        from .user_simulator import UserSimulatorRouter

        user = OpenAIEndpointBackend(options.user_base_url, options.user_model, mode="prompt",
                                     api_key_env=options.api_key_env, temperature=0.0, seed=options.seed)
        return UserSimulatorRouter(backend, user)
    return backend


def _make_model_backend(options: RunOptions, catalog: Any, extra: dict[str, Callable[..., Any]]):
    if options.backend in extra:
        return extra[options.backend](options)
    if options.backend == "gold":
        from .gold import GoldBackend

        return GoldBackend(catalog)
    if options.backend == "replay":
        from .replay import ReplayBackend

        return ReplayBackend(catalog, options.replay)
    if options.backend == "vllm":
        from .vllm_engine import VllmBackend

        return VllmBackend.from_options(options)
    if options.backend == "openai":
        from .openai_endpoint import OpenAIEndpointBackend

        return OpenAIEndpointBackend.from_options(options)
    raise ToolbenchError(f"unknown backend {options.backend!r}")
