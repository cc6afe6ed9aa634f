"""The ``replay`` backend: scores outputs saved by another harness, in each benchmark's own result-file format."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..suite import Generation, Task
from . import MissingOutput


class ReplayBackend:
    name = "replay"
    cacheable = False
    reads_requests = False  # answers by case, so single-shot prompts are never rendered for it
    final_outputs = True  # saved outputs are finished answers (agent transcripts included), never one step

    def __init__(self, catalog: Any, path: str):
        self.catalog = catalog
        self.path = Path(path)
        self._outputs: dict[str, dict[str, str]] = {}

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "replay", "path": str(self.path)}

    def outputs_for(self, suite_name: str) -> dict[str, str]:
        if suite_name not in self._outputs:
            benchmark = self.catalog.by_name(suite_name).benchmark
            reader = getattr(benchmark, "replay_outputs", None)
            self._outputs[suite_name] = dict(reader(self.path)) if reader else {}
        return self._outputs[suite_name]

    def generate(self, tasks: Sequence[Task], **_: Any) -> list[Generation]:
        answers = []
        for task in tasks:
            outputs = self.outputs_for(task.case.suite)
            if task.case.case_id not in outputs:
                raise MissingOutput(f"no saved output for {task.case.suite} case {task.case.case_id!r} "
                                    f"in {self.path}")
            answers.append(Generation(text=outputs[task.case.case_id], finish_reason="stop"))
        return answers

    def close(self) -> None:
        pass
