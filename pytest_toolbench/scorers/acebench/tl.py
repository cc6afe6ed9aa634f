"""TL-Training's failure categories and reward (``pytest_toolbench.tl_failures``) for ACEBench Normal cases whose
ground truth is one call.

The TL labels follow what ACEBench's own checker looks at, so that a label names a rule the official verdict rests
on and not one it waives:

* names: the ground-truth key without its ``_<digits>`` suffix, as ``normal_checker`` strips it; a predicted name
  that no offered function document carries is a *tool hallucination*, another documented one a *wrong tool*;
* values: a predicted value is a *content mismatch* exactly when the official per-parameter rules
  (:func:`~.checker.parameter_accepted`: type check, standardised substring for strings, element-wise lists,
  substring leaves for dicts, and no value check at all for top-level numbers, booleans and enum-typed
  parameters) reject it. Accepted values are replaced by the gold value before the comparison, which generalises
  :data:`~pytest_toolbench.tl_failures.ANY_VALUE` (a gold value never compared) to values compared leniently,
  while a value of the wrong type (``"5"`` for an integer) stays a mismatch as the checker's ``type_error``
  makes it. Gold lists are plain values, not lists of alternatives;
* missing parameters: the checker only requires the documented ``required`` parameters, so a gold parameter that
  is not required is dropped from the gold call when the prediction leaves it out (no *parameter missing* for it),
  unless the predicted call has no arguments at all, which the checker rejects (``wrong_param``);
* a ground truth with several alternatives is labelled against the alternative that gives the highest reward.

Special cases (no call expected), the parallel-function category and agent cases are out of scope: a case is in
scope when every ground-truth alternative is one call.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...tl_failures import CONTENT_MISMATCH, CORRECT, REWARDS, classify_call_lists, tool_signatures
from .checker import _INDEX_SUFFIX, _find_doc, parameter_accepted


def single_call_alternatives(ground_truth: Any) -> list[tuple[str, Mapping[str, Any]]] | None:
    """``[(ground-truth key, arguments)]`` per alternative when every alternative is one call, else None."""
    alternatives = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    found = []
    for alternative in alternatives:
        if not isinstance(alternative, Mapping) or len(alternative) != 1:
            return None
        key, arguments = next(iter(alternative.items()))
        if not isinstance(key, str) or not isinstance(arguments, Mapping):
            return None
        found.append((key, arguments))
    return found or None


def _documents(docs: Any) -> list[Mapping[str, Any]]:
    if isinstance(docs, Mapping):
        return [docs]
    if isinstance(docs, list):
        return [doc for doc in docs if isinstance(doc, Mapping)]
    return []


def _required(doc: Any) -> set[Any]:
    parameters = doc.get("parameters") if isinstance(doc, Mapping) else None
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    return set(required) if isinstance(required, list) else set()


def tl_category(docs: Any, decoded: Sequence[Mapping[str, Any]] | None,
                alternatives: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[str, float]:
    """Category and reward of a failed single-call case; ``decoded`` is the checker's list of ``{name: arguments}``
    (None when the output did not decode)."""
    signatures = tool_signatures(_documents(docs))
    best: tuple[str, float] | None = None
    for key, gold_arguments in alternatives:
        gold_name = _INDEX_SUFFIX.sub("", key)
        doc = _find_doc(docs, key)
        predicted = None
        if decoded is not None:
            predicted = []
            for call in decoded:
                name, arguments = next(iter(call.items()))
                if name == gold_name and isinstance(arguments, Mapping):
                    arguments = {param: (gold_arguments[param]
                                         if param in gold_arguments
                                         and parameter_accepted(doc, param, value, gold_arguments[param]) else value)
                                 for param, value in arguments.items()}
                predicted.append({"name": name if isinstance(name, str) else repr(name),
                                  "arguments": arguments if isinstance(arguments, Mapping) else {}})
        given = {param for call in predicted or () if call["name"] == gold_name for param in call["arguments"]}
        required = _required(doc)
        expected = dict(gold_arguments)
        if given:
            # A call with no arguments at all is not let off: the checker rejects it against a documented function
            # ("wrong_param"), so there every gold parameter counts as missing.
            expected = {param: value for param, value in gold_arguments.items() if param in required or param in given}
        outcome = classify_call_lists(predicted, [{"name": gold_name, "arguments": expected}], signatures)
        if best is None or outcome.reward > best[1]:
            best = (outcome.category, outcome.reward)
    assert best is not None
    if best[0] == CORRECT:
        # The call is right by TL's rules but the checker still rejects it: an argument-less call where neither
        # side has arguments ("wrong_param" quirk), a required parameter the ground truth itself lacks (an
        # annotation defect: "lack_args"), or a checker crash on the documentation. The arguments are what failed.
        return CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH]
    return best
