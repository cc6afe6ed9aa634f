"""TL-Training's failure category and reward beside BFCL's own error type, on single-call cases."""

from __future__ import annotations

from pytest_toolbench.scorer_lib.tl_failures import CONTENT_MISMATCH, CORRECT, REWARDS, classify_calls
from pytest_toolbench.contract.suite import Case, Verdict

#: Categories whose ground truth is exactly one call: the ones TL-Training's single-call taxonomy applies to.
SINGLE_CALL_CATEGORIES = frozenset({"simple_python", "simple_java", "simple_javascript", "multiple", "live_simple",
                                    "live_multiple"})


def label_tl_failure(case: Case, verdict: Verdict) -> None:
    """TL-Training's failure category and reward beside BFCL's own error type (single-call cases only).

    An undecodable or wrongly shaped output is ``unparseable``; BFCL's ground-truth lists of acceptable values (with
    ``""`` for "may be omitted") are what ``classify_calls`` reads natively.
    """
    decoded = verdict.decoded if isinstance(verdict.decoded, list) else None
    predicted = None
    if decoded is not None and all(isinstance(c, dict) and len(c) == 1 for c in decoded):
        predicted = [{"name": name, "arguments": args if isinstance(args, dict) else {}}
                     for call in decoded for name, args in call.items()]
    (name, arguments), = case.payload["ground_truth"][0].items()
    if verdict.labels.get("mode") == "fc" and predicted:
        # an FC model names `a.b` as `a_b` (underscore_to_dot): compare the way BFCL does
        dotted = {f["name"].replace(".", "_"): f["name"] for f in case.payload["function"]}
        predicted = [dict(call, name=dotted.get(call["name"], call["name"])) for call in predicted]
    category, reward = classify_calls(predicted, [{"name": name, "arguments": arguments}],
                                      case.payload["function"])
    if category == CORRECT:
        # BFCL failed the case on a rule TL's call comparison cannot see (e.g. a Java literal the official converter
        # mangles): the failure is in the content, as NesTools, ACEBench and RoTBench label it too.
        category, reward = CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH]
    verdict.labels["tl_category"] = category
    verdict.counts["tl_reward"] = reward
