"""Reading saved model outputs (replay files) so that one bad record costs one case, never a whole suite.

Each benchmark's ``replay_outputs(path)`` returns a :class:`ReplayOutputs`: a ``dict`` ``{case id: saved output}``
(so callers that only want the outputs keep working) that also carries what reading found:

- ``problems``: one :class:`Problem` per bad line (naming the file, the line and, for JSON, the column), per file
  that cannot be read, is empty or is in no known layout, and per duplicate id; the rest of the file and the other
  files are still read.
- ``unreadable``: ``{case id: reason}`` for cases whose saved output exists but cannot be turned into the text the
  scorer reads (a line cut short whose id can still be seen, a list-form argument nested too deeply to render...).
  The replay backend fails exactly those cases (``ReplayOutputError``) instead of reporting "no output".
- ``origins``: ``{case id: (file, line)}`` of every output kept, so unknown ids can be reported per file.

The readers use :func:`json_lines` (JSON Lines, one record per line) and :func:`json_array` (one JSON array, read
element by element so the records before a syntax error still count). Bytes are decoded as strict UTF-8, one line
at a time; nothing is decoded with replacement characters, so an output is never silently altered.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .data_files import validate
from .errors import DataError

ERROR = "error"
WARNING = "warning"

#: Bad lines reported one by one per file; the rest are counted in one closing line.
MAX_LINE_PROBLEMS = 20

#: The key of a case's ``--toolbench-repeat`` sample ``K`` (K >= 1) in :class:`ReplayOutputs`: the case id and ``[rK]``,
#: as the sample's item is named; sample 0 is the case id itself (a results file that holds several trials per case,
#: τ²-bench's, maps trial K to it).
SAMPLE_KEY = re.compile(r"^(?P<case_id>.*)\[r(?P<sample>[1-9][0-9]*)\]$")


def sample_key(case_id: str, sample: int | None) -> str:
    """The key of ``case_id``'s ``sample``-th saved output (its plain id for sample 0 or None)."""
    return case_id if not sample else f"{case_id}[r{sample}]"


def case_of_key(key: str) -> str:
    """The case id a key of :class:`ReplayOutputs` belongs to (``sample_key``'s inverse)."""
    match = SAMPLE_KEY.match(key)
    return match.group("case_id") if match else key


#: ``case_of(position, raw text)``: the case a bad record belongs to, when it can be told (else None).
CaseOf = Callable[[int, str], "str | None"]


@dataclass(frozen=True)
class Problem:
    """One thing reading replay files found: ``FILE[:LINE]: level: message``."""

    level: str
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        if self.file is None:
            return f"{self.level}: {self.message}"
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.level}: {self.message}"


class ReplayOutputs(dict):
    """``{case id: saved output text}`` plus what reading the files found (see the module docstring).

    ``duplicates`` says which record counts when an id repeats; the default keeps the first one, because no
    upstream scorer defines a rule (BFCL and ACEBench stop on a length mismatch, NesTools scores every line).
    """

    def __init__(self, duplicates: str = "the first one counts") -> None:
        super().__init__()
        self.problems: list[Problem] = []
        self.unreadable: dict[str, str] = {}
        self.origins: dict[str, tuple[str, int | None]] = {}
        #: ``{case id: reason}`` of cases the benchmark's own scorer leaves out of every denominator (NesTools' API
        #: failures): they fail as ``missing_output`` but add nothing to the counts, as upstream.
        self.left_out: dict[str, str] = {}
        self.files: list[str] = []
        self.duplicates = duplicates
        self._line_problems: dict[str, int] = {}
        self._duplicates: dict[str, int] = {}

    # -- problems ----------------------------------------------------------------------------------------------
    def error(self, message: str, file: Path | str | None = None, line: int | None = None) -> None:
        self.problems.append(Problem(ERROR, message, None if file is None else str(file), line))

    def warning(self, message: str, file: Path | str | None = None, line: int | None = None) -> None:
        self.problems.append(Problem(WARNING, message, None if file is None else str(file), line))

    def bad_line(self, file: Path | str, line: int | None, message: str, case_id: str | None = None) -> None:
        """A record that cannot be used: an error naming file and line (the first ``MAX_LINE_PROBLEMS`` per file,
        then only counted); when its case is known, that case fails with the reason instead of having no output."""
        file = str(file)
        count = self._line_problems[file] = self._line_problems.get(file, 0) + 1
        if count <= MAX_LINE_PROBLEMS:
            self.error(message, file, line)
        if case_id is not None:
            where = file if line is None else f"{file}:{line}"
            self.mark_unreadable(case_id, f"{where}: {message}", file, line)

    def finish_file(self, file: Path | str) -> None:
        """Close a file's report: the counts of bad lines and of duplicate ids not listed one by one."""
        count = self._line_problems.get(str(file), 0)
        if count > MAX_LINE_PROBLEMS:
            self.error(f"{count - MAX_LINE_PROBLEMS} more unusable lines not listed ({count} in all)", file)
        count = self._duplicates.get(str(file), 0)
        if count > MAX_LINE_PROBLEMS:
            self.warning(f"{count - MAX_LINE_PROBLEMS} more duplicate ids not listed ({count} in all; "
                         f"{self.duplicates})", file)

    # -- outputs -----------------------------------------------------------------------------------------------
    def add(self, case_id: str, output: str, file: Path | str, line: int | None) -> bool:
        """Keep ``output`` for ``case_id`` unless an earlier usable record had that id (then a warning; False)."""
        file = str(file)
        if case_id in self:
            self._duplicate(case_id, file, line)
            return False
        if case_id in self.unreadable:
            # An earlier record of this case could not be used; this one can, so it is the case's output.
            self._duplicate(case_id, file, line, kept="this record counts, as the earlier one is unusable")
            del self.unreadable[case_id]
        self[case_id] = output
        self.origins[case_id] = (file, line)
        return True

    def mark_unreadable(self, case_id: str, reason: str, file: Path | str, line: int | None) -> None:
        """The case has a saved output that cannot be used; a usable record of the same id wins over it."""
        if case_id in self or case_id in self.unreadable:
            self._duplicate(case_id, str(file), line)
            return
        self.unreadable[case_id] = reason
        self.origins[case_id] = (str(file), line)

    def _duplicate(self, case_id: str, file: str, line: int | None, kept: str | None = None) -> None:
        count = self._duplicates[file] = self._duplicates.get(file, 0) + 1
        if count > MAX_LINE_PROBLEMS:
            return
        first_file, first_line = self.origins.get(case_id, (None, None))
        first = "" if first_file is None else (
            f" (first at {first_file}:{first_line})" if first_line is not None else f" (first in {first_file})")
        self.warning(f"duplicate id {case_id!r}{first}: {kept or self.duplicates}", file, line)


# ------------------------------------------------------------------------------------------------------------
# Reading files


def read_bytes(outputs: ReplayOutputs, path: Path) -> bytes | None:
    """The file's bytes, or None with an error (unreadable) or a warning (empty); the file is listed as read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        outputs.error(f"cannot read the file ({exc.strerror or exc})", path)
        return None
    outputs.files.append(str(path))
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark is not part of the first record
        data = data[3:]
    if not data.strip():
        outputs.warning("empty file: no saved outputs in it", path)
        return None
    return data


def json_lines(outputs: ReplayOutputs, path: Path, schema: Mapping[str, Any] | None = None, what: str = "record",
               case_of: CaseOf | None = None) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(position, line number, record)`` for each usable line of a JSON Lines file.

    Blank lines are skipped and do not count as positions. A line that is not UTF-8, not JSON, nested too deeply to
    read or not a ``schema`` record is reported (:meth:`ReplayOutputs.bad_line`, with ``case_of`` naming its case
    where the raw text shows it) and skipped; the following lines are still read. ``what`` names the record kind
    in messages (e.g. "BFCL result").
    """
    data = read_bytes(outputs, path)
    if data is None:
        return
    lines = data.split(b"\n")
    position = 0
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        number = index + 1
        last = index == len(lines) - 1  # a last line without its newline may have been cut short
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            outputs.bad_line(path, number, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                             _case(case_of, position, raw[:exc.start].decode("utf-8")))
            position += 1
            continue
        record, problem = _parse(text, last)
        if problem is None and schema is not None:
            problem = _schema_problem(record, schema, path, what)
        if problem is not None:
            outputs.bad_line(path, number, problem, _case(case_of, position, text))
        else:
            yield position, number, record
        position += 1
    outputs.finish_file(path)


def json_array(outputs: ReplayOutputs, path: Path, schema: Mapping[str, Any] | None = None, what: str = "record",
               case_of: CaseOf | None = None) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(position, line number, record)`` for the elements of a file holding one JSON array.

    Elements are read one at a time, so those before a syntax error (or a non-UTF-8 byte, or absurd nesting) still
    count; the error names the line and column, and the element at that position is unreadable (``case_of``). An
    element that is not a ``schema`` record is reported on its own and the next one is read.
    """
    data = read_bytes(outputs, path)
    if data is None:
        return
    try:
        text, cut = data.decode("utf-8"), None
    except UnicodeDecodeError as exc:  # read what comes before the bad byte; the error names it
        text, cut = data[:exc.start].decode("utf-8"), exc
    cut_line = _line_of(text, len(text))
    end_line = _line_of(text, len(text.rstrip()))

    def stop(line: int, problem: str, position: int, at: int) -> None:
        outputs.bad_line(path, line, f"{problem}; records from position {position} on are not read",
                         _case(case_of, position, text[at:at + 2000]))

    at = _skip_space(text, 0)
    if not text.startswith("[", at):
        if cut is not None and at >= len(text):
            outputs.bad_line(path, cut_line, _utf8_problem(data, cut))
        else:
            outputs.error(f"not a JSON array of {what}s (the file starts with {text[at:at + 20]!r})", path)
        return
    decoder = json.JSONDecoder()
    at = _skip_space(text, at + 1)
    if text.startswith("]", at):
        outputs.warning("empty JSON array: no saved outputs in it", path)
        return
    position = 0
    while True:
        line = _line_of(text, at)
        try:
            record, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            if cut is not None and exc.lineno >= cut_line:
                stop(cut_line, _utf8_problem(data, cut), position, at)
            elif exc.lineno >= end_line:
                stop(exc.lineno, f"the file ends inside a record (truncated?): {exc.msg} (column {exc.colno})",
                     position, at)
            else:
                stop(exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})", position, at)
            break
        except RecursionError:
            stop(line, "a record nested too deeply to read", position, at)
            break
        problem = _schema_problem(record, schema, path, what) if schema is not None else None
        if problem is not None:
            outputs.bad_line(path, line, f"position {position}: {problem}", _case(case_of, position, ""))
        else:
            yield position, line, record
        position += 1
        at = _skip_space(text, end)
        if text.startswith(",", at):
            at = _skip_space(text, at + 1)
            continue
        if text.startswith("]", at):
            rest = _skip_space(text, at + 1)
            if cut is not None:
                outputs.bad_line(path, cut_line, _utf8_problem(data, cut))
            elif rest < len(text):
                outputs.bad_line(path, _line_of(text, rest), "extra data after the JSON array")
            break
        if cut is not None and at >= len(text):
            outputs.bad_line(path, cut_line, f"{_utf8_problem(data, cut)}; records from position {position} on "
                                             "are not read")
        elif at >= len(text):
            outputs.bad_line(path, end_line, "the file ends before the JSON array is closed (truncated?)")
        else:
            column = at - text.rfind("\n", 0, at)
            outputs.bad_line(path, _line_of(text, at), f"invalid JSON: expecting ',' or ']' (column {column}); "
                                                       f"records from position {position} on are not read")
        break
    outputs.finish_file(path)


def leading_id(text: str, key: str = "id") -> str | int | None:
    """The value of ``key`` when a record's raw text starts with it (``{"id": "simple_python_3", ...``): how the case
    of a line that cannot be parsed is told. Only the leading key counts, never one nested deeper in the record."""
    match = re.match(r'\s*\{\s*"' + re.escape(key) + r'"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d+)\s*[,}])', text)
    if match is None:
        return None
    if match.group(2) is not None:
        return int(match.group(2))
    try:
        return json.loads(f'"{match.group(1)}"')
    except ValueError:
        return None


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 line``, ``3 lines``."""
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


def _case(case_of: CaseOf | None, position: int, text: str) -> str | None:
    if case_of is None:
        return None
    try:
        return case_of(position, text)
    except Exception:  # noqa: BLE001 - telling the case is a courtesy; it must not stop the reading
        return None


def _parse(text: str, last: bool) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON: {exc.msg} (column {exc.colno})"
        if last:
            problem += "; the file ends on this line, without a newline (truncated?)"
        return None, problem
    except RecursionError:
        return None, "nested too deeply to read (RecursionError)"


def _schema_problem(record: Any, schema: Mapping[str, Any], path: Path, what: str) -> str | None:
    try:
        validate(record, schema, path)
    except DataError as error:
        where = f"{error.field}: " if error.field and error.field != "<root>" else ""
        return f"not a {what} ({where}{error.message})"
    except RecursionError:
        return f"not a {what} (nested too deeply to check)"
    return None


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _utf8_problem(data: bytes, error: UnicodeDecodeError) -> str:
    start = data.rfind(b"\n", 0, error.start) + 1
    return f"not UTF-8 (byte 0x{data[error.start]:02x} at column {error.start - start + 1})"
