"""The conversation. Generation with a model (the agent and its simulated user on the run's backend, issue 39 item
3) is not implemented yet, so a task's conversation is held by the gold backend only: it is one step, answered with
the gold trajectory (``gold_reply``). Under any other conversing backend the item is skipped before anything is
generated, with :data:`REFUSAL` as its reason (``unavailable``), never scored with made-up figures; the replay
backend scores ``tau2 run`` results files without a conversation."""

from __future__ import annotations

import json
from typing import Any, Iterator

from pytest_toolbench.contract.errors import UsageProblem
from pytest_toolbench.contract.suite import Case, Generation, Request

from .gold import gold_output

REFUSAL = ("tau2bench: generation with a model (the agent and its simulated user) is not implemented yet; this "
           "suite is scored under the gold backend and --toolbench-replay of tau2 results files only")


def unavailable(case: Case, backend: Any = None) -> str | None:
    """None under a backend that answers by case (gold: it never reads a request); the refusal otherwise, a model
    backend included (None: an xdist worker of an engine run)."""
    capabilities = getattr(backend, "capabilities", None)
    if capabilities is not None and not capabilities.reads_requests and not capabilities.final_outputs:
        return None
    return REFUSAL


def conversation(case: Case) -> Iterator[Request]:
    """One step, whose answer (the gold backend's ``gold_reply``) is the trajectory; returns it."""
    task = case.payload["task"]
    reply: Generation = yield Request(messages=({"role": "user", "content": f"tau2bench task {task['id']}"},))
    try:
        return json.loads(reply.recorded())
    except ValueError:
        return {"messages": None, "unreadable": reply.recorded()[:200]}


def gold_reply(case: Case, step: int, request: Request) -> str:
    return gold_output(case)


def build_request(case: Case) -> Request:
    """Single-shot requests do not exist for this suite (every case converses); asked for one, refuse."""
    raise UsageProblem(REFUSAL)
