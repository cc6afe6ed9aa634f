"""Backends: where model answers come from. ``gold`` and ``replay`` are cheap and run wherever a test runs;
``vllm`` and ``openai`` are engines whose answers are pre-generated once, on the controller, into the cache."""

from __future__ import annotations

from typing import Any, Callable

from ..contract.errors import ToolbenchError
from ..contract.suite import Backend, BackendCapabilities

#: Backends that generate ahead of the tests (expensive, cached); the others answer on the spot.
ENGINE_BACKENDS = ("vllm", "openai")


class MissingOutput(ToolbenchError):
    """A backend has no answer for a case (e.g. a replay folder without it, or an offline cache miss). The case
    stays in every denominator (``in_denominators``) unless the benchmark's own scorer leaves such a case out (a
    replayed NesTools API failure)."""

    def __init__(self, message: str, in_denominators: bool = True):
        super().__init__(message)
        self.in_denominators = in_denominators


def checked(backend: Any, name: str) -> Backend:
    """The core relies on the contract, so a backend that lacks it is one clear error, not a later AttributeError."""
    missing = [attribute for attribute in ("fingerprint", "generate", "close") if not callable(getattr(backend, attribute,
                                                                                                       None))]
    if missing or not isinstance(getattr(backend, "capabilities", None), BackendCapabilities):
        what = ", ".join(missing) if missing else "capabilities (a pytest_toolbench.contract.suite.BackendCapabilities)"
        raise ToolbenchError(f"backend {name!r} ({type(backend).__name__}) lacks {what}")
    return backend


def with_user_simulator(backend: Backend, options: Any) -> Backend:
    """Route a simulated user's turns to ``--toolbench-user-model`` when one is given (model backends only)."""
    if not options.user_model or not backend.capabilities.cacheable:
        return backend
    from .openai_endpoint import OpenAIEndpointBackend
    from .user_simulator import UserSimulatorRouter

    user = OpenAIEndpointBackend(options.user_base_url, options.user_model, mode="prompt",
                                 api_key_env=options.api_key_env, temperature=0.0, seed=options.seed,
                                 chunk_size=options.commit_every or 64,
                                 commit_seconds=options.commit_seconds)
    return UserSimulatorRouter(backend, user)


def make_builtin(options: Any, catalog: Any, extra: dict[str, Callable[..., Any]]) -> Backend:
    """The default ``pytest_toolbench_make_backend``: built-ins and registered factories. Engine modules are
    imported here, never at plugin import time."""
    if options.backend in extra:
        return extra[options.backend](options)
    if options.backend == "gold":
        from .gold import GoldBackend

        return GoldBackend(catalog)
    if options.backend == "replay":
        from .replay import ReplayBackend

        return ReplayBackend(catalog, options.replay, mode=options.replay_mode)
    if options.backend == "vllm":
        from .vllm_engine import backend_from_options

        return backend_from_options(options)
    if options.backend == "openai":
        from .openai_endpoint import OpenAIEndpointBackend

        return OpenAIEndpointBackend.from_options(options)
    raise ToolbenchError(f"unknown backend {options.backend!r}")
