"""Collection: a suite is its ``suite.yaml``; pytest collects that file into one item per benchmark case.

There is no test module per suite. ``pytest_collect_file`` turns every ``suite.yaml`` into a :class:`SuiteFile`
(like pytest's own examples of non-Python tests), which loads the suite through the catalog and yields a
:class:`CaseItem` per case, named by the benchmark's own case id (``suites/bfcl/suite.yaml::simple_python_12``).
Each item carries the suite, its category and the case's keywords as markers, so ``-k`` and ``-m`` select as usual.

Items that a ``-k``/``-m`` expression cannot select are never built: the expression is evaluated here
(``selection.Selector``), with pytest's own matchers over exactly the names and markers the item would have, so the
selection is pytest's and a run of one suite does not pay for building thousands of items of the others. (Such cases are simply not collected,
so pytest's "deselected" count does not include them.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pytest

from ..contract.definition import SUITE_MARKER_PREFIX, suite_marker
from ..contract.errors import ToolbenchError
from ..contract.suite import NOT_SCORED, Case, CaseRecord
from .errors import load_error
from .selection import Markers, Selector, expression_idents, marker_names, run_selector
from ..run.context import RunContext

DEFINITION_NAME = "suite.yaml"
#: On a case item, once it ran: its record, and (``--html`` only) the request it was asked with as plain data
RECORD_KEY = pytest.StashKey[CaseRecord]()
REQUEST_KEY = pytest.StashKey["dict[str, Any] | None"]()


def is_definition(file_path: Path) -> bool:
    return file_path.name == DEFINITION_NAME


class SuiteFile(pytest.File):
    """A ``suite.yaml``: collects to one :class:`CaseItem` per case of the suite. Made by the plugin's session,
    which hands it the run (``toolbench``), the paths the run collects from, and how its items are scored."""

    def __init__(self, *, toolbench: RunContext, run_paths: list[Path], markers: "Markers",
                 score: "Callable[[CaseItem], CaseRecord]", **kwargs: Any):
        super().__init__(**kwargs)
        self.toolbench = toolbench
        self.run_paths = run_paths
        self.markers = markers
        self.score = score

    def collect(self) -> Iterator[pytest.Item]:
        toolbench = self.toolbench
        gold = toolbench.kind.reference_answers
        selectable = run_selector(self)
        try:
            if selectable is not None and not self._may_select(toolbench.catalog, selectable):
                return  # the names and markers the suite declares rule it out: its data are not even resolved
            if selectable is not None and not self._any_selectable(toolbench.catalog, selectable, gold,
                                                                   toolbench.options.generation.repeat):
                return  # nothing here can be selected: the suite is not even loaded
            suite = toolbench.catalog.load(self.path)
        except ToolbenchError as error:
            raise self.CollectError(load_error(error)) from None
        self.markers.register({n for case in suite.cases for n in marker_names(case.suite, case.category,
                                                                                  case.keywords)},
                  suite.definition.keyword_description)
        marks_of: dict[tuple, list] = {}  # marks are immutable: cases of one combination share one list
        repeat = toolbench.options.generation.repeat
        for case in suite.cases:
            key = (case.category, tuple(case.keywords), suite.known_defects.get(case.case_id) if gold else None)
            marks = marks_of.get(key)
            if marks is None:
                marks = marks_of[key] = self._marks(case.suite, *key)
            for sample in range(repeat) if repeat > 1 else (None,):
                name = sample_name(case.case_id, sample)
                if selectable is not None and not selectable(name, marks):
                    continue
                # a later sample's node id is given as text, so that pytest reads "[rK]" as its parameters
                # (pytest >= 9 keeps node ids structured; --lf compares them with the ids it saved as text)
                item = CaseItem.from_parent(self, name=name, case=case, sample=sample, score=self.score,
                                            **({"nodeid": f"{self.nodeid}::{name}"} if sample else {}))
                for mark in marks:
                    item.add_marker(mark)
                yield item


    def _marks(self, suite: str, category: str, keywords: tuple[str, ...] | list[str], defect: str | None) -> list:
        reserved = [name for name in (category, *keywords) if name.startswith(SUITE_MARKER_PREFIX)]
        if reserved:  # a data-derived keyword (declared names are checked when suite.yaml loads)
            raise self.CollectError(f"pytest-toolbench: {self.path}: suite {suite}: keyword {reserved[0]!r} of its "
                                    f"cases starts with {SUITE_MARKER_PREFIX!r}, the prefix of the marker that "
                                    f"selects one suite (-m {suite_marker(suite)})")
        marks = [self.markers.mark(name) for name in marker_names(suite, category, keywords)]
        if defect is not None:
            marks.append(pytest.mark.xfail(reason=f"known upstream defect: {defect}", strict=True))
        return marks

    def _may_select(self, catalog: Any, selectable: "Selector") -> bool:
        """Whether ``-k``/``-m`` may keep an item of this suite, from its definition alone (its name, categories
        and declared markers), before its data are resolved: a suite ruled out costs no data check, download or
        network access. Case ids are known only from the data: when only a case id could still match, the suite goes
        on to its case index if its data are at hand, the expression names the suite (``-k "taskbench and 12"``) or
        the command line names its folder (``pytest suites/taskbench -k 12``);
        an expression that never names it (``-k bfcl``) does not start its download to look for such an id."""
        definition = catalog.definition(self.path)
        if not selectable.may_select(definition, case_ids=True):
            return False
        if selectable.may_select(definition, case_ids=False) or selectable.names_suite(definition):
            return True
        return self._named_by_run_paths() or not catalog.needs_network(self.path)

    def _named_by_run_paths(self) -> bool:
        """Whether the command line names this suite's folder or a file in it (``pytest suites/bfcl -k
        simple_python_0``): the user chose the suite, so its data are resolved to look for the id."""
        folder = self.path.parent.resolve()
        for path in self.run_paths:
            path = path.resolve()
            if path == folder or folder in path.parents:
                return True
        return False

    def _any_selectable(self, catalog: Any, selectable: Callable[[str, list], bool], gold: bool,
                        repeat: int = 1) -> bool:
        """From the loaded-suite cache's index of case ids, categories and keywords: whether any item of this suite
        (any of a case's ``repeat`` samples) passes ``-k``/``-m`` (True when the index is not available: the suite
        is loaded and filtered item by item)."""
        index = catalog.case_index(self.path)
        if index is None:
            return True
        if selectable.keyword_idents:
            # One substring test per -k word over all the case ids at once: a word no case id holds is false for
            # every case here, and the definition may then rule the suite out without an expression per case.
            ids = "\n".join(sample_name(case_id, sample).lower() for case_id, _, _ in index
                            for sample in range(repeat))  # "[rK]" of --toolbench-repeat's samples too
            if not selectable.may_select(catalog.definition(self.path), case_ids=lambda ident: ident.lower() in ids):
                return False
        name = catalog.definition_name(self.path)
        defects = catalog.known_defects(self.path) if gold else {}
        self.markers.register({n for _, category, keywords in index for n in marker_names(name, category, keywords)},
                  catalog.definition(self.path).keyword_description)
        marks_of: dict[tuple, list] = {}  # cases share a few (category, keywords, defect) combinations
        for case_id, category, keywords in index:
            key = (category, tuple(keywords), defects.get(case_id))
            marks = marks_of.get(key)
            if marks is None:
                marks = marks_of[key] = self._marks(name, category, keywords, key[2])
            if any(selectable(sample_name(case_id, sample), marks) for sample in range(repeat)):
                return True
        return False


def sample_name(case_id: str, sample: int | None) -> str:
    """An item's name: the case id, and for ``--toolbench-repeat``'s later samples the case id with ``[rK]``
    (sample 0 keeps the plain case id, so its node id, ``--lf`` entry and ``-k`` match are those of a run without
    repeats)."""
    return case_id if not sample else f"{case_id}[r{sample}]"


class CaseItem(pytest.Item):
    """One benchmark case (with ``--toolbench-repeat``: one sample of it). Running it scores the case's answer with
    the suite's own scorer; a failed verdict is a failed test whose message is the scorer's explanation (the full
    record goes to the JSON and HTML reports)."""

    def __init__(self, *, case: Case, sample: int | None = None, score: "Callable[[CaseItem], CaseRecord]",
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.case = case
        self.sample = sample  # None: a run without repeats
        self.score = score  # the session's scoring of one item

    def runtest(self) -> None:
        record = self.score(self)
        self.stash[RECORD_KEY] = record
        if record.error_type == NOT_SCORED:
            pytest.skip(record.message)
        if not record.passed:
            pytest.fail(record.message, pytrace=False)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, pytest.fail.Exception) and not excinfo.value.pytrace:
            return self._repr_failure_py(excinfo, style="value")  # the explanation, without a Python traceback
        return self._repr_failure_py(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # Line 0 (the suite.yaml's first line), not None: pytest's report of a skip mark needs a line number.
        sample = f" sample {self.sample}" if self.sample is not None else ""
        return self.path, 0, f"{self.case.suite} case {self.case.case_id}{sample}"


def run_case_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """pytest's run protocol for a case item, with one change: a setup or teardown report that is a plain pass is
    not logged. A case has no fixtures, so those two reports say nothing, yet under xdist each is serialised,
    sent, decoded and passed through every reporter on the controller: two thirds of the run's reports. A setup or
    teardown that fails or skips is logged as usual; so is every teardown when a reporter that closes its row on
    the teardown report is active (pytest-html, JUnit XML). Returns None (pytest's own protocol runs) for any other
    item, for ``--setup-show``/``--setup-only``/``--setup-plan``, or when pytest's internals differ from those
    relied on."""
    if not isinstance(item, CaseItem):
        return None
    option = item.config.option
    if getattr(option, "setupshow", False) or getattr(option, "setuponly", False) or \
            getattr(option, "setupplan", False):
        return None
    try:
        from _pytest.runner import call_and_report
    except ImportError:
        return None
    log_teardown = bool(getattr(option, "htmlpath", None) or getattr(option, "xmlpath", None))
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    setup = call_and_report(item, "setup", log=False)
    if setup.passed:
        call_and_report(item, "call", log=True)
    else:
        ihook.pytest_runtest_logreport(report=setup)
    if item.session.shouldfail or item.session.shouldstop:
        nextitem = None  # as pytest does: tear everything down when the session stops
    teardown = call_and_report(item, "teardown", log=False, nextitem=nextitem)
    if log_teardown or not teardown.passed:
        ihook.pytest_runtest_logreport(report=teardown)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def unknown_mark_names(config: pytest.Config) -> list[str]:
    """The marker names a ``-m`` expression uses that nothing registered (pytest's, the ini's, a conftest's, the
    suites' declared ones): such a name selects nothing, silently. (A data-derived name of a declared family, such
    as a task domain beyond the pinned data, is only registered once its suite is collected.)"""
    markexpr = (config.option.markexpr or "").strip()
    if not markexpr:
        return []
    try:
        from _pytest.mark.expression import Scanner, TokenType
    except ImportError:
        return []
    try:
        names = [token.value for token in Scanner(markexpr).lex(markexpr) if token.type is TokenType.IDENT]
    except Exception:  # a malformed expression: pytest reports it in its own words
        return []
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    return [name for name in dict.fromkeys(names) if name not in known]


def unmatched_keywords(config: pytest.Config, definitions: Iterable[Any], item_names: Iterable[str]) -> list[str]:
    """One line per ``-k`` identifier that matches nothing (pytest's rule: a case-insensitive substring) in any
    collected item's names (``item_names``: node ids, case ids, markers) nor in any suite's name, category or
    declared marker: a typo such as ``-k bfcll`` that would otherwise select nothing, silently. Each line offers the
    closest names, as ``-m`` gets (``register_markers`` in ``plugin/markers.py``)."""
    import difflib

    keyword = (config.option.keyword or "").strip()
    if not keyword:
        return []
    try:
        idents = expression_idents(keyword)
    except Exception:  # a malformed expression: pytest reports it in its own words
        return []
    known: set[str] = set()
    for definition in definitions:
        known.update(name for name in (definition.name, *definition.marker_descriptions()) if name)
    haystack = "\n".join(name.lower() for name in (*known, *item_names))
    lines = []
    for ident in idents:
        if ident.lower() in haystack:
            continue
        close = difflib.get_close_matches(ident.lower(), sorted({name.lower() for name in known}), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        lines.append(f"toolbench: -k {keyword!r}: {ident!r} is part of no suite name, category, marker or case id "
                     f"collected here, so it matches nothing{hint}")
    return lines
