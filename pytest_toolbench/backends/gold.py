"""The ``gold`` backend: each case's reference answer, rendered as the text a prompting-mode model would write.

Under gold every case must pass; one that does not is an upstream annotation defect, listed in the suite's
``known_defects.yaml`` (and run as a strict expected failure). It proves the loader, prompt and scorer agree.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..contract.errors import UsageProblem
from ..contract.suite import BackendCapabilities, Generation, Task
from ..prompting import rows
from ..prompting.rows import RowChoice
from ..prompting.suite_prompts import SuitePrompts
from .kind import BackendKind, OptionValues, RunOptions, SuiteLookup


class GoldKind(BackendKind):
    """The default: no ``--model``, no ``--toolbench-replay``."""

    name = "gold"
    reference_answers = True
    samples = False

    @classmethod
    def claims(cls, given: OptionValues) -> bool:
        return True  # the last implementation asked (trylast): whatever no other backend claimed

    @classmethod
    def from_values(cls, given: OptionValues, model: str | None) -> Any:
        library = SuitePrompts.shipped().library()
        row = given.get(library.option.dest) if library is not None else None
        if row:
            raise UsageProblem(library.gold_refusal(row))
        return super().from_values(given, model)

    @classmethod
    def row_choice(cls, options: RunOptions) -> RowChoice:
        library = SuitePrompts.shipped().library()
        return library.gold_choice if library is not None else rows.NO_LIBRARY

    @classmethod
    def build(cls, options: RunOptions, suites: SuiteLookup) -> "GoldBackend":
        return GoldBackend(suites)

    @classmethod
    def describe(cls, options: RunOptions) -> str:
        return "gold (reference answers; no --model given)"


class GoldBackend:
    name = "gold"
    capabilities = BackendCapabilities(cacheable=False, reads_requests=False)

    def __init__(self, suites: SuiteLookup):
        self.suites = suites

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "gold"}

    def generate(self, tasks: Sequence[Task], **_: Any) -> list[Generation]:
        answers = []
        for task in tasks:
            suite = self.suites.by_name(task.case.suite)
            benchmark = suite.benchmark
            if task.in_conversation and hasattr(benchmark, "gold_reply"):
                text = benchmark.gold_reply(task.case, task.step, task.request)
            else:
                text = benchmark.gold_output(task.case)
            answers.append(Generation(text=text, finish_reason="stop"))
        return answers

    def close(self) -> None:
        pass
