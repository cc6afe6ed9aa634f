"""Routing a simulated user's turns (``Request.simulates == "user"``) to a separate model.

ACEBench's multi-turn agent cases talk to a simulated user, played upstream by GPT-4o. With
``--toolbench-user-model`` those turns go to that endpoint while the model under test answers everything else;
without it the run's own model plays the user and the run header says the figures are not comparable.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..contract.engine import ListeningBackend, StartableBackend, StatsBackend, offers
from ..contract.suite import SIMULATED_USER, Backend, Generation, Task
from .kind import RunOptions
from .openai_endpoint import OpenAIEndpointBackend


class UserSimulatorRouter(ListeningBackend, StartableBackend, StatsBackend):
    """The model under test, with a simulated user's turns sent to ``user``; the engine's start, news and figures are
    the model's (nothing, or {}, for a model without them). Not a :class:`StreamingBackend`: conversations run in
    rounds."""

    def __init__(self, model: Any, user: Any):
        self.model = model
        self.user = user
        self.name = model.name
        self.capabilities = model.capabilities

    def fingerprint(self) -> dict[str, Any]:
        return {**self.model.fingerprint(), SIMULATED_USER: dict(self.user.fingerprint())}

    def generate(self, tasks: Sequence[Task], *, on_chunk=None, on_progress=None) -> list[Generation]:
        results: list[Generation | None] = [None] * len(tasks)
        for backend, wanted in ((self.user, True), (self.model, False)):
            indices = [i for i, task in enumerate(tasks) if bool(task.request.simulates) == wanted]
            if not indices:
                continue

            def forward(chunk, indices=indices):
                if on_chunk is not None:
                    on_chunk([(indices[i], generation) for i, generation in chunk])

            answers = backend.generate([tasks[i] for i in indices], on_chunk=forward, on_progress=on_progress)
            for index, generation in zip(indices, answers):
                results[index] = generation
        return results  # type: ignore[return-value]

    def start(self) -> None:
        if offers(self.model, StartableBackend):
            self.model.start()

    def listen(self, write) -> None:
        if offers(self.model, ListeningBackend):
            self.model.listen(write)

    def stats(self) -> dict[str, Any]:
        return self.model.stats() if offers(self.model, StatsBackend) else {}

    def row_choice(self) -> Any:
        """The BFCL row the model under test is prompted as (the run header's ``bfcl_row``), or None."""
        choose = getattr(self.model, "row_choice", None)
        return choose() if callable(choose) else None

    def close(self) -> None:
        self.model.close()
        self.user.close()


def with_user_simulator(backend: Backend, options: RunOptions) -> Backend:
    """Route a simulated user's turns to ``--toolbench-user-model`` when one is given (model backends only)."""
    generation, cache = options.generation, options.cache
    if not generation.user_model or not backend.capabilities.cacheable:
        return backend
    user = OpenAIEndpointBackend(generation.user_base_url, generation.user_model, mode="prompt",
                                 api_key_env=generation.api_key_env, temperature=0.0, seed=generation.seed,
                                 chunk_size=cache.commit_every or 64, commit_seconds=cache.commit_seconds)
    return UserSimulatorRouter(backend, user)
