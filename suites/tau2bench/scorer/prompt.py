"""Requests. Generation with a model (the agent and its simulated user on the run's backend, issue 39 item 3) is
not implemented yet: a model backend is refused in one line, before anything is generated."""

from __future__ import annotations

from pytest_toolbench.contract.errors import UsageProblem
from pytest_toolbench.contract.suite import Case, Request

REFUSAL = ("tau2bench: generation with a model (the agent and its simulated user) is not implemented yet; this "
           "suite runs with the gold backend or --toolbench-replay of tau2 results files only (deselect it with "
           "-m 'not suite_tau2bench')")


def build_request(case: Case) -> Request:
    raise UsageProblem(REFUSAL)
