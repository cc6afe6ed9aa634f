"""The one ``generate`` skeleton of the vLLM backend, over an *executor*: the in-process engine (batched, or
streamed part by part: ``stream.InProcessExecutor``) or the engine replicas on Ray (``dispatch.RayExecutor``).

The skeleton does what every way of running the engine shares: nothing to do for no tasks; the engine started
before the clock runs (its start-up is timed apart, in the stats); the whole call timed, preparation included; every
task answered or one error; the call's figures added to the backend's stats, with how long the engine waited for its
first request.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from pytest_toolbench.backends.common import ChunkCallback, GenerationStats, ProgressCallback, Stopwatch
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Generation, Task


class Executor(Protocol):
    """Runs one ``generate`` call's requests on an engine (or engines)."""

    #: who answers, for the error when answers are missing ("vLLM", "the engine replicas")
    answered_by: str

    def ready(self) -> None:
        """Start the engine(s) if not yet started; not counted as generation time."""

    def execute(self, tasks: Sequence[Task], on_chunk: ChunkCallback | None,
                on_progress: ProgressCallback | None) -> tuple[list[Generation | None], float | None]:
        """Prepare and answer ``tasks``: the results by task index, and when the first request reached an
        engine (``time.perf_counter()``; None when none did)."""
        ...


def generate_with(executor: Executor, stats: GenerationStats, tasks: Sequence[Task],
                  on_chunk: ChunkCallback | None, on_progress: ProgressCallback | None) -> list[Generation]:
    """Answer every task with ``executor``, in input order, and add the call to ``stats``."""
    if not tasks:
        return []
    executor.ready()
    with Stopwatch() as watch:
        results, first_request_at = executor.execute(tasks, on_chunk, on_progress)
    generations = [g for g in results if g is not None]
    if len(generations) != len(tasks):
        raise ToolbenchError(f"{executor.answered_by} returned {len(generations)} of {len(tasks)} generations")
    stats.add(generations, watch.seconds)
    stats.add_first_request_wait((first_request_at or watch.start + watch.seconds) - watch.start)
    return generations
