"""TL-Training's tool-call error categories and reward, as a deterministic failure classifier for any suite.

Source: TL-Training (arXiv 2412.15495, §3.3) and its reward function ``test_answer_for_reward`` in mode
``tool_code`` (Junjie-Ye/TL-Training @ 77c875a9, ``code/irm/dschat/rlhf/ppo_trainer.py``). A predicted call is
compared with the gold call in a fixed order, and the first rule that fires gives the category and the reward:

==== ======================================================================= ======================
 1   ``unparseable``: no call could be decoded                                 −2
 2   ``tool_hallucination``: the name is not among the tools offered           −2
 3   ``wrong_tool``: another existing tool                                     −1.5
 4   parameter issues, combinable: ``parameter_hallucination`` (a key not in   −0.8·h −0.5·r −0.5·m
     the tool's signature), ``parameter_redundant`` (in the signature, not in  (−0.5 … −1.8)
     the gold call), ``parameter_missing`` (a gold key absent)
 5   ``content_mismatch``: right names, a value differs                         −0.25
 6   ``correct``                                                               +1
==== ======================================================================= ======================

Combined parameter issues are named by joining the parts with ``+`` in that order, e.g.
``parameter_hallucination+parameter_missing`` (reward −1.3, as upstream's table: all three −1.8, hallucinated plus
one other −1.3, redundant plus missing −1.0, hallucinated alone −0.8, redundant or missing alone −0.5).

How a suite uses it. A suite opts in from its ``suite.yaml`` (``libraries: [tl_failures]``); the opt-in is part of
the suite's context (``case.context``, :class:`~pytest_toolbench.contract.suite.SuiteContext`), which :func:`enabled`
reads when the case is scored, in whichever process. On every failed case of an opted-in suite whose answer is (or
should be) one call, the scorer sets ``Verdict.labels["tl_category"]`` and ``Verdict.counts["tl_reward"]``; its
``aggregate`` appends :func:`tl_metrics`, which adds nothing when no case carries a TL label (a suite that did not
opt in). Suites with their own decoded calls call :func:`classify_calls`:

* BFCL: ``classify_calls(decoded or None, gold, case_functions)`` where ``decoded`` is the list of
  ``{"name", "arguments"}`` the BFCL decoder produced (``None`` when it could not decode), ``gold`` the possible
  answer turned into ``[{"name": fn, "arguments": {param: [acceptable values]}}]`` (BFCL's own layout; a list
  containing ``""`` marks an optional parameter) and ``case_functions`` the case's function docs;
* NesTools / ACEBench: the same with their decoded calls and gold calls (plain values; a gold value that is a list
  also accepts an equal list);
* RoTBench and the TL-Training suite call :func:`classify_call` directly, with :data:`ANY_VALUE` for gold values
  the benchmark does not check.

Multi-call answers (parallel calls) are not covered by the paper. :func:`classify_calls` pairs predicted and gold
calls to maximise the total reward, classifies each pair, counts an unanswered gold call as ``wrong_tool`` and an
extra predicted call as ``tool_hallucination`` or ``wrong_tool``, and returns the worst outcome.

:func:`tool_code_reward` is the faithful string-level reward of the repository (Python-call text, string values
only), for reproducing TL-Training's reward exactly.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping, Sequence

from ..contract.suite import Case, CaseResult, Metric

#: The library's name in ``libraries:`` of a suite.yaml (one of ``contract.definition.LIBRARIES``).
LIBRARY = "tl_failures"


def enabled(case: Case) -> bool:
    """Whether the case's suite opted into TL-Training's categories (its context, bound by the catalog or by the
    suite's ``load_cases``, names this library); False for a case bound to no context."""
    return case.context is not None and case.context.uses(LIBRARY)


UNPARSEABLE = "unparseable"
TOOL_HALLUCINATION = "tool_hallucination"
WRONG_TOOL = "wrong_tool"
PARAMETER_HALLUCINATION = "parameter_hallucination"
PARAMETER_REDUNDANT = "parameter_redundant"
PARAMETER_MISSING = "parameter_missing"
CONTENT_MISMATCH = "content_mismatch"
CORRECT = "correct"

#: The rule order; a combined parameter category sorts at the position of its first part.
CATEGORY_ORDER: tuple[str, ...] = (UNPARSEABLE, TOOL_HALLUCINATION, WRONG_TOOL, PARAMETER_HALLUCINATION,
                                   PARAMETER_REDUNDANT, PARAMETER_MISSING, CONTENT_MISMATCH, CORRECT)
REWARDS: dict[str, float] = {UNPARSEABLE: -2.0, TOOL_HALLUCINATION: -2.0, WRONG_TOOL: -1.5,
                             CONTENT_MISMATCH: -0.25, CORRECT: 1.0}


class _AnyValue:
    """Gold value that any predicted value matches (RoTBench's "None", its finish/ask_to_user answers)."""

    _instance = None

    def __new__(cls) -> "_AnyValue":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<any value>"


ANY_VALUE = _AnyValue()


@dataclass(frozen=True)
class TLOutcome:
    category: str
    reward: float
    hallucinated: tuple[str, ...] = ()
    redundant: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    mismatched: tuple[str, ...] = ()


def parameter_reward(hallucinated: bool, redundant: bool, missing: bool) -> float:
    """Upstream's combination table, which equals −0.8·h − 0.5·r − 0.5·m."""
    if hallucinated and redundant and missing:
        return -1.8
    if hallucinated and (redundant or missing):
        return -1.3
    if redundant and missing:
        return -1.0
    if hallucinated:
        return -0.8
    if redundant or missing:
        return -0.5
    return 0.0


def tool_signatures(tools: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """``{tool name: parameter names}`` from JSON-schema tool docs (bare, or wrapped as ``{"function": {...}}``)."""
    signatures: dict[str, tuple[str, ...]] = {}
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        doc = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        name = doc.get("name")
        if not isinstance(name, str):
            continue
        parameters = doc.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        signatures[name] = tuple(properties) if isinstance(properties, Mapping) else ()
    return signatures


def _category_rank(category: str) -> int:
    return CATEGORY_ORDER.index(category.split("+")[0])


def _value_matches(predicted: Any, gold: Any, acceptable_values: bool) -> bool:
    if gold is ANY_VALUE:
        return True
    if predicted == gold:
        return True
    return acceptable_values and isinstance(gold, list) and any(predicted == option for option in gold)


def _is_call(value: Any) -> bool:
    return (isinstance(value, Mapping) and isinstance(value.get("name"), str)
            and isinstance(value.get("arguments", {}), Mapping))


def classify_call(predicted: Mapping[str, Any] | None, gold: Mapping[str, Any],
                  signatures: Mapping[str, Collection[str]], *, acceptable_values: bool = False,
                  optional: Collection[str] = ()) -> TLOutcome:
    """Classify one predicted call against one gold call (``{"name": str, "arguments": dict}`` each).

    ``predicted`` is ``None`` when nothing could be decoded. ``signatures`` maps every offered tool to its parameter
    names. With ``acceptable_values``, a gold value that is a list lists the acceptable values (BFCL). Gold keys in
    ``optional`` are not reported missing when absent.
    """
    if not _is_call(predicted):
        return TLOutcome(UNPARSEABLE, REWARDS[UNPARSEABLE])
    assert predicted is not None
    name = predicted["name"]
    # Upstream: an empty name is not a hallucination (``pred_action != ""``); it falls through to wrong tool.
    if name not in signatures and name != "":
        return TLOutcome(TOOL_HALLUCINATION, REWARDS[TOOL_HALLUCINATION])
    if name != gold["name"]:
        return TLOutcome(WRONG_TOOL, REWARDS[WRONG_TOOL])
    arguments = predicted.get("arguments", {}) or {}
    gold_arguments = gold.get("arguments", {}) or {}
    known = set(signatures.get(name, ()))
    hallucinated = tuple(k for k in arguments if k not in known)
    redundant = tuple(k for k in arguments if k in known and k not in gold_arguments)
    missing = tuple(k for k in gold_arguments if k not in arguments and k not in optional)
    if hallucinated or redundant or missing:
        parts = [label for label, found in ((PARAMETER_HALLUCINATION, hallucinated),
                                            (PARAMETER_REDUNDANT, redundant),
                                            (PARAMETER_MISSING, missing)) if found]
        return TLOutcome("+".join(parts), parameter_reward(bool(hallucinated), bool(redundant), bool(missing)),
                         hallucinated, redundant, missing)
    mismatched = tuple(k for k in gold_arguments
                       if k in arguments and not _value_matches(arguments[k], gold_arguments[k], acceptable_values))
    if mismatched:
        return TLOutcome(CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH], mismatched=mismatched)
    return TLOutcome(CORRECT, REWARDS[CORRECT])


def _worst(outcomes: Sequence[TLOutcome]) -> TLOutcome:
    return min(outcomes, key=lambda o: (o.reward, _category_rank(o.category)))


_MAX_PAIRINGS = 40320  # 8!: beyond this, pair greedily


def classify_call_lists(predicted: Sequence[Mapping[str, Any]] | None, gold: Sequence[Mapping[str, Any]],
                        signatures: Mapping[str, Collection[str]], *,
                        acceptable_values: bool = False) -> TLOutcome:
    """The worst outcome over the best pairing of predicted and gold calls (see the module docstring)."""
    if predicted is None or (not predicted and gold):
        return TLOutcome(UNPARSEABLE, REWARDS[UNPARSEABLE])

    def optional_keys(call: Mapping[str, Any]) -> tuple[str, ...]:
        if not acceptable_values:
            return ()
        return tuple(k for k, v in (call.get("arguments") or {}).items() if isinstance(v, list) and "" in v)

    def extra(call: Mapping[str, Any]) -> TLOutcome:
        if not _is_call(call):
            return TLOutcome(UNPARSEABLE, REWARDS[UNPARSEABLE])
        known = call["name"] in signatures or call["name"] == ""
        return TLOutcome(WRONG_TOOL if known else TOOL_HALLUCINATION,
                         REWARDS[WRONG_TOOL if known else TOOL_HALLUCINATION])

    unanswered = TLOutcome(WRONG_TOOL, REWARDS[WRONG_TOOL])
    table = [[classify_call(p, g, signatures, acceptable_values=acceptable_values, optional=optional_keys(g))
              for g in gold] for p in predicted]
    n_pred, n_gold = len(predicted), len(gold)
    if n_gold == 0:
        return _worst([extra(p) for p in predicted]) if predicted else TLOutcome(CORRECT, REWARDS[CORRECT])

    def outcomes_for(pairs: Sequence[tuple[int, int]]) -> list[TLOutcome]:
        used_pred = {p for p, _ in pairs}
        used_gold = {g for _, g in pairs}
        found = [table[p][g] for p, g in pairs]
        found += [extra(predicted[p]) for p in range(n_pred) if p not in used_pred]
        found += [unanswered for g in range(n_gold) if g not in used_gold]
        return found

    size = min(n_pred, n_gold)
    count = 1
    for k in range(max(n_pred, n_gold), max(n_pred, n_gold) - size, -1):
        count *= k
    if count <= _MAX_PAIRINGS:
        candidates: Iterable[list[tuple[int, int]]]
        if n_pred >= n_gold:
            candidates = ([(p, g) for g, p in enumerate(perm)] for perm in itertools.permutations(range(n_pred), size))
        else:
            candidates = ([(p, g) for p, g in enumerate(perm)] for perm in itertools.permutations(range(n_gold), size))
        best: list[TLOutcome] | None = None
        best_key: tuple[float, float] | None = None
        for pairs in candidates:
            found = outcomes_for(pairs)
            key = (sum(o.reward for o in found), _worst(found).reward)
            if best_key is None or key > best_key:
                best, best_key = found, key
        assert best is not None
        return _worst(best)
    pairs: list[tuple[int, int]] = []
    free_pred, free_gold = set(range(n_pred)), set(range(n_gold))
    for reward, p, g in sorted(((table[p][g].reward, p, g) for p in range(n_pred) for g in range(n_gold)),
                               key=lambda item: -item[0]):
        if p in free_pred and g in free_gold:
            pairs.append((p, g))
            free_pred.discard(p)
            free_gold.discard(g)
    return _worst(outcomes_for(pairs))


def classify_calls(predicted: list[dict] | None, gold: list[dict], tools: list[dict]) -> tuple[str, float]:
    """TL category and reward of predicted calls against gold calls, for any suite (BFCL layout accepted).

    Calls are ``{"name": str, "arguments": dict}``; ``predicted`` is ``None`` when the output could not be decoded.
    Gold argument values that are lists are lists of acceptable values (an equal list is accepted too), and a list
    containing ``""`` marks the parameter optional, as in BFCL's possible answers. ``tools`` are the tool docs
    offered to the model (JSON-schema ``parameters``).
    """
    outcome = classify_call_lists(predicted, gold, tool_signatures(tools), acceptable_values=True)
    return outcome.category, outcome.reward


# ----------------------------------------------------------------------------------------------------------------
# The repository's string-level reward (faithful mode)

_CALL = re.compile(r"(.*?)\(([\s\S]*?)\)")
_STRING_ARGUMENT = re.compile(r"(\w+)\s*=\s*'([^']*)'")


def tool_code_reward(prediction: str, gold: str, functions: Collection[str],
                     params: Mapping[str, Collection[str]], demo_action: str = "") -> float:
    """TL-Training's reward exactly as ``test_answer_for_reward(..., "tool_code", ...)`` computes it.

    The first ``name(...)`` in each text is the call (the name is the text before the first parenthesis on that
    line, stripped; the arguments end at the first ``)``), and only ``key='string'`` pairs are read as arguments.
    Any failure to find a call scores −2, like upstream's blanket ``except``. ``demo_action`` is the action that the
    prompt already started (upstream reads it after the last ``Assistant:``); when given, its signature is used for
    the hallucination and redundancy checks.
    """
    predicted_match = _CALL.search(prediction)
    gold_match = _CALL.search(gold)
    if predicted_match is None or gold_match is None:
        return REWARDS[UNPARSEABLE]
    predicted_name = predicted_match.group(1).strip()
    gold_name = gold_match.group(1).strip()
    predicted_args = dict(_STRING_ARGUMENT.findall(predicted_match.group(2)))
    gold_args = dict(_STRING_ARGUMENT.findall(gold_match.group(2)))
    if predicted_name not in functions and predicted_name != "":
        return REWARDS[TOOL_HALLUCINATION]
    if predicted_name != gold_name:
        return REWARDS[WRONG_TOOL]
    signature_of = demo_action if demo_action else predicted_name
    if signature_of in params:
        known = set(params[signature_of])
        hallucinated = not set(predicted_args).issubset(known)
        redundant = any(k not in gold_args and k in known for k in predicted_args)
    else:
        hallucinated = redundant = False
    missing = any(k not in predicted_args for k in gold_args)
    if hallucinated or redundant or missing:
        return parameter_reward(hallucinated, redundant, missing)
    if predicted_args != gold_args:
        return REWARDS[CONTENT_MISMATCH]
    return REWARDS[CORRECT]


# ----------------------------------------------------------------------------------------------------------------
# Aggregation


def tl_metrics(results: Sequence[CaseResult]) -> list[Metric]:
    """Distribution of ``tl_category`` over the failed cases that carry one, and the mean TL reward.

    The mean is over cases with a reward: failed cases with ``counts["tl_reward"]`` plus passed cases, which count
    as ``correct`` (+1). Its value is a reward in [−2, 1], not a rate.
    """
    labelled = [r for r in results if "tl_category" in r.labels]
    metrics: list[Metric] = []
    tally = Counter(r.labels["tl_category"] for r in labelled)
    for category in sorted(tally, key=lambda c: (_category_rank(c) if c.split("+")[0] in CATEGORY_ORDER
                                                 else len(CATEGORY_ORDER), c)):
        metrics.append(Metric(name=f"TL {category}", value=tally[category] / len(labelled),
                              correct=tally[category], total=len(labelled), group="tl_category", better="none",
                              formula="failed cases in this TL-Training category / failed cases with a category "
                                      "(a share of the failures: neither direction is better)"))
    rewards = [float(r.counts["tl_reward"]) for r in results if not r.passed and "tl_reward" in r.counts]
    rewards += [REWARDS[CORRECT] for r in results if r.passed]
    # Every case with a reward carries the figure, a passed case alone too (its +1): the paired tests split the
    # figure per case, so it must be a mean of the cases' own rewards whatever the run's failures.
    if rewards:
        failed = len(rewards) - sum(1 for r in results if r.passed)
        metrics.append(Metric(name="TL mean reward", value=sum(rewards) / len(rewards), correct=sum(rewards),
                              total=len(rewards), group="tl_reward",
                              formula=f"mean TL-Training reward per case, sum {sum(rewards):g} / {len(rewards)} "
                                      f"cases ({len(rewards) - failed} passed at +1, {failed} failed with their "
                                      "category's reward; −2 … +1)", unit="", better="higher",
                              sd=statistics.stdev(rewards) if len(rewards) > 1 else None))
    return metrics
