"""The "toolbench failures" terminal section: each failed case's node id, error type and its whole one-line reason.

A benchmark run exits 0 with failing cases (they are the measurement), and pytest's own short summary cuts each
reason to the terminal's width, so the plugin lists the failures itself: the first :data:`SHOWN_PER_GROUP` of each
suite and error type, in case order, and how many more there are. Built on the controller from the case records,
so a serial run and an ``-n N`` run print the same lines.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from ..contract.suite import NOT_SCORED, CaseRecord

SHOWN_PER_GROUP = 20
#: a reason is one line, never cut to the terminal's width (it may wrap); only a pathological one is bounded
REASON_LIMIT = 2000
WHERE_FULL = "full messages: --tb=short, or each case's message in --toolbench-json"


def one_line(text: str) -> str:
    """The explanation on one line: its lines joined with " / ", whitespace kept as written inside each line."""
    joined = " / ".join(line.strip() for line in (text or "").splitlines() if line.strip())
    if len(joined) > REASON_LIMIT:
        joined = joined[:REASON_LIMIT] + f"… [{len(joined):,} characters]"
    return joined or "(no explanation)"


def failure_line(record: CaseRecord) -> str:
    where = record.nodeid or f"{record.suite}::{record.case_id}"
    line = f"{where}: {record.error_type or 'failed'}: {one_line(record.explanation or '')}"
    if record.known_defect:
        line += " (known upstream defect)"
    return line


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
    out = [f"{what} (node id: error type: reason; the first {shown_per_group} of "
           f"each suite and error type; {WHERE_FULL})"]
    for (suite, error_type), members in sorted(groups.items()):
        members.sort(key=lambda r: (r.order, str(r.case_id)))
        out.extend(failure_line(record) for record in members[:shown_per_group])
        if len(members) > shown_per_group:
            out.append(f"... and {len(members) - shown_per_group} more {suite} {error_type} failures "
                       f"({len(members)} in all; {WHERE_FULL})")
    return out
