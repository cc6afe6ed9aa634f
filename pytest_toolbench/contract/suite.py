"""The contract between the plugin core and a benchmark.

A benchmark is a folder under ``suites/``: its ``suite.yaml``, its scorer package (which implements
:class:`Benchmark`), small samples and optional known defects. The core never contains benchmark-specific code: it loads cases through
the benchmark, asks a backend for model output, and hands that output back to the benchmark's pure scorer.
Everything that crosses a process boundary (xdist reports, cache rows, JSON results) is built from these plain,
JSON-safe dataclasses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Mapping, Protocol, Sequence, runtime_checkable

#: The error category every suite uses for model output that cannot be decoded at all.
FORMAT_ERROR = "format_error"
#: The error category of a verdict that cannot be reached here: the scorer needs an optional dependency that is not
#: installed (T-Eval's sentence-embedding model). The item is reported as skipped with the explanation (naming what
#: to install), never as passed; its record is kept, it counts as not passed, and the metrics that need the missing
#: part are N/A.
NOT_SCORED = "not_scored"
#: The error category the core gives a selected case that reached no verdict (a crashed xdist worker, a setup error,
#: an interrupted run): a failure, and the figures over its category are incomplete.
NOT_RUN = "not_run"


@dataclass(frozen=True)
class SuiteContext:
    """What a scorer knows of its suite in this run, beyond each case's data: handed to ``load_cases(context)`` and
    bound by the catalog to every case it loads (``case.context``), as lm-eval binds a task's config to the task.

    ``data_dir`` is the folder the suite's data were resolved to (the ``--toolbench-data`` folder's suite folder, the
    download overlay or the shipped samples; ``data_kind`` says which: ``folder``, ``download`` or ``samples``);
    ``definition`` the suite.yaml document with ``options`` as ``{key: value}`` (each declared default, or the run's
    ``--toolbench-suite-option`` override, already checked against its schema). Run settings live here, so a case's
    payload carries the benchmark's data only. A test builds one directly:
    ``SuiteContext(SAMPLES, {"options": {"protocol": "upstream"}, "libraries": ["tl_failures"]})``.
    """

    data_dir: Path
    definition: Mapping[str, Any] = field(default_factory=dict)
    data_kind: str = "folder"

    def __post_init__(self) -> None:
        if not isinstance(self.definition, Mapping):
            raise TypeError(f"SuiteContext(data_dir, definition={{...}}): definition must be the suite.yaml mapping, "
                            f"got {type(self.definition).__name__}")
        object.__setattr__(self, "data_dir", Path(self.data_dir))

    @property
    def name(self) -> str:
        """The suite's ``name:`` ("" in a context a test built without one)."""
        return str(self.definition.get("name") or "")

    @property
    def options(self) -> Mapping[str, Any]:
        """The suite's options, ``{key: value}`` (suite.yaml ``options:`` with the run's overrides)."""
        return self.definition.get("options") or {}

    @property
    def libraries(self) -> frozenset[str]:
        """The scorer libraries the suite opts into (suite.yaml ``libraries:``, e.g. ``tl_failures``)."""
        return frozenset(self.definition.get("libraries") or ())

    def uses(self, library: str) -> bool:
        """Whether the suite opts into the scorer library ``library``."""
        return library in self.libraries

    @property
    def from_samples(self) -> bool:
        """Whether the data are the suite's shipped samples (no data folder was given)."""
        return self.data_kind == "samples"

    def bind(self, cases: Iterable["Case"]) -> list["Case"]:
        """The cases, each bound to this context (``case.context``) and, when the context names its suite, stamped
        with that name (``case.suite``). The catalog binds every case it loads; a loader may end with
        ``return context.bind(cases)`` so that the cases it hands a test directly read the same settings."""
        bound = []
        for case in cases:
            changes: dict[str, Any] = {} if case.context is self else {"context": self}
            if self.name and case.suite != self.name:
                changes["suite"] = self.name
            bound.append(dataclasses.replace(case, **changes) if changes else case)
        return bound


@dataclass(frozen=True)
class Case:
    """One benchmark item, exactly as the benchmark defines it.

    ``case_id`` is the benchmark's own id and becomes the pytest parameter id; ``payload`` holds everything the
    scorer needs (question, tool docs, ground truth) as loaded from the upstream files; ``keywords`` become pytest
    markers (besides the suite and category names) so ``-m``/``-k`` can select on them. ``suite`` is the ``name:``
    of the suite.yaml the case was loaded through: the catalog stamps it on every case ``load_cases`` returns (a
    loader leaves it out and need not know its suite's name; a value it gives is replaced). ``context`` is the
    suite's :class:`SuiteContext` in this run, bound by the catalog to every case it loads (a loader leaves it out):
    the scorer reads run settings there (``case.context.data_dir``, ``.options``, ``.uses(library)``), never from
    the payload, which holds the benchmark's data only. It is not part of a case's identity (equality, repr) and is
    never stored in the loaded-suite cache.
    """

    case_id: str
    category: str
    payload: Mapping[str, Any]
    keywords: tuple[str, ...] = ()
    suite: str = ""
    context: "SuiteContext | None" = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # The fields were (suite, case_id, category, payload, keywords) before the catalog set the suite: a call in
        # the old positional order would bind the category to ``payload``; say so instead of scoring garbage.
        if not isinstance(self.payload, Mapping):
            raise TypeError(f"Case(case_id, category, payload, keywords=(), suite=''): payload must be a mapping, "
                            f"got {type(self.payload).__name__} {self.payload!r:.60} (case_id={self.case_id!r})")


@dataclass(frozen=True)
class Request:
    """What a backend must answer for one case: chat messages, plus the tools for native tool calling."""

    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] | None = None
    max_tokens: int | None = None
    #: None when the model under test answers; "user" for a simulated user's turn ("judge": an LLM judge's request),
    #: which ``--toolbench-user-model`` routes to a separate endpoint (else the run's own model plays the role).
    simulates: str | None = None
    #: What a model answering natively (``--toolbench-mode native``, ``tools=``) is sent instead of ``messages``, for
    #: a benchmark whose native protocol differs from its prompting one (BFCL's FC handlers send no prompting system
    #: prompt); None: ``messages`` in both modes.
    native_messages: Sequence[Mapping[str, Any]] | None = None
    #: The suite's sampling temperature (suite.yaml ``generation.temperature``: its official harness's), used unless
    #: the run sets ``--toolbench-temperature``; None: greedy.
    temperature: float | None = None
    #: Tokens kept free of the context beside the prompt and the answer: the answer gets at most ``context - prompt -
    #: context_reserve`` tokens (BFCL's OSS handlers: ``min(4096, context - prompt - 2)``).
    context_reserve: int = 0
    #: Which of the case's ``--toolbench-repeat`` samples this request belongs to (0: the first, and the only one
    #: without the option); a backend that samples draws sample k with seed (run seed + k).
    sample: int = 0
    #: The benchmark's function docs as its official harness hands them to a renderer that writes its own tools block
    #: (BFCL's FC handlers: the raw docs with the language hint, ``json.dumps``-ed by the handler itself); such a
    #: renderer is given ``native_messages`` (else ``messages``), which then hold no prompting system prompt. None:
    #: no such docs (every other suite).
    functions: Sequence[Mapping[str, Any]] | None = None

    def messages_for(self, native: bool) -> Sequence[Mapping[str, Any]]:
        """The messages a backend answering in native mode (``native``) or in prompting mode sends."""
        return self.native_messages if native and self.native_messages is not None else self.messages


@dataclass(frozen=True)
class Generation:
    """A model's answer to one :class:`Request`; ``text`` is the raw output, special tokens included."""

    text: str
    finish_reason: str | None = None  # "stop", "length" (truncated), ...
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None  # native-mode calls, already parsed by the backend
    parse_error: str | None = None  # native mode: why the reply's tool calls could not be parsed (a format_error)
    #: the reply as the official harness records it, where its model handler post-processes the text (BFCL's
    #: QwenHandler keeps only what follows ``</think>``); None: ``text`` itself. Scorers that follow such a handler
    #: read it (:meth:`recorded`); the raw ``text`` stays what the model wrote, for the record and the history.
    answer: str | None = None
    #: the official renderer that wrote the prompt (``prompt_format.HandlerFormat.name``, e.g.
    #: ``bfcl-handler:PhiFCHandler``), for a scorer that records and decodes the reply as that renderer's handler does
    #: (some record a list of calls, which ``answer`` cannot hold); None: the chat template (or another backend). A
    #: replayed BFCL record read with a row names its handler as ``bfcl-recorded:<class>`` (the text is the recorded
    #: answer itself) or ``bfcl-recorded-json:<class>`` (its JSON), decoded without recording it again.
    renderer: str | None = None
    #: ``--toolbench-keep-prompts``: what was sent for this answer, one entry per request (a conversation's final
    #: output: every step's, in order): ``{"text", "token_ids"}`` when the engine took token ids (the in-process
    #: vLLM engine), ``{"text"}`` for a completions request, ``{"messages", "tools"}`` for a chat request; None: not
    #: kept (the option not given, or an answer cached by a run without it)
    prompts: list[Any] | None = None

    def recorded(self) -> str:
        """The text the official harness would have saved and decoded."""
        return self.answer if self.answer is not None else (self.text or "")

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Generation":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Verdict:
    """The scorer's judgement of one case. JSON-safe, so it can ride on a pytest report across xdist workers.

    ``error_type`` uses the benchmark's own taxonomy (``format_error`` for undecodable output) and is ``None`` when
    the case passed. ``counts`` holds per-case numbers that the benchmark aggregates over the run (e.g. micro
    precision/recall numerators); ``details`` anything else the report should show.
    """

    passed: bool
    error_type: str | None = None
    explanation: str = ""
    decoded: Any = None
    expected: Any = None
    counts: dict[str, float] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # categorical labels the core tallies, e.g. tl_category
    details: dict[str, Any] = field(default_factory=dict)
    #: optional, for reports: the answer compared part by part where ``expected`` is not what the output must equal
    #: (BFCL's lists of accepted values): ``[{"part", "given", "accepted", "ok", "note"}]``, ``ok`` as the scorer's
    #: own rule judges that part alone
    comparison: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Verdict":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class CaseRecord:
    """One scored case, the one shape it has from the core to every report: made once by the core from the scorer's
    :class:`Verdict` (and the case, output and suite facts), then handed unchanged to the suite's ``aggregate``, the
    summary, the writers, and (as JSON) to the xdist controller and a later run's baseline.

    A plain value read by attribute (``record.passed``). ``to_json``/``from_json`` are its transport form; a results
    file's cases are read back into it by ``report.results_file``. The first fields are those an aggregation reads
    (and a test may give positionally).
    """

    suite: str
    case_id: str
    category: str
    passed: bool
    error_type: str | None = None
    counts: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    output: str = ""
    keywords: tuple[str, ...] = ()
    explanation: str = ""
    order: int = 0
    decoded: Any = None
    expected: Any = None
    finish_reason: str | None = None
    known_defect: str | None = None  # the reason, when the case is a documented upstream defect
    nodeid: str | None = None
    #: the text the case's test failed (or was skipped) with, on every record that did not pass; None when passed
    message: str | None = None
    #: which of the case's ``--toolbench-repeat`` samples was scored (0..K-1); None, and absent from every form of the
    #: record, in a run without repeats
    sample: int | None = None
    #: the scorer's part-by-part comparison (``Verdict.comparison``); None, and absent from every form, without one
    comparison: Any = None
    #: ``--toolbench-keep-prompts``: what the model was sent (``Generation.prompts``); None, and absent from every
    #: form, when not kept
    prompts: Any = None

    def to_json(self) -> dict[str, Any]:
        data = self.fields()
        data["keywords"] = list(self.keywords)
        data["counts"], data["labels"] = dict(self.counts), dict(self.labels)
        return data

    def fields(self) -> dict[str, Any]:
        """The fields as they are, in the JSON order (no copies); ``sample`` only when there is one."""
        fields = {name: getattr(self, name) for name in RECORD_FIELDS}
        for name in OPTIONAL_RECORD_FIELDS:
            if getattr(self, name) is not None:
                fields[name] = getattr(self, name)
        return fields

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "CaseRecord":
        """From a record's JSON (a worker's report, a results file's case); unknown keys are ignored (newer files),
        missing ones take their defaults (a results file keeps only some fields)."""
        values = {name: data[name] for name in ALL_RECORD_FIELDS if name in data}
        values["keywords"] = tuple(values.get("keywords") or ())
        values["counts"] = dict(values.get("counts") or {})
        values["labels"] = dict(values.get("labels") or {})
        values["passed"] = bool(values.get("passed"))
        return cls(**values)

    __hash__ = None  # type: ignore[assignment]  # a record holds dicts: equal by value, not hashable


#: The record's fields in the order of its JSON form (the results file's key order, unchanged since it was written).
RECORD_FIELDS = ("suite", "case_id", "category", "passed", "error_type", "explanation", "keywords", "order",
                 "decoded", "expected", "counts", "labels", "output", "finish_reason", "known_defect", "nodeid",
                 "message")
#: Fields a record has only when set (then after the others): ``sample``, in a ``--toolbench-repeat`` run;
#: ``comparison``, when the scorer compared a failed answer part by part; ``prompts``, with
#: ``--toolbench-keep-prompts``.
OPTIONAL_RECORD_FIELDS = ("sample", "comparison", "prompts")
ALL_RECORD_FIELDS = RECORD_FIELDS + OPTIONAL_RECORD_FIELDS
_RECORD_FIELD_SET = frozenset(ALL_RECORD_FIELDS)
assert _RECORD_FIELD_SET == {f.name for f in dataclasses.fields(CaseRecord)}

#: The name the suites' ``aggregate(results: Sequence[CaseResult])`` signatures use: the same type.
CaseResult = CaseRecord


#: The values of ``Metric.better``: "none" for a figure where neither way is an improvement (the share of one
#: failure category among the failures): reports colour and gate no change of it.
METRIC_DIRECTIONS = ("higher", "lower", "none")


@dataclass(frozen=True)
class Metric:
    """One figure of a suite's summary: ``value`` in [0, 1] (or None when nothing ran or it cannot be computed), with
    its counts."""

    name: str
    value: float | None
    correct: float | None = None
    total: float | None = None
    group: str = ""  # e.g. "category", "aggregate", "P/R/F1"
    formula: str = ""  # how it is computed, shown in reports
    unit: str = "%"  # "%": a rate shown as a percentage; "": a plain number (e.g. a mean reward in [-2, 1])
    #: Which way is an improvement: "higher" (accuracy), "lower" (an attack success rate) or "none" (a share of the
    #: failures: no way is better). Gates and baseline
    #: comparisons read it: --toolbench-fail-under is a maximum and --toolbench-max-drop a maximum rise for "lower".
    better: str = "higher"
    #: Why the figure does not cover what it claims (a category that did not run in full, cases without a
    #: verdict), or "" when it is complete; reports show it, and a gate on an incomplete figure is missed.
    incomplete: str = ""
    #: Set by the core, not the suite: "over N of M cases (selection)" when the run's selection (``-k``, ``--lf``,
    #: node ids) left part of what the figure covers out; "" when the figure covers all of it.
    scope: str = ""
    #: For a mean over cases (a mean F1 or reward): the sample standard deviation of the per-case values, so reports
    #: give it a t interval; None for anything else. A figure with it never gets the binomial (Wilson) interval,
    #: even when its sum happens to be whole.
    sd: float | None = None
    #: Set by the core, not the suite, in a ``--toolbench-sample`` run: the figure as an estimate of the full
    #: benchmark's, ``{value, interval95, sampled, population, seed, method[, note][, coefficients]}``
    #: (``stats.estimate.Estimate.to_json``); None otherwise (and absent from the JSON).
    estimate: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.better not in METRIC_DIRECTIONS:
            raise ValueError(f"Metric {self.name!r}: better must be one of {METRIC_DIRECTIONS}, not {self.better!r}")


@runtime_checkable
class Benchmark(Protocol):
    """What a scorer module provides (as module-level functions or as an object with these methods).

    ``load_cases(context)`` reads the suite's cases from ``context.data_dir`` with the settings of ``context``
    (:class:`SuiteContext`); the catalog then binds the same context to every case (``case.context``), where the
    other functions read run settings. The form before the context, ``load_cases(data_dir, definition)`` (the data
    folder and the suite.yaml mapping), is still called that way."""

    def load_cases(self, context: SuiteContext) -> Iterable[Case]: ...

    def build_request(self, case: Case) -> Request: ...

    def gold_output(self, case: Case) -> str: ...

    def score(self, case: Case, generation: Generation) -> Verdict: ...

    def aggregate(self, results: Sequence[CaseResult]) -> list[Metric]: ...


#: An interactive benchmark (agent loops, multi-turn with tool execution) describes one case's conversation as a
#: generator: it yields the next :class:`Request`, receives the model's :class:`Generation` for it, and finally
#: returns a JSON-safe transcript. The core drives every live conversation in step-synchronous batched rounds and
#: scores ``Generation(text=json.dumps(transcript))`` with the benchmark's ``score``.
Conversation = Generator[Request, Generation, Any]


@dataclass(frozen=True)
class Task:
    """One request a backend must answer: the case it belongs to, the rendered request, and for interactive
    suites the step index within the conversation (0 for single-shot suites). ``in_conversation`` says the request
    is one step of an interactive case (the gold backend answers it with the step's reference reply)."""

    case: Case
    request: Request
    step: int = 0
    in_conversation: bool = False


#: The fingerprint entry describing a separate simulated-user model (``--toolbench-user-model``); a simulated
#: user's turns are cached under it, so adding that option leaves every other cached answer valid.
SIMULATED_USER = "simulated_user"


@dataclass(frozen=True)
class BackendCapabilities:
    """What the core may assume of a backend (one value, instead of attribute probing).

    ``cacheable``: its answers are worth keeping in the generation cache (a model: yes; gold and replay: no).
    ``reads_requests``: it needs the rendered prompt; gold and replay answer by case, so a single-shot prompt is
    never rendered for them (most of a replay run's time otherwise).
    ``final_outputs``: it hands out finished outputs (a replayed agent transcript), so an interactive case is not
    driven step by step.
    """

    cacheable: bool = True
    reads_requests: bool = True
    final_outputs: bool = False


#: What a model backend (vLLM, an endpoint) can do; ``gold`` and ``replay`` declare their own.
MODEL_BACKEND = BackendCapabilities()

#: ``on_chunk(rows)`` receives finished ``(index, Generation)`` pairs as they complete (committed to the cache at
#: once); ``on_progress(finished, total)`` is for progress lines.
ChunkCallback = Callable[[Sequence[tuple[int, Generation]]], None]
ProgressCallback = Callable[[int, int], None]


@runtime_checkable
class Backend(Protocol):
    """Where model answers come from (gold, replay, vLLM, an OpenAI-compatible endpoint)."""

    name: str
    capabilities: BackendCapabilities

    def fingerprint(self) -> dict[str, Any]:
        """JSON-safe identity of the model and settings; part of every cache key."""
        ...

    def generate(self, tasks: Sequence[Task], *, on_chunk: ChunkCallback | None = None,
                 on_progress: ProgressCallback | None = None) -> list[Generation]:
        """Answer every task, in order."""
        ...

    def close(self) -> None: ...


class InteractiveBenchmark(Benchmark, Protocol):
    """Optional extension: ``conversation(case)`` replaces the single ``build_request`` round, and
    ``gold_reply(case, step, request)`` gives the reference answer for one step (the gold backend uses it).

    Optionally ``unavailable(case) -> str | None``: why this case's conversation cannot run on this machine (a
    live API key or an optional dependency it needs is missing), naming what to supply. Such a case is not
    generated; its item is skipped with that reason (``NOT_SCORED``), unless a backend hands out finished outputs
    (a replay is always scored). ``unavailable(case, backend)`` (two parameters) is also given the run's backend
    (None on an xdist worker of an engine run), for a suite that only some backends can converse with yet."""

    def conversation(self, case: Case) -> Conversation: ...

    def gold_reply(self, case: Case, step: int, request: Request) -> str: ...
