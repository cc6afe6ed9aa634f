"""The one serialisation policy for per-case records: what the JSON file, the HTML payload and the xdist transport
carry for a scored case.

Model output is arbitrary data, and a record holds values derived from it (decoded calls, arguments, the raw text).
Not every such value survives every channel: ``json.dumps`` refuses ints beyond 4,300 digits and recurses on deep
nesting, ``NaN`` is not JSON, a lone surrogate cannot be encoded as UTF-8, and execnet (pytest-xdist's transport)
cannot carry ints outside 32/64 bits. So every record is made safe once, here, by one pure function, and then
travels as ASCII JSON text: a serial run and an ``-n 2`` run therefore keep exactly the same record.

The rules, each visible in the value it produces (nothing is dropped silently):

- ints outside the signed 64-bit range become strings (``"12345…67890 (5000 digits)"`` when long);
- ``nan``/``inf``/``-inf`` become the strings ``"nan"``, ``"inf"``, ``"-inf"``;
- strings keep their text; lone surrogates are written as their ``\\udXXX`` escape text, and a string longer than its
  field's limit is cut with ``… [cut: N characters in all]``;
- containers deeper than :data:`MAX_DEPTH` levels end in ``"… [nested deeper than 40 levels]"``; a structure with
  more than :data:`MAX_NODES` values ends in ``"… [cut: more than 20000 values]"``;
- anything else (sets, tuples, bytes, objects) becomes a list or its bounded ``str``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..contract.safe_values import (  # noqa: F401 - the policy's limits and functions, used here and re-exported
    INT64_BOUND,
    LEAF_LIMIT,
    MAX_DEPTH,
    MAX_NODES,
    MESSAGE_LIMIT,
    OUTPUT_LIMIT,
    TEXT_LIMIT,
    safe_text,
    safe_value,
)
from ..contract.suite import NOT_RUN, NOT_SCORED, CaseRecord

#: Record fields and the limit each is held to. Text fields are cut to their limit; structured fields go through
#: :func:`safe_value`. Fields not listed are set by the core itself from the suite definition and data.
TEXT_FIELDS = {"output": OUTPUT_LIMIT, "explanation": TEXT_LIMIT, "message": MESSAGE_LIMIT}
VALUE_FIELDS = ("decoded", "expected", "counts", "labels", "details", "keywords", "comparison", "prompts")
#: ``prompts`` (``--toolbench-keep-prompts``) is kept whole for a diff: each text up to ``OUTPUT_LIMIT``, and up to
#: this many values in all (every token id of a long conversation's prompts)
PROMPT_NODES = 5_000_000


def safe_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record made JSON-safe under the policy; idempotent (a safe record comes back equal)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in TEXT_FIELDS and isinstance(value, str):
            out[key] = safe_text(value, TEXT_FIELDS[key])
        elif key == "counts" and isinstance(value, Mapping):
            out[key] = {safe_text(str(k), 200): _count(v) for k, v in value.items()}
        elif key == "labels" and isinstance(value, Mapping):
            out[key] = {safe_text(str(k), 200): safe_text(str(v), 200) for k, v in value.items()}
        elif key == "prompts":
            # --toolbench-keep-prompts: kept whole for a diff (a prompt's text up to the output limit, every token id)
            out[key] = safe_value(value, OUTPUT_LIMIT, max_nodes=PROMPT_NODES)
        else:
            out[key] = safe_value(value)
    return out


def _count(value: Any) -> Any:
    """Counts feed the aggregation: keep finite numbers as they are; anything else is shown, not summed."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value) and -INT64_BOUND <= value < INT64_BOUND:
        return value
    return safe_value(value)


def encode(record: Mapping[str, Any]) -> str:
    """The transport form: ASCII JSON text of the safe record (execnet carries a plain str without surprises)."""
    return json.dumps(safe_record(record), ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def build_record(fields: Mapping[str, Any], nodeid: str | None = None, sample: int | None = None) -> CaseRecord:
    """The case's record, made once: ``fields`` (a record's JSON fields, without ``nodeid``, ``message`` and
    ``sample``) made safe under the policy, then the node id, the ``--toolbench-repeat`` sample and, on a record
    that did not pass, ``message`` (:func:`fail_message`). A safe record is a fixed point of the JSON transport, so
    what an xdist worker sends is exactly what a single process keeps."""
    safe = safe_record(fields)
    if not safe.get("passed"):
        safe["message"] = fail_message(safe.get("error_type"), safe.get("explanation", ""), safe.get("output") or "")
    return CaseRecord.from_json({**safe, "nodeid": nodeid, "sample": sample})


def fail_message(error_type: str | None, explanation: str, output: str = "") -> str:
    """The assertion text, from a safe record's fields (so it can cross to the xdist controller whatever the
    output); the record's ``message``. A case that is not scored is skipped with ``not scored: <reason>``; a case
    with no verdict (``not_run``) ran no test, and its message is its error type and explanation."""
    if error_type == NOT_SCORED:
        return safe_text(f"not scored: {explanation}", MESSAGE_LIMIT)
    if error_type == NOT_RUN:
        return safe_text(f"{NOT_RUN}: {explanation}", MESSAGE_LIMIT)
    shown = output if len(output) <= 2000 else output[:2000] + f"... [{len(output)} characters]"
    lines = [f"{error_type or 'failed'}: {explanation}".rstrip(), "", f"model output: {shown!r}"]
    return safe_text("\n".join(lines), MESSAGE_LIMIT)


def transport(record: CaseRecord) -> str:
    """A record that is already safe (made through :func:`safe_record`), as ASCII JSON text."""
    return json.dumps(record.to_json(), ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def from_report(report: Any) -> CaseRecord | None:
    """The case record a test report carries (decoded once, then kept on the report), or None."""
    record = getattr(report, "toolbench", None)
    if record is None:
        text = getattr(report, "toolbench_json", None)
        if text is None or getattr(report, "when", None) != "call":
            return None
        record = report.toolbench = CaseRecord.from_json(decode(text))
    return record


def decode(text: str) -> dict[str, Any]:
    return json.loads(text)


def dump_document(document: Any) -> str:
    """A whole results document (already built from safe records) as JSON text; ``allow_nan=False`` so a stray
    non-finite figure fails here, loudly, instead of writing a file other JSON readers reject."""
    return json.dumps(document, ensure_ascii=False, indent=1, allow_nan=False, default=str)
