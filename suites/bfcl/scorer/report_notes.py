"""What BFCL adds to the run's reports, declared by the suite so that the core names no suite: the meaning of its
own case labels (``LABEL_NOTES``) and the leaderboard row the run was prompted and decoded as (``header_facts``: a
line of the run facts in every report, read from the run header's ``bfcl_row``)."""

from __future__ import annotations

from typing import Any, Mapping

#: What each of BFCL's own per-case labels means (counts are cases).
LABEL_NOTES = {
    "config": "BFCL format sensitivity: the system-prompt format the case was asked in",
    "unpassable": "BFCL: items no model can pass (upstream ground truth unreachable; "
                  "suites/bfcl/scorer/unpassable.yaml), by upstream issue; they stay in every official figure",
}

NO_ROW = "no row: not comparable with the board"


def row_text(header: Mapping[str, Any]) -> str | None:
    """The BFCL row the run was prompted and decoded as (the header's ``bfcl_row``), or :data:`NO_ROW` with the
    reason; None where the answers are the reference ones (gold)."""
    if header.get("backend") == "gold":
        return None
    choice = header.get("bfcl_row")
    if not isinstance(choice, Mapping):
        return NO_ROW + (" (replayed outputs decoded by the per-file rule; name the row with --toolbench-bfcl-model)"
                         if header.get("backend") == "replay" else "")
    if choice.get("row"):
        how = {"named": "named by --toolbench-bfcl-model", "checkpoint id": "matched by the checkpoint id"}.get(
            str(choice.get("matched")), str(choice.get("matched") or ""))
        return f"{choice['row']} ({choice.get('handler')}, {choice.get('mode')}; {how})"
    if choice.get("handler"):
        return f"{NO_ROW} (the {choice['handler']} of the checkpoint's family, no row named or matched)"
    return f"{NO_ROW} (the checkpoint's chat template; name a row with --toolbench-bfcl-model)"


def header_facts(header: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The run facts BFCL adds when it ran: its row (the terminal shows the label in lower case)."""
    row = row_text(header)
    return [("BFCL row", row)] if row else []
