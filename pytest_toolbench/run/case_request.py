"""The request a case was asked with, kept by the scoring for the HTML report's row (``--html`` only).

Scoring builds each case's request to ask the backend (``run.requests.run_case``); :class:`RequestKeeper` sits
between the scoring and the answerer and keeps the first request it is handed, so the report shows that very
request instead of reloading the suite and building it again. A backend that answers by case (gold, replay) is
handed no rendered request, and an interactive case's requests are the turns of its conversation: for those the
row shows what the suite's ``build_request`` gives for the case, built here, in the process that scores it, with
the suite it scored with (None when the suite cannot build it).

The view is plain JSON-safe data (messages and tools, texts whole: the HTML cuts them itself and states each
text's full length); it travels from an xdist worker as ASCII JSON text, like the record, and is never written to
the case records or the results file.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ..contract.suite import Case, Generation, Task
from .requests import UNRENDERED
from .records import safe_value


def request_view(request: Any) -> dict[str, Any]:
    """A ``Request`` as plain, JSON-safe data: its messages and tools, texts whole."""
    return safe_value({"messages": list(request.messages), "tools": list(request.tools or [])},
                      leaf_limit=1 << 40, max_nodes=1 << 40)


class RequestKeeper:
    """An answerer that hands every task on to ``answer`` and keeps the first single-shot request it sees."""

    def __init__(self, answer: Callable[[Task], Generation]):
        self.answer = answer
        self.backend = getattr(answer, "backend", None)  # what ``run_case`` asks of its answerer
        self.request: Any = None

    def __call__(self, task: Task) -> Generation:
        if self.request is None and not task.in_conversation and task.request is not UNRENDERED:
            self.request = task.request
        return self.answer(task)

    def view(self, benchmark: Any, case: Case) -> dict[str, Any] | None:
        """The kept request as plain data; without one, the one the suite builds for ``case`` (None when it
        cannot: an interactive suite without ``build_request``, say)."""
        try:
            return request_view(self.request if self.request is not None else benchmark.build_request(case))
        except Exception:  # noqa: BLE001 - the row then shows no request; the verdict is untouched
            return None


def transport(view: dict[str, Any] | None) -> str:
    """The view as ASCII JSON text (what execnet carries from a worker whatever the texts hold)."""
    return json.dumps(view, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def decode(text: str) -> dict[str, Any] | None:
    return json.loads(text)
