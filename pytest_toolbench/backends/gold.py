"""The ``gold`` backend: each case's reference answer, rendered as the text a prompting-mode model would write.

Under gold every case must pass; one that does not is an upstream annotation defect, listed in the suite's
``known_defects.yaml`` (and run as a strict expected failure). It proves the loader, prompt and scorer agree.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..contract.suite import BackendCapabilities, Generation, Task


class GoldBackend:
    name = "gold"
    capabilities = BackendCapabilities(cacheable=False, reads_requests=False)

    def __init__(self, catalog: Any):
        self.catalog = catalog

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "gold"}

    def generate(self, tasks: Sequence[Task], **_: Any) -> list[Generation]:
        answers = []
        for task in tasks:
            suite = self.catalog.by_name(task.case.suite)
            benchmark = suite.benchmark
            if task.in_conversation and hasattr(benchmark, "gold_reply"):
                text = benchmark.gold_reply(task.case, task.step, task.request)
            else:
                text = benchmark.gold_output(task.case)
            answers.append(Generation(text=text, finish_reason="stop"))
        return answers

    def close(self) -> None:
        pass
