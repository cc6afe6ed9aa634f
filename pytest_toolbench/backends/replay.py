"""The ``replay`` backend: scores outputs saved by another harness, in each benchmark's own result-file format.

Each suite's files are read at most once per process, whatever happens (the result, failures included, is cached),
by the benchmark's ``replay_outputs(path)``. Readers of the shipped benchmarks return a
:class:`~pytest_toolbench.contract.replay_files.ReplayOutputs`, which tolerates bad lines and files and says what it found;
a plain ``dict`` from another benchmark is taken as it is, and an exception from its reader is one problem.

For the run header and summary: :meth:`ReplayBackend.problems` lists every error and warning (bad lines naming
file and line, files in no known layout, empty files, duplicate ids, ids that match no case) and
:meth:`ReplayBackend.coverage` counts, per suite and category, the selected cases that have no output.

``--toolbench-replay-mode=fc|prompting`` (``mode``) says which kind of handler made the files, for benchmarks whose
official scorer decodes a whole model's output one way (BFCL: an FC model's decoder never reads text, a prompting
model's never reads structured calls). It reaches the readers that take a ``mode`` keyword; without it such a
reader decides per file. The choice is in the fingerprint and the run header.

**The BFCL row.** ``--toolbench-bfcl-model=<row>`` (or, without it, the row ``--model`` matches by checkpoint id or
family, exactly as the generation path matches it: ``prompting.rows.replay_row``) says which leaderboard row's handler
made the files; it reaches the readers that take a ``row`` keyword (BFCL's), which then decode every record with
that handler's decoders, as ``bfcl evaluate --model <row>`` does, whatever the per-file rule would say. A run
without a row (no option, no ``--model``, or ``--model`` matching no row) keeps the per-file rule, and so does one
given ``--toolbench-replay-mode`` (which states the files' mode itself; with a named row it is refused, as the row
decides). The row is in the fingerprint and the run header's ``bfcl_row``.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..contract.errors import MissingOutput, UsageProblem
from ..contract.replay_files import Problem, ReplayOutputs, case_of_key, plural, sample_key
from ..contract.safe_values import safe_text
from ..contract.suite import Backend, BackendCapabilities, Case, Generation, Task
from ..prompting import prompt_format, rows
from ..prompting.rows import RowChoice, RowError
from ..prompting.suite_prompts import SuitePrompts
from .kind import BackendKind, OptionValues, RunOptions, SuiteLookup, option

#: Unknown ids shown per file, as examples.
UNKNOWN_EXAMPLES = 5
#: ``--toolbench-replay-mode``: which handler made a replayed file (the replay backend hands it to readers that ask).
REPLAY_MODES = ("fc", "prompting")
#: ``--toolbench-replay-mode``'s help where no suite declares a handler library (which words it for its files)
REPLAY_MODE_HELP = ("How replayed result files were made: fc (a native-mode model's files) or prompting; default: "
                    "per file.")
#: Problems printed when the run starts (all of them are in the JSON header).
PROBLEM_LINES_SHOWN = 20


@dataclasses.dataclass(frozen=True)
class ReplayOptions:
    #: ``--toolbench-replay``, absolute
    path: str
    #: ``--toolbench-replay-mode``: None decides per file
    mode: str | None = None
    #: the row the files are decoded as (``rows.RowChoice.to_json()``; ``handler`` None: no row)
    row: dict | None = None


def _replay_mode_help() -> str:
    """The help of --toolbench-replay-mode, in the words of the handler library whose result files come in both
    modes (read once, as the options are declared)."""
    library = SuitePrompts.shipped().library()
    return library.replay_mode_help if library is not None else REPLAY_MODE_HELP


class ReplayKind(BackendKind):
    name = "replay"
    # a results file may hold several trials per case (τ²-bench's ``tau2 run``): --toolbench-repeat=K scores the
    # first K (``sample_key``); a sample the files do not hold is a missing output, never a copy of sample 0
    samples = True
    reports_selection = True
    options_type = ReplayOptions
    option_specs = (
        option("--toolbench-replay", group="toolbench", dest="toolbench_replay", default=None, metavar="PATH",
               help="Score saved outputs: a file or folder of the benchmarks' own result files."),
        option("--toolbench-replay-mode", group="toolbench", dest="toolbench_replay_mode", default=None,
               choices=REPLAY_MODES,
               help=_replay_mode_help()),
    )

    @classmethod
    def claims(cls, given: OptionValues) -> bool:
        return bool(given["toolbench_replay"])

    @classmethod
    def from_values(cls, given: OptionValues, model: str | None) -> ReplayOptions:
        replay = given["toolbench_replay"]
        if not replay:
            raise UsageProblem("--toolbench-backend replay needs --toolbench-replay PATH")
        _check_exists(replay)
        mode = given["toolbench_replay_mode"]
        row_option = rows.row_option()
        named = given.get(row_option.dest) if row_option is not None else None
        return ReplayOptions(path=str(Path(replay).resolve()), mode=mode, row=replay_row(named, model, mode).to_json())

    @classmethod
    def check_unchosen(cls, given: OptionValues) -> None:
        replay, mode = given["toolbench_replay"], given["toolbench_replay_mode"]
        if replay:
            _check_exists(replay)
        if mode:
            raise UsageProblem(f"--toolbench-replay-mode={mode} applies to replayed outputs only "
                               "(--toolbench-replay=PATH)")

    @classmethod
    def build(cls, options: RunOptions, suites: SuiteLookup) -> "ReplayBackend":
        return ReplayBackend(suites, options.backend_options.path, mode=options.backend_options.mode,
                             row=options.backend_options.row)

    @classmethod
    def describe(cls, options: RunOptions) -> str:
        row = options.backend_options.row or {}
        library = SuitePrompts.shipped().library()
        decoded = (library.replay_words(row) if row.get("handler") and library is not None
                   else f"replay mode: {options.backend_options.mode or 'per file'}")
        return f"replay of {options.backend_options.path} ({decoded})"

    @classmethod
    def row_choice(cls, options: RunOptions) -> RowChoice | None:
        row = options.backend_options.row
        return RowChoice.from_json(row) if row else None

    @classmethod
    def replayed_path(cls, options: RunOptions) -> str | None:
        return options.backend_options.path

    @classmethod
    def header_fields(cls, options: RunOptions) -> dict[str, Any]:
        # --toolbench-replay-mode: how BFCL's reader decodes the files (fc, prompting, or decided per file)
        return {"replay_mode": options.backend_options.mode or "per file"}

    @classmethod
    def report_selection(cls, backend: Backend, cases: list[Case], write_line: Callable[[str], None]) -> dict:
        """The replay files' problems (bad lines by file and line, unknown and duplicate ids, files in no known
        layout) and, per category, how many selected cases have no saved output: printed, and kept for the header
        (``replay_problems``, ``replay_coverage``)."""
        coverage = backend.coverage(cases)  # type: ignore[attr-defined]
        problems = [safe_text(line, 2000) for line in backend.problems()]  # type: ignore[attr-defined]
        without = {suite: {category: {"selected": selected, "without_output": missing}
                           for category, (selected, missing) in sorted(table.items())}
                   for suite, table in sorted(coverage.items())}
        for line in problems[:PROBLEM_LINES_SHOWN]:
            write_line(f"toolbench: replay: {line}")
        if len(problems) > PROBLEM_LINES_SHOWN:
            write_line(f"toolbench: replay: ... and {len(problems) - PROBLEM_LINES_SHOWN} more problems "
                       "(all of them in the --toolbench-json header)")
        for suite, table in without.items():
            gaps = [f"{category} {row['without_output']}/{row['selected']}" for category, row in table.items()
                    if row["without_output"]]
            if gaps:
                write_line(f"toolbench: replay: {suite}: selected cases without a saved output (scored "
                           f"missing_output): {', '.join(gaps)}")
        return {"replay_problems": problems, "replay_coverage": without}


def replay_row(named: str | None, model: str | None, mode: str | None) -> RowChoice:
    """The row replayed files are decoded as (the declared handler library's rule: named, else matched by
    ``--model``, its id, else its family, as the generation path matches, else none: the per-file rule); one usage
    error for a named row that is not one or that contradicts ``--toolbench-replay-mode``."""
    def family() -> str | None:
        return prompt_format.detect_family(model or "", prompt_format.read_model_config(model or ""))

    try:
        return rows.replay_row(None, named, model, family, mode)
    except RowError as error:
        raise UsageProblem(str(error)) from None


def _check_exists(replay: str) -> None:
    if not Path(replay).exists():
        raise UsageProblem(f"--toolbench-replay {replay}: no such file or folder")


class ReplayOutputError(MissingOutput):
    """A case has a saved output that cannot be turned into the text its scorer reads (a line cut short, not UTF-8,
    nested too deeply...): the case has no output, so it is a ``missing_output`` like a case without a line, with
    the file and line in the message."""


class ReplayBackend:
    name = "replay"
    # saved outputs are finished answers (agent transcripts included), read by case, never one step
    capabilities = BackendCapabilities(cacheable=False, reads_requests=False, final_outputs=True)

    def __init__(self, suites: SuiteLookup, path: str, mode: str | None = None, row: dict | None = None):
        self.suites = suites
        self.path = Path(path)
        self.mode = mode
        #: the BFCL row (``RowChoice.to_json()``) handed to readers that take ``row``; without a handler: no row
        self.row = row if row and row.get("handler") else None
        self._outputs: dict[str, ReplayOutputs] = {}
        self._problems: dict[str, list[Problem]] = {}

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "replay", "path": str(self.path), "replay_mode": self.mode or "per file",
                **({rows.header_key(): self.row} if self.row else {})}

    # -- reading -----------------------------------------------------------------------------------------------
    def load(self, suite_name: str) -> ReplayOutputs:
        """The suite's saved outputs, read on first use and cached (failures too)."""
        if suite_name not in self._outputs:
            outputs = self._outputs[suite_name] = self._read(suite_name)
            try:
                unknown = self._unknown_ids(suite_name, outputs)
            except Exception as error:  # noqa: BLE001 - the check is a report; the outputs stay usable
                unknown = [Problem("warning", f"ids not checked against the suite: {type(error).__name__}: {error}")]
            self._problems[suite_name] = list(outputs.problems) + unknown
        return self._outputs[suite_name]

    def outputs_for(self, suite_name: str) -> dict[str, Any]:
        """The usable outputs of a suite, ``{case id: text}`` (or a Generation where the reader kept tool calls)."""
        return self.load(suite_name)

    def _read(self, suite_name: str) -> ReplayOutputs:
        suite = self.suites.by_name(suite_name)
        reader = getattr(suite.benchmark, "replay_outputs", None) if suite is not None else None
        if reader is None:
            outputs = ReplayOutputs()
            why = "is not loaded" if suite is None else "has no replay reader (no result-file format is known for it)"
            outputs.error(f"suite {suite_name} {why}: none of its cases has a saved output", self.path)
            return outputs
        keywords: dict[str, Any] = {}
        if _takes(reader, "mode"):
            keywords["mode"] = self.mode
        if self.row is not None and _takes(reader, "row"):
            keywords["row"] = dict(self.row)
        try:
            found = reader(self.path, **keywords)
        except Exception as error:  # noqa: BLE001 - a reader that fails costs its suite's outputs, once
            outputs = ReplayOutputs()
            outputs.error(f"reading the saved outputs failed: {type(error).__name__}: {error}", self.path)
            return outputs
        if isinstance(found, ReplayOutputs):
            return found
        outputs = ReplayOutputs()
        try:
            for case_id, text in dict(found).items():
                outputs.add(str(case_id), text, self.path, None)
        except Exception as error:  # noqa: BLE001
            outputs.error(f"the reader returned no {{case id: output}} mapping: {type(error).__name__}: {error}",
                          self.path)
        return outputs

    def _unknown_ids(self, suite_name: str, outputs: ReplayOutputs) -> list[Problem]:
        """One warning per file whose ids match no case of the suite (count and a few examples)."""
        if not outputs and not outputs.unreadable:
            return []
        known = self._suite_ids(suite_name)
        if known is None:
            return []
        by_file: dict[str, list[str]] = defaultdict(list)
        for case_id in list(outputs) + list(outputs.unreadable):
            if case_of_key(case_id) not in known:
                by_file[outputs.origins.get(case_id, (str(self.path), None))[0]].append(case_id)
        problems = []
        for file, ids in sorted(by_file.items()):
            examples = ", ".join(repr(i) for i in ids[:UNKNOWN_EXAMPLES]) + (", ..." if len(ids) > UNKNOWN_EXAMPLES
                                                                                 else "")
            verb = "matches" if len(ids) == 1 else "match"
            problems.append(Problem("warning", f"{plural(len(ids), 'id')} {verb} no case of suite {suite_name} "
                                               f"(e.g. {examples}); not scored", file))
        return problems

    def _suite_ids(self, suite_name: str) -> set[str] | None:
        """Every case id of the suite, also those a ``--toolbench-limit`` left out of the run."""
        suite = self.suites.by_name(suite_name)
        if suite is None:
            return None
        return set(suite.all_case_ids) or {case.case_id for case in suite.cases}

    # -- the interface for the run header and summary --------------------------------------------------------
    def problems(self) -> list[str]:
        """Every error and warning found so far (suites read by ``generate``, ``coverage`` or ``load``), each
        ``suite: FILE[:LINE]: level: message``, suites in name order and each suite's in reading order."""
        return [f"{suite}: {problem}" for suite in sorted(self._problems) for problem in self._problems[suite]]

    def coverage(self, cases: Iterable[Case]) -> dict[str, dict[str, tuple[int, int]]]:
        """``{suite: {category: (selected cases, cases without a saved output)}}``, the latter scored
        ``MissingOutput``; reads each suite's files if not yet read. A case whose saved line cannot be read has no
        output either (``ReplayOutputError``, a ``MissingOutput``): it is counted here too, and its line is also one
        of the problems."""
        table: dict[str, dict[str, list[int]]] = {}
        for case in cases:
            outputs = self.load(case.suite)
            row = table.setdefault(case.suite, {}).setdefault(case.category, [0, 0])
            row[0] += 1
            if case.case_id not in outputs:
                row[1] += 1
        return {suite: {category: (row[0], row[1]) for category, row in categories.items()}
                for suite, categories in table.items()}

    # -- answering ---------------------------------------------------------------------------------------------
    def generate(self, tasks: Sequence[Task], **_: Any) -> list[Generation]:
        answers = []
        for task in tasks:
            outputs = self.load(task.case.suite)
            sample = getattr(task.request, "sample", 0) or 0
            case_id = sample_key(task.case.case_id, sample)
            if case_id in outputs:
                saved = outputs[case_id]
                # a reader keeps structured calls (a native-mode result file) as a Generation, else the text
                answers.append(saved if isinstance(saved, Generation) else Generation(text=saved, finish_reason="stop"))
            elif case_id in outputs.unreadable:
                raise ReplayOutputError(f"the saved output of {task.case.suite} case {case_id!r} cannot be read: "
                                        f"{outputs.unreadable[case_id]}")
            elif case_id in getattr(outputs, "left_out", {}):
                raise MissingOutput(f"no saved output for {task.case.suite} case {case_id!r}: "
                                    f"{outputs.left_out[case_id]}", in_denominators=False)
            else:
                which = f" (sample {sample})" if sample else ""
                raise MissingOutput(f"no saved output for {task.case.suite} case {task.case.case_id!r}{which} in "
                                    f"{self.path}")
        return answers

    def close(self) -> None:
        pass


def _takes(reader: Any, keyword: str) -> bool:
    """The reader accepts ``mode=`` (``--toolbench-replay-mode``) or ``row=`` (the BFCL row); readers of benchmarks
    without modes or rows do not."""
    import inspect

    try:
        return keyword in inspect.signature(reader).parameters
    except (TypeError, ValueError):
        return False
