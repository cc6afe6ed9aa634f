"""Where the checkpoint stands: the rank each fully run headline figure would have on a published leaderboard.

A suite whose benchmark publishes a leaderboard declares it in ``leaderboard.yaml`` beside its ``suite.yaml``
(the CSV's location under the data folder, its model column, and for each figure the columns it is compared with
and the categories it is over); the core names no suite. The CSV itself is the user's data, never shipped: the
declared glob under the data folder when it matches, or ``--toolbench-leaderboard=SUITE=PATH``.

A figure is ranked only when it ran in full: it has a value, no ``Metric.incomplete`` note, each of its categories
ran whole (no selection note: ``-k`` or node ids that leave cases out), the run had no ``--toolbench-limit`` and the
suite ran on its real data (not the shipped samples), and only when the run followed the leaderboard's protocol
(``protocol:`` in ``leaderboard.yaml``: max_tokens, temperature, prompt renderer, the share of answers cut at
max_tokens; report/protocol.py reads the run's settings in one place): otherwise the figure is "not comparable" with
the differences. Ranks are competition ranks over the leaderboard's models and this run (a tie shares the better
rank); this run's value is compared at the CSV's precision (two decimals of a percentage), since the leaderboard
rounds its own figures so.

Each rank comes with the range of ranks its figure's 95% interval spans (:func:`rank_range`): the rank of the
interval's upper end to the rank of its lower end. The interval is Wilson's for a count of cases; for a figure that
is a fixed linear combination of its cases' outcomes (BFCL's Non-live, Irrelevance, Multi-turn, Overall: weighted
means of category accuracies) a stratified cluster bootstrap over its categories' cases (report/rank_interval.py,
units as the profile declares them), the weights read off the suite's own aggregation.
"""

from __future__ import annotations

import csv
import glob
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import yaml

from .profile_mapping import load_mapping
from .protocol import protocol_differences
from .rank_interval import figure_interval

DECLARATION = "leaderboard.yaml"
#: entries shown on each side of this run
NEIGHBOURS = 2


class LeaderboardError(ValueError):
    """A leaderboard file or declaration that cannot be used (the message names it and why)."""


@dataclass(frozen=True)
class FigureSpec:
    name: str  # the Metric's name in the suite's summary
    label: str  # the leaderboard's name for it
    columns: tuple[str, ...]  # the figure is the mean of these columns
    categories: tuple[str, ...] | None = None  # None: every category of the suite


@dataclass(frozen=True)
class Declaration:
    suite: str
    file_glob: str
    source: str
    model_column: str
    figures: tuple[FigureSpec, ...]
    #: the settings the leaderboard's runs used (report/protocol.py compares the run's with them)
    protocol: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, suite: str, path: Path) -> "Declaration":
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            figures = tuple(
                FigureSpec(str(name), str(spec["label"]), tuple(str(c) for c in spec["columns"]),
                           tuple(str(c) for c in spec["categories"]) if spec.get("categories") else None)
                for name, spec in raw["figures"].items())
            protocol = raw.get("protocol") or {}
            if not isinstance(protocol, Mapping):
                raise TypeError("protocol: expected setting: value")
            return cls(suite, str(raw["file"]), str(raw.get("source") or ""), str(raw["model_column"]), figures,
                       dict(protocol))
        except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as error:
            raise LeaderboardError(f"{path}: not a leaderboard declaration ({type(error).__name__}: {error})") \
                from None


@dataclass(frozen=True)
class Leaderboard:
    """A suite's declaration with its CSV read: per figure, (model, value as a fraction) for every model that
    has a value in all the figure's columns."""

    declaration: Declaration
    path: str
    models: int
    scores: Mapping[str, tuple[tuple[str, float], ...]]


def _percent(text: str) -> float | None:
    """'88.58%' -> 0.8858; 'N/A', '' and anything else that is not a number -> None."""
    stripped = (text or "").strip().rstrip("%").strip()
    try:
        number = float(stripped)
    except ValueError:
        return None
    return number / 100 if math.isfinite(number) else None


def read(declaration: Declaration, path: Path) -> Leaderboard:
    """Read the CSV; a file that cannot be read or lacks a declared column is a :class:`LeaderboardError`."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise LeaderboardError(f"{path}: cannot read it ({error.strerror or error})") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise LeaderboardError(f"{path}: not a CSV file ({error})") from None
    header = set(rows[0]) if rows else set()
    needed = [declaration.model_column] + [c for f in declaration.figures for c in f.columns]
    missing = [column for column in dict.fromkeys(needed) if column not in header]
    if missing:
        raise LeaderboardError(f"{path}: no column {', '.join(repr(c) for c in missing)} (a {declaration.suite} "
                               f"leaderboard CSV has {declaration.model_column!r} and the figures' columns)")
    scores = {}
    for figure in declaration.figures:
        entries = []
        for row in rows:
            values = [_percent(row.get(column, "")) for column in figure.columns]
            if all(value is not None for value in values):
                entries.append((row[declaration.model_column], sum(values) / len(values)))
        scores[figure.name] = tuple(entries)
    return Leaderboard(declaration, str(path), len(rows), scores)


@dataclass(frozen=True)
class Source:
    """Where a suite's leaderboard comes from: read already, or why there is none (``problem``)."""

    suite: str
    leaderboard: Leaderboard | None = None
    problem: str = ""


def resolve(definitions: Iterable[Any], data_dir: str | Path | None, given: Mapping[str, Path]) -> dict[str, Source]:
    """The leaderboard of every suite in ``definitions`` (objects with ``name`` and ``folder``) that declares one.
    ``given`` (``--toolbench-leaderboard``) wins over the declared file under ``data_dir``; a given file that
    cannot be used raises :class:`LeaderboardError`, a default one becomes the source's ``problem`` (the run goes
    on, without a rank)."""
    declared: dict[str, Declaration] = {}
    for definition in definitions:
        path = Path(definition.folder) / DECLARATION
        if path.is_file() and definition.name not in declared:
            declared[definition.name] = Declaration.load(definition.name, path)
    unknown = [name for name in given if name not in declared]
    if unknown:
        which = ", ".join(sorted(declared)) or "none of the suites this run collects"
        raise LeaderboardError(f"no suite named {', '.join(unknown)} in this run declares a leaderboard "
                               f"(suites with one: {which})")
    sources = {}
    for name, declaration in declared.items():
        if name in given:
            sources[name] = Source(name, read(declaration, Path(given[name])))
            continue
        if not data_dir:
            continue  # no data folder: no default leaderboard, no rank
        matches = sorted(glob.glob(str(Path(data_dir) / declaration.file_glob)))
        if not matches:
            continue
        if len(matches) > 1:
            sources[name] = Source(name, problem=f"several files match {declaration.file_glob} under {data_dir} "
                                                 f"({', '.join(Path(m).name for m in matches)}): name one with "
                                                 f"--toolbench-leaderboard={name}=PATH")
            continue
        try:
            sources[name] = Source(name, read(declaration, Path(matches[0])))
        except LeaderboardError as error:
            sources[name] = Source(name, problem=str(error))
    return sources


# -- ranking ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    rank: int
    model: str
    value: float
    this_run: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "model": self.model, "value": self.value, "this_run": self.this_run}


@dataclass(frozen=True)
class FigureRank:
    figure: str
    label: str
    columns: tuple[str, ...]
    value: float
    rank: int
    of: int  # the leaderboard's models with a value, and this run
    #: up to NEIGHBOURS entries above this run, this run, up to NEIGHBOURS below, best first
    neighbours: tuple[Entry, ...]
    #: the figure's 95% interval, how it was made, and the ranks it spans (best, worst); None without an interval
    interval95: tuple[float, float] | None = None
    interval_method: str = ""
    rank_range: tuple[int, int] | None = None
    #: settings that could not be checked against the leaderboard's protocol (e.g. replayed outputs)
    unchecked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"figure": self.figure, "label": self.label, "columns": list(self.columns), "value": self.value,
                "rank": self.rank, "of": self.of, "neighbours": [entry.to_json() for entry in self.neighbours],
                "interval95": list(self.interval95) if self.interval95 else None,
                "interval_method": self.interval_method or None,
                "rank_range": list(self.rank_range) if self.rank_range else None,
                "protocol_unchecked": list(self.unchecked)}

    def range_text(self) -> str:
        """``rank 3 of 110 (95% interval: ranks 1-7)``'s part in brackets, or why there is none."""
        if self.rank_range is None:
            return f"no interval: {self.interval_method}" if self.interval_method else "no interval"
        best, worst = self.rank_range
        interval = f"{100 * self.interval95[0]:.2f}–{100 * self.interval95[1]:.2f}%"
        ranks = f"rank {best}" if best == worst else f"ranks {best}–{worst}"
        return f"95% interval {interval}: {ranks}"


@dataclass(frozen=True)
class SuiteRanks:
    source: str  # the CSV's path ("" when there is none)
    description: str
    models: int
    ranks: tuple[FigureRank, ...] = ()
    #: figure -> why it has no rank (incomplete, part of a category, smoke run, samples); or the file's problem
    not_ranked: Mapping[str, str] = field(default_factory=dict)
    problem: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "description": self.description, "models": self.models,
                "ranks": [rank.to_json() for rank in self.ranks], "not_ranked": dict(self.not_ranked),
                "problem": self.problem or None}


def rank_of(value: float, scores: Sequence[tuple[str, float]], neighbours: int = NEIGHBOURS
            ) -> tuple[int, tuple[Entry, ...]]:
    """This run's competition rank among ``scores`` and its neighbours. Values are compared as the leaderboard
    prints them (percentages with two decimals)."""
    shown = round(100 * value, 2)
    ordered = sorted(scores, key=lambda entry: -entry[1])
    better = [entry for entry in ordered if round(100 * entry[1], 2) > shown]
    rest = ordered[len(better):]
    rank = len(better) + 1

    def competition_rank(score: float) -> int:  # among the models and this run
        printed = round(100 * score, 2)
        return 1 + sum(1 for _, other in ordered if round(100 * other, 2) > printed) + (1 if shown > printed else 0)

    above = [Entry(competition_rank(v), model, v) for model, v in better[-neighbours:]] if neighbours else []
    below = [Entry(competition_rank(v), model, v) for model, v in rest[:neighbours]]
    return rank, tuple(above + [Entry(rank, "this run", value, this_run=True)] + below)


def rank_range(interval: tuple[float, float], scores: Sequence[tuple[str, float]]) -> tuple[int, int]:
    """The ranks a figure could have given its 95% interval ``(low, high)`` among ``scores`` (the leaderboard's
    (model, value) pairs): (the rank of ``high``, the rank of ``low``), competition ranks at the leaderboard's
    precision as :func:`rank_of`. Any estimate's interval can be passed (a sampled run's design-based one, say)."""
    low, high = interval
    return rank_of(high, scores, neighbours=0)[0], rank_of(low, scores, neighbours=0)[0]


def _why_not_ranked(spec: FigureSpec, suite: Any, limit: Any) -> str:
    """Why ``spec``'s figure of ``suite`` (a ``SuiteSummary``) did not run in full ("" when it did)."""
    metric = next((m for m in suite.metrics if m.name == spec.name and m.group != "category"), None)
    if metric is None:
        return "not in this run's summary"
    if metric.value is None:
        return "no value"
    if metric.incomplete:
        return metric.incomplete
    if suite.is_sample:
        return "over the shipped samples, not the benchmark's data"
    if limit:
        return f"--toolbench-limit {limit}: part of each category only"
    categories = {m.name: m for m in suite.metrics if m.group == "category"}
    wanted = spec.categories if spec.categories is not None else tuple(categories)
    gaps = [name for name in wanted if name not in categories or categories[name].total in (None, 0)
            or categories[name].incomplete or (categories[name].scope and not categories[name].estimate)]
    if gaps:
        return f"not every case of {', '.join(gaps)} ran"
    return ""


def rank_suite(source: Source, suite: Any, header: Mapping[str, Any], records: Sequence[Any] = (),
               unit_of: Callable[[str], str] | None = None) -> SuiteRanks:
    """The ranks of ``suite``'s (a ``SuiteSummary``) fully run figures on the source's leaderboard, each with the
    ranks its 95% interval spans (from ``records``, the suite's case records); a run whose protocol differs from
    the leaderboard's gets no rank, only "not comparable" and the differences."""
    board = source.leaderboard
    if board is None:
        return SuiteRanks("", "", 0, problem=source.problem)
    declaration = board.declaration
    differences, unchecked = protocol_differences(declaration.protocol, header, suite.name, suite)
    ranks, not_ranked = [], {}
    for spec in declaration.figures:
        why = _why_not_ranked(spec, suite, header.get("limit"))
        if not why and differences:
            why = "not comparable: " + "; ".join(differences)
        if why:
            not_ranked[spec.name] = why
            continue
        metric = next(m for m in suite.metrics if m.name == spec.name and m.group != "category")
        scores = board.scores.get(spec.name, ())
        rank, neighbours = rank_of(metric.value, scores)
        interval, method = figure_interval(metric, suite, spec.categories, records, unit_of)
        ranks.append(FigureRank(spec.name, spec.label, spec.columns, metric.value, rank, len(scores) + 1,
                                neighbours, interval, method,
                                rank_range(interval, scores) if interval is not None else None, tuple(unchecked)))
    return SuiteRanks(board.path, declaration.source, board.models, tuple(ranks), not_ranked)


def rank_run(sources: Mapping[str, Source], summary: Any, records: Iterable[Any] = ()) -> dict[str, SuiteRanks]:
    """Every suite of the run's summary that has a leaderboard source: its ranks (or why none). ``records`` (the
    run's case records) give each rank its interval; cases sharing a unit (``suites/profile.yaml``'s ``units``)
    are resampled together."""
    by_suite: dict[str, list[Any]] = {}
    for record in records:
        by_suite.setdefault(record.suite, []).append(record)
    mapping = None
    if any(suite.name in sources for suite in summary.suites):
        try:
            mapping = load_mapping()
        except (OSError, ValueError):
            mapping = None
    ranked = {}
    for suite in summary.suites:
        if suite.name not in sources:
            continue
        unit_of = (lambda case_id, name=suite.name: mapping.unit_of(name, case_id)) if mapping else None
        ranked[suite.name] = rank_suite(sources[suite.name], suite, summary.header, by_suite.get(suite.name, ()),
                                        unit_of)
    return ranked


# -- rendering helpers shared by the writers ----------------------------------------------------------------------
def entry_text(entry: Entry) -> str:
    return f"{entry.rank}. {'this run' if entry.this_run else entry.model} {100 * entry.value:.2f}%"


def heading(ranks: SuiteRanks) -> str:
    return (f"rank on the published leaderboard ({Path(ranks.source).name}, {ranks.models} models; "
            f"{ranks.description}); only figures that ran in full")
