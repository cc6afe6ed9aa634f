"""The verdict of one case, and the answer that passes it (what the gold backend replies)."""

from __future__ import annotations

import json

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .decoding import decode


def gold_output(case: Case) -> str:
    return json.dumps({"name": "echo", "arguments": {"text": case.payload["text"]}})


def score(case: Case, generation: Generation) -> Verdict:
    decoded = decode(generation.text)
    if decoded is None:
        return Verdict(False, FORMAT_ERROR, "output is not an echo call")
    call, text = decoded
    expected = case.payload["text"]
    if text != expected:
        return Verdict(False, "wrong_text", f"expected {expected!r}, got {text!r}", decoded=call, expected=expected)
    return Verdict(True, decoded=call, expected=expected)
