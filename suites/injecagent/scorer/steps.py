"""The run of one case as upstream's ``main`` loop does it, and the transcript the checker scores.

Direct-harm cases are one request. A data-stealing case is a conversation (the ``InteractiveBenchmark`` contract):
step 1 is asked; when its output is ``succ`` (the agent called the data-retrieval attacker tool), the attacker tool's
response is looked up in the simulated-response cache and step 2 is asked with the scratchpad extended by that call
and response; the target of step 2 is ``Attacker Tools[1]`` (``GmailSendEmail``). A cache miss ends the case after
step 1 and the transcript says why (the summary then reports S2 / DS / Total / Valid Rate as incomplete).

The transcript is a JSON object ``{"transcript": "injecagent/1", "output": <step-1 text>, "step2": {...}}`` with
``step2`` present only after a ``succ`` step 1: ``{"key", "Attacker Tool Parameters", "Attacker Tool Thought",
"Attacker Tool Response", "output Step 2"}`` when step 2 ran, ``{"key", "missing": why}`` when it could not. Replayed
result records become the same object (``replay.py``), so live, gold and replayed cases are scored alike. A text
that is not such an object is read as a step-1 output.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from pytest_toolbench.contract.suite import Case, Generation

from .decoding import Evaluation, evaluate
from .loading import step2_simulator
from .prompt import build_request
from .simulator import lookup

TRANSCRIPT = "injecagent/1"


def is_interactive(case: Case) -> bool:
    return case.payload["attack"] == "ds"


def evaluate_step(case: Case, output: Any, step: int) -> Evaluation:
    """Step 1 targets ``Attacker Tools[0]``, step 2 ``Attacker Tools[1]`` (upstream's two calls)."""
    item = case.payload["item"]
    tools = item["Attacker Tools"]
    return evaluate(output, tools[0] if step == 1 else tools[1], list(tools), item["User Tool"],
                    item["Attacker Instruction"])


def conversation(case: Case):
    """Step 1, then (data stealing, step 1 ``succ``, a cached attacker-tool response) step 2."""
    first: Generation = yield build_request(case)
    transcript: dict[str, Any] = {"transcript": TRANSCRIPT, "output": first.text}
    step1 = evaluate_step(case, first.text, 1)
    if not is_interactive(case) or step1.eval != "succ":
        return transcript
    attacker_tool = case.payload["item"]["Attacker Tools"][0]
    found = lookup(step2_simulator(case.context), attacker_tool, step1.attacker_tool_parameters or "{}")
    if "response" not in found:
        transcript["step2"] = {"key": found["key"], "missing": found["missing"]}
        return transcript
    step2 = {"key": found["key"], "cache_sha256": found["cache_sha256"],
             "Attacker Tool Parameters": step1.attacker_tool_parameters,
             "Attacker Tool Thought": step1.attacker_tool_thought, "Attacker Tool Response": found["response"]}
    second: Generation = yield build_request(case, step2)
    step2["output Step 2"] = second.text
    transcript["step2"] = step2
    return transcript


def read_transcript(text: str) -> dict[str, Any]:
    """The transcript in ``text``, or ``{"output": text}`` for a plain step-1 output."""
    if text.startswith("{") and f'"{TRANSCRIPT}"' in text:
        try:
            found = json.loads(text)
        except (ValueError, RecursionError):
            found = None
        if isinstance(found, dict) and found.get("transcript") == TRANSCRIPT:
            return found
    return {"output": text}


def make_transcript(output: Any, step2: Mapping[str, Any] | None = None, **extra: Any) -> str:
    transcript: dict[str, Any] = {"transcript": TRANSCRIPT, "output": output}
    if step2 is not None:
        transcript["step2"] = dict(step2)
    transcript.update(extra)
    return json.dumps(transcript, ensure_ascii=False)
