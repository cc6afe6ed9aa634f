"""The request a case sends: a system prompt saying how to answer, and the text to echo."""

from __future__ import annotations

from pytest_toolbench.contract.suite import Case, Request

SYSTEM = 'Answer with one JSON object {"name": "echo", "arguments": {"text": ...}} and nothing else.'


def build_request(case: Case) -> Request:
    return Request(messages=[{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"Echo this: {case.payload['text']}"}])
