"""A failed AST case's answer compared parameter by parameter, for the reports (never for the verdict).

BFCL's ground truth gives, per parameter, the list of values it accepts (``""`` in it: the parameter may be left
out), and its checker stops at the first parameter that fails. A reader wants every parameter: what the model gave,
what was accepted and whether that parameter alone passes. Each parameter is judged by the official rule itself
(:func:`.ast_checker.check_single_call`) on a probe call: the model's value for that parameter, every other expected
parameter at its first accepted value (left out where it may be). The probe made only of accepted values must pass,
else the table is not given (the rule cannot be split by parameter there), so a row is never marked by a guess.
Expected calls are paired with the model's calls by function name, in order (upstream's ``multiple`` checks the
first call only and ``parallel`` matches greedily; the verdict stays theirs, the pairing is only for reading).
"""

from __future__ import annotations

import re
from typing import Any

from .ast_checker import _find_description, check_single_call

NOT_GIVEN = "(not given)"


def _first_accepted(values: list) -> tuple[bool, Any]:
    """(may be left out, the value a probe uses)."""
    optional = "" in values
    chosen = next((value for value in values if value != ""), None)
    return optional, chosen


def _probe(description: dict, name: str, arguments: dict | None, expected: dict, parameter: str | None,
           language: str, underscore_to_dot: bool) -> bool:
    """Does the call with ``parameter`` as the model gave it (None: no parameter of the model's) and every other
    expected parameter at an accepted value pass the official rule?"""
    probe = {}
    for other, values in expected.items():
        if other == parameter:
            continue
        optional, chosen = _first_accepted(values)
        if not optional:
            probe[other] = chosen
    if parameter is not None and arguments is not None and parameter in arguments:
        probe[parameter] = arguments[parameter]
    return check_single_call(description, {name: probe}, {"_": expected}, language, underscore_to_dot).valid


def compare_parameters(functions: Any, calls: list, ground_truth: list, language: str,
                       underscore_to_dot: bool = False) -> list[dict[str, Any]] | None:
    """Rows ``{"part", "given", "accepted", "ok", "note"}`` for every expected and given parameter, or None where
    the answer cannot be split so (an unknown function description, a probe of accepted values that fails)."""
    try:
        rows: list[dict[str, Any]] = []
        used: set[int] = set()
        for expected_call in ground_truth:
            expected_name = next(iter(expected_call))
            expected = expected_call[expected_name]
            description = _find_description(functions, expected_name)
            if not isinstance(description, dict) or not isinstance(expected, dict):
                return None
            name = re.sub(r"\.", "_", description["name"]) if underscore_to_dot else description["name"]
            if not _probe(description, name, None, expected, None, language, underscore_to_dot):
                return None  # even the accepted values fail the rule alone: no honest split by parameter
            index = next((i for i, call in enumerate(calls)
                          if i not in used and isinstance(call, dict) and name in call), None)
            if index is None:
                rows.append({"part": expected_name, "given": "(no such call)", "accepted": "a call", "ok": False,
                             "note": "the model did not call this function"})
                continue
            used.add(index)
            arguments = calls[index][name]
            if not isinstance(arguments, dict):
                return None
            for parameter in dict.fromkeys([*expected, *arguments]):
                ok = _probe(description, name, arguments, expected, parameter, language, underscore_to_dot)
                given = arguments[parameter] if parameter in arguments else NOT_GIVEN
                if parameter not in expected:
                    accepted, note = "(not a parameter of the expected call)", "unexpected parameter"
                else:
                    accepted = expected[parameter]
                    note = "may be left out" if "" in accepted and parameter not in arguments else ""
                rows.append({"part": f"{expected_name}.{parameter}", "given": given, "accepted": accepted,
                             "ok": ok, "note": note})
        for index, call in enumerate(calls):
            if index not in used:
                called = next(iter(call), "?") if isinstance(call, dict) and call else "?"
                rows.append({"part": str(called), "given": call, "accepted": "(no such call expected)", "ok": False,
                             "note": "a call the ground truth does not have"})
        return rows
    except Exception:  # noqa: BLE001 - a reading aid never costs the case its verdict
        return None
