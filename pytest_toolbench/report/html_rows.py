"""pytest-html's results table: the three added columns and each case row's details (what the model was asked, its
raw output, the parsed calls, the expected answer and their diff), as functions of plain values.

Per-case HTML lives in each row's ``extras`` (pytest-html embeds all rows as one JSON blob), so texts are cut to a few
kilobytes with their full length shown, which keeps a 10,000-row page usable. The summary section above the table
is ``report/html.py``.
"""

from __future__ import annotations

import difflib
import json
from html import escape
from typing import Any, Mapping

from ..run.records import CaseRecord

#: Characters kept per text field: failed cases are read closely, passed ones only glanced at.
FAILED_LIMIT = 3000
PASSED_LIMIT = 200
MESSAGE_LIMIT = {True: 160, False: 1200}  # per request message, by "passed"
DIFF_LINES = 60

def text(value: str) -> str:
    """Element text: only &, < and > need escaping. Every row's HTML is stored inside a JSON string inside an
    HTML attribute, so each avoided entity or quote saves several bytes per occurrence on big pages."""
    return escape(value, quote=False)


def clip(value: str, limit: int) -> str:
    """Escaped text, cut at ``limit`` characters with the full length stated."""
    if len(value) <= limit:
        return text(value)
    return text(value[:limit]) + f"<i class=tb-cut>… [{limit:,} of {len(value):,} characters shown]</i>"


def pretty(value: Any, compact: bool = False) -> str:
    if isinstance(value, str):
        return value
    if compact:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True, default=str)


def diff_html(expected: Any, decoded: Any) -> str:
    lines = list(difflib.unified_diff(pretty(expected).splitlines(), pretty(decoded).splitlines(),
                                      "expected", "parsed", n=2, lineterm=""))
    if not lines:
        return ""
    shown = []
    for line in lines[:DIFF_LINES]:
        kind = "a" if line.startswith("+") else "d" if line.startswith("-") else "h" if line.startswith("@@") else ""
        escaped = text(line if len(line) <= 400 else line[:400] + "…")
        shown.append(f"<span class=tb-{kind}>{escaped}</span>" if kind else escaped)
    if len(lines) > DIFF_LINES:
        shown.append(f"<i class=tb-cut>… [{DIFF_LINES} of {len(lines)} diff lines shown]</i>")
    return "\n".join(shown)


def _block(title: str, body: str, is_open: bool, css: str = "") -> str:
    return (f"<details{' open' if is_open else ''}><summary>{text(title)}</summary>"
            f"<pre{f' class={css}' if css else ''}>{body}</pre></details>")


def request_text(request: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    """(title, escaped body) of a request given as plain data (``{"messages": [...], "tools": [...]}``, see
    ``run/case_request.py``): each message cut on its own, tools listed by name only."""
    limit = MESSAGE_LIMIT[passed]
    parts = []
    all_messages = list(request.get("messages") or [])
    messages = all_messages
    if passed:  # the system prompt is the same for every case: the last user turn identifies a passed one
        users = [m for m in messages if m.get("role") == "user"]
        messages = users[-1:] or messages[-1:]
    for message in messages:
        content = message.get("content")
        content = content if isinstance(content, str) else pretty(content, compact=True)
        parts.append(f"<b>[{text(str(message.get('role', '?')))}]</b>\n{clip(content or '', limit)}")
    tools = list(request.get("tools") or [])
    names = [str((t.get("function") or t).get("name", "?")) if isinstance(t, Mapping) else "?" for t in tools]
    if tools:
        listed = ", ".join(names[:20]) + (f", … ({len(names)} in all)" if len(names) > 20 else "")
        parts.append(f"<b>[tools]</b>\n{text(listed)}")
    title = f"Request ({len(all_messages)} messages" + (f", {len(tools)} tools" if tools else "")
    title += "; last user turn)" if passed and len(messages) < len(all_messages) else ")"
    return title, "\n\n".join(parts)


def passed_details(record: CaseRecord) -> str:
    """A passed case's details: the first characters of its raw output (and its finish reason when the answer was
    cut), nothing else. A passed row is glanced at, not read (its verdict is the Result column, its whole output is
    in the JSON results), and pytest-html stores every row's HTML inside a JSON string inside an HTML attribute, so
    each byte here costs about 1.5 in the page, per row: on a BFCL gold run (5,106 rows, 4,888 passed) the passed
    rows' request excerpts, explanations and folds took 3.7 of the page's 10.7 MB (docs/reports.md)."""
    finish = record.finish_reason
    note = f"<i>finish: {text(finish)}</i>" if finish and finish != "stop" else ""  # a cut answer that passed
    return f"<div class=tb-case><pre>{clip(record.output or '', PASSED_LIMIT)}</pre>{note}</div>"


def case_details(record: CaseRecord, request: Mapping[str, Any] | None = None) -> str:
    """One case's details: the message its test failed with, the request (closed) and the raw output, the parsed
    calls, the expected answer and their diff (or the scorer's part-by-part comparison). A passed case shows only an
    excerpt of its output (``passed_details``), which is what keeps a 10,000-row page small."""
    if record.passed:
        return passed_details(record)
    limit = FAILED_LIMIT
    output = record.output or ""
    message = record.message or record.explanation or ""  # the text the test failed with, as terminal and JSON
    parts = ["<div class=tb-case>",
             f"<p class=tb-why><b class=tb-ko>{text(record.error_type or 'failed')}</b></p>"
             f"<pre class=tb-message>{clip(message, limit)}</pre>"]
    if request is not None:
        title, body = request_text(request, False)
        parts.append(_block(title, body, False))
    finish = record.finish_reason
    parts.append(_block(f"Raw model output ({len(output):,} characters"
                        + (f", finish: {finish})" if finish else ")"), clip(output, limit), True))
    decoded, expected = record.decoded, record.expected
    comparison = comparison_html(record.comparison)
    if decoded is not None:
        parts.append(_block("Parsed calls", clip(pretty(decoded), limit), True))
    if comparison:  # the scorer's own part-by-part judgement: a diff against lists of accepted values would
        parts.append(comparison)  # mark every part as changed
    if expected is not None:
        parts.append(_block("Expected", clip(pretty(expected), limit), not comparison))
    if not comparison and decoded is not None and expected is not None:
        diff = diff_html(expected, decoded)
        if diff:
            parts.append(_block("Diff (expected → parsed)", diff, True, "tb-diff"))
    parts.append("</div>")
    return "".join(parts)


def comparison_html(rows: Any) -> str:
    """The scorer's comparison (``CaseRecord.comparison``): per part, what was given and what was accepted; only
    the parts that fail on their own are marked."""
    if not isinstance(rows, list) or not rows or not all(isinstance(row, Mapping) for row in rows):
        return ""
    failed = sum(not row.get("ok") for row in rows)
    body = []
    for row in rows[:DIFF_LINES]:
        ok = bool(row.get("ok"))
        note = f' <i>{text(str(row["note"]))}</i>' if row.get("note") else ""
        body.append(f'<tr class="{"tb-pass" if ok else "tb-fail"}"><td>{"ok" if ok else "✗"}</td>'
                    f'<td>{text(str(row.get("part", "")))}{note}</td>'
                    f'<td><code>{clip(pretty(row.get("given"), compact=True), 400)}</code></td>'
                    f'<td><code>{clip(pretty(row.get("accepted"), compact=True), 400)}</code></td></tr>')
    if len(rows) > DIFF_LINES:
        body.append(f'<tr><td colspan=4><i class=tb-cut>… [{DIFF_LINES} of {len(rows)} parts shown]</i></td></tr>')
    return (f"<details open><summary>Given → accepted, part by part ({failed} of {len(rows)} "
            f"{'fails' if failed == 1 else 'fail'})</summary><table class=\"tb-table tb-compare\">"
            "<tr><th></th><th>part</th><th>given</th><th>accepted (any of)</th></tr>"
            + "".join(body) + "</table></details>")


# -- the results table: three columns, each row's details -----------------------------------------------------
#: The columns added after pytest-html's "Result" and "Test" ones.
TABLE_HEADER_CELLS = ('<th class="sortable" data-column-type="suite">Suite</th>',
                      '<th class="sortable" data-column-type="category">Category</th>',
                      '<th class="sortable" data-column-type="errortype">Error category</th>')


def table_row_cells(record: CaseRecord | None) -> list[str]:
    """A row's three added cells (blank for a test that is not a benchmark case). The class is written unquoted
    (the same DOM): pytest-html keeps each cell as a JSON string inside an HTML attribute, where a quote costs 7
    bytes, twice per cell and three cells per row (0.4 MB on a BFCL run's 5,106 rows)."""
    values = ["", "", ""] if record is None else [
        record.suite or "", record.category or "", "" if record.passed else record.error_type or "failed"]
    return [f"<td class=col-suite>{text(values[0])}</td>",
            f"<td class=col-category>{text(values[1])}</td>",
            f"<td class=col-errortype>{text(values[2])}</td>"]


def without_repeated_log(data: list[str], longreprtext: str) -> list[str]:
    """A case row's log entries without pytest's copy of the scorer's explanation and output (the details block
    already shows them) and without the "No log output captured." line."""
    longrepr = escape(longreprtext) if longreprtext else None
    return [entry for entry in data if entry != "No log output captured."
            and not (longrepr and entry.startswith(longrepr))]
