"""The "toolbench failures" terminal section: each failed case's node id, error type and its whole one-line reason,
then the first characters of the model's output and of the calls decoded from it (``| output: "..." | decoded:
...``), so a developer sees what the model wrote beside what was read of it.

A benchmark run exits 0 with failing cases (they are the measurement), and pytest's own short summary cuts each
reason to the terminal's width, so the plugin lists the failures itself: the first :data:`SHOWN_PER_GROUP` of each
suite and error type, in case order, and how many more there are. Built on the controller from the case records,
so a serial run and an ``-n N`` run print the same lines.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Iterable

from ..contract.safe_values import utf8_text
from ..contract.suite import NOT_SCORED, CaseRecord

SHOWN_PER_GROUP = 20
#: a reason is one line, never cut to the terminal's width (it may wrap); only a pathological one is bounded
REASON_LIMIT = 2000
WHERE_FULL = "full messages: --tb=short, or each case's message in --toolbench-json"
#: characters of the model's output and of the decoded calls shown on a failure line
OUTPUT_PREVIEW = 80
DECODED_PREVIEW = 120


def one_line(text: str) -> str:
    """The explanation on one line: its lines joined with " / ", whitespace kept as written inside each line."""
    joined = " / ".join(line.strip() for line in (text or "").splitlines() if line.strip())
    if len(joined) > REASON_LIMIT:
        joined = joined[:REASON_LIMIT] + f"… [{len(joined):,} characters]"
    return joined or "(no explanation)"


def _preview(text: str, limit: int) -> str:
    """The first ``limit`` characters as a JSON string (newlines, NUL bytes and other controls escaped, so the line
    stays one line), with the length when cut; lone surrogates as their escape text."""
    shown = json.dumps(text[:limit], ensure_ascii=False)
    if len(text) > limit:
        shown += f"… ({len(text):,} characters)"
    return utf8_text(shown)


def _decoded_preview(decoded: Any) -> str:
    try:
        text = json.dumps(decoded, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = str(decoded)
    cut = len(text) > DECODED_PREVIEW
    return utf8_text(text[:DECODED_PREVIEW] + ("…" if cut else ""))


def output_preview(record: CaseRecord) -> str:
    """``| output: "<first characters>" | decoded: <calls>``: the model's output beside what was decoded of it (the
    decoded part only where the scorer decoded something)."""
    output = record.output or ""
    text = f"| output: {_preview(output, OUTPUT_PREVIEW)}" if output else "| output: (empty)"
    if record.decoded is not None:
        text += f" | decoded: {_decoded_preview(record.decoded)}"
    return text


def failure_line(record: CaseRecord) -> str:
    where = record.nodeid or f"{record.suite}::{record.case_id}"
    line = f"{where}: {record.error_type or 'failed'}: {one_line(record.explanation or '')}"
    if record.known_defect:
        line += " (known upstream defect)"
    return f"{line} {output_preview(record)}"


def failed_records(records: Iterable[CaseRecord]) -> list[CaseRecord]:
    """The records whose case failed (a case that was not scored is skipped, not failed)."""
    return [record for record in records if not record.passed and record.error_type != NOT_SCORED]


def lines(records: Iterable[CaseRecord], shown_per_group: int = SHOWN_PER_GROUP,
          defects_expected: bool = False) -> list[str]:
    """The section's lines: per suite and error type (both in name order), the first ``shown_per_group`` failed
    cases in case order, then one line counting the rest. ``defects_expected``: the run marks known upstream
    defects as expected failures (the gold backend), which pytest counts as xfailed, not failed: the first line
    counts them apart, in pytest's word, so both summaries give the same numbers."""
    groups: dict[tuple[str, str], list[CaseRecord]] = defaultdict(list)
    failed = failed_records(records)
    for record in failed:
        groups[(str(record.suite), str(record.error_type or "failed"))].append(record)
    if not groups:
        return []
    expected = sum(1 for record in failed if record.known_defect) if defects_expected else 0
    what = (f"{len(failed) - expected} failing benchmark cases" if not expected else
            f"{len(failed) - expected} failing benchmark cases and {expected} expected failures (xfailed: known "
            "upstream defects, the reference answer itself is wrong)" if expected < len(failed) else
            f"{expected} expected failures (xfailed: known upstream defects, the reference answer itself is wrong)")
    out = [f"{what} (node id: error type: reason | output | decoded; the first {shown_per_group} of "
           f"each suite and error type; {WHERE_FULL})"]
    for (suite, error_type), members in sorted(groups.items()):
        members.sort(key=lambda r: (r.order, str(r.case_id)))
        out.extend(failure_line(record) for record in members[:shown_per_group])
        if len(members) > shown_per_group:
            out.append(f"... and {len(members) - shown_per_group} more {suite} {error_type} failures "
                       f"({len(members)} in all; {WHERE_FULL})")
    return out
