"""Marks and selection at collection: the markers of an item (its suite, category and keywords) registered with
pytest once (:class:`Markers`), and the run's ``-k``/``-m`` expressions decided with pytest's own parser and
matchers (:class:`Selector`), so that collection builds no item the expressions cannot select."""

from __future__ import annotations

import itertools
import re
from typing import Any, Callable, Iterable

import pytest

from ..contract.definition import suite_marker


def marker_names(suite: str, category: str, keywords: tuple[str, ...] | list[str]) -> list[str]:
    """The markers of an item: its suite's name and ``suite_<name>`` (that suite's alone), its category, its
    keywords (those that are identifiers)."""
    return list(dict.fromkeys(n for n in (suite, suite_marker(suite), category, *keywords) if n.isidentifier()))


class Markers:
    """The run's markers: the lines registered with pytest (``--strict-markers``, ``pytest --markers``) and one mark
    per name, shared by every item that carries it. Held by the session, handed to each :class:`SuiteFile`."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.registered: set[str] = set()
        self.marks: dict[str, pytest.MarkDecorator] = {}

    def mark(self, name: str) -> pytest.MarkDecorator:
        decorator = self.marks.get(name)
        if decorator is None:
            self.register([name])
            decorator = self.marks[name] = getattr(pytest.mark, name)
        return decorator

    def register_declared(self, definitions: Iterable[Any]) -> None:
        """At configure time, every marker the run's suites declare (name, categories, ``markers:`` of each
        suite.yaml), with its description, so that ``pytest --markers`` lists them and ``--strict-markers`` accepts
        them before anything is collected. A name several suites use gets one line with each description."""
        described: dict[str, list[str]] = {}
        for definition in definitions:
            for name, text in definition.marker_descriptions().items():
                described.setdefault(name, []).append(text)
        for name, texts in described.items():
            if name not in self.registered:
                self.config.addinivalue_line("markers", f"{name}: {'; '.join(dict.fromkeys(texts))}")
                self.registered.add(name)

    def register(self, names: Iterable[str], describe: Callable[[str], str | None] = lambda name: None) -> None:
        """Register marker names (for --strict-markers) before any of them is used; those the suites declared are
        registered at configure time already (:meth:`register_declared`), a data-derived one of a declared family
        here with the family's description. pytest re-reads every registered marker line whenever it meets a mark
        name it has not seen, so a suite's names are registered together first: the first use then reads them all
        at once (one line per case, or one read per name, made collection quadratic)."""
        for name in names:
            if name not in self.registered:
                text = describe(name) or "pytest-toolbench keyword marker (not declared in its suite.yaml)"
                self.config.addinivalue_line("markers", f"{name}: {text}")
                self.registered.add(name)


class _JoinedNames:
    """pytest's ``KeywordMatcher`` over one string: a ``-k`` identifier matches when it is a case-insensitive
    substring of any of the item's names. The names are lowercased and joined with newlines, which no ``-k``
    identifier can contain, so one ``in`` test is ``any(sub in name for name in names)``; built once per marker
    combination instead of a set and a matcher per case."""

    __slots__ = ("joined",)

    def __init__(self, joined: str):
        self.joined = joined

    def __call__(self, subname: str, /, **kwargs: Any) -> bool:
        if kwargs:
            raise pytest.UsageError("Keyword expressions do not support call parameters.")
        return subname.lower() in self.joined


class Selector:
    """The run's ``-k`` and ``-m`` expressions, decided with pytest's own expression parser and matchers.
    ``selector(case_id, marks)``: whether pytest would keep an item with that name and those marks under the
    collector; ``may_select(definition, case_ids)``: whether any item of a suite may be kept, from its definition."""

    #: expressions with more unknown identifiers than this are not analysed (the suite is then resolved)
    MAX_UNKNOWN = 12

    def __init__(self, keyword_expr: Any, mark_expr: Any, keyword_idents: list[str], mark_idents: list[str],
                 chain: list[str], matcher_of: Callable[[list], Any]):
        self.keyword_expr, self.mark_expr = keyword_expr, mark_expr
        self.keyword_idents, self.mark_idents = keyword_idents, mark_idents
        self.chain = chain
        self.matcher_of = matcher_of
        self.resolved_of: dict[int, tuple[list, str, Any]] = {}  # per marks list: the list, names joined, matcher

    def __call__(self, case_id: str, marks: list) -> bool:
        known = self.resolved_of.get(id(marks))
        if known is None or known[0] is not marks:
            resolved = [mark.mark for mark in marks]
            matcher = self.matcher_of(resolved) if self.mark_expr is not None else None
            names = "\n".join(name.lower() for name in {*self.chain, *(mark.name for mark in resolved)})
            known = self.resolved_of[id(marks)] = (marks, names, matcher)
        _, names, matcher = known
        if self.keyword_expr is not None and not self.keyword_expr.evaluate(
                _JoinedNames(f"{names}\n{case_id.lower()}")):
            return False
        if matcher is not None and not self.mark_expr.evaluate(matcher):
            return False
        return True

    def names_suite(self, definition: Any) -> bool:
        """Whether an identifier of the expressions names something of the suite: a ``-k`` word in its folder
        chain, its name, a category or a declared marker; a ``-m`` name among them."""
        names = [name.lower() for name in (*self.chain, definition.name, *definition.marker_descriptions())]
        return (any(ident.lower() in name for ident in self.keyword_idents for name in names)
                or any(ident == definition.name or ident in definition.marker_descriptions()
                       for ident in self.mark_idents))

    def may_select(self, definition: Any, case_ids: "bool | Callable[[str], bool]") -> bool:
        """Three-valued: each identifier is certainly true for every item of the suite (its name, the chain of
        folders), possibly true (a category, a declared keyword, a family of data-derived keywords; with
        ``case_ids``, any ``-k`` substring a case id could hold; a callable says which words some case id holds) or
        certainly false; the suite may be selected when some assignment of the possible ones satisfies both
        expressions."""
        # the core's own mark: a known upstream defect runs as a strict xfail under the gold backend
        declared = [name for name in definition.marker_descriptions() if name.isidentifier()] + ["xfail"]
        families = any("pattern" in entry for entry in definition.raw.get("markers") or ())
        always = [name.lower() for name in (*self.chain, definition.name, suite_marker(definition.name))]
        sometimes = [name.lower() for name in declared]

        def keyword_values(ident: str) -> tuple[bool, ...]:
            sub = ident.lower()
            if any(sub in name for name in always):
                return (True,)
            in_case_ids = case_ids(ident) if callable(case_ids) else case_ids
            if in_case_ids or families or any(sub in name for name in sometimes):
                return (True, False)
            return (False,)

        def mark_values(ident: str) -> tuple[bool, ...]:
            if ident in (definition.name, suite_marker(definition.name)):
                return (True,)
            if ident in declared or any("pattern" in entry and re.fullmatch(entry["pattern"], ident)
                                        for entry in definition.raw.get("markers") or ()):
                return (True, False)
            return (False,)

        return (_satisfiable(self.keyword_expr, self.keyword_idents, keyword_values)
                and _satisfiable(self.mark_expr, self.mark_idents, mark_values))


def _satisfiable(expression: Any, idents: list[str], values_of: Callable[[str], tuple[bool, ...]]) -> bool:
    """Whether some assignment of the identifiers' possible values makes ``expression`` true (no expression: yes)."""
    if expression is None:
        return True
    domains = {ident: values_of(ident) for ident in idents}
    unknown = [ident for ident, values in domains.items() if len(values) > 1]
    if len(unknown) > Selector.MAX_UNKNOWN:
        return True
    for assignment in itertools.product((True, False), repeat=len(unknown)):
        chosen = dict(zip(unknown, assignment))

        def matcher(ident: str, /, **kwargs: Any) -> bool:
            if ident in chosen:
                return chosen[ident]
            values = domains.get(ident) or values_of(ident)
            return values[0] if not kwargs or len(values) == 1 else True

        if expression.evaluate(matcher):
            return True
    return False


def expression_idents(text: str) -> list[str]:
    from _pytest.mark.expression import Scanner, TokenType

    return list(dict.fromkeys(token.value for token in Scanner(text).lex(text) if token.type is TokenType.IDENT))


def run_selector(parent: pytest.Collector) -> Selector | None:
    """The run's :class:`Selector` under ``parent``. None when there is no expression, or when this pytest's
    internals differ from what is relied on (every item is then built and pytest deselects as usual)."""
    keyword = (parent.config.option.keyword or "").lstrip()
    markexpr = (parent.config.option.markexpr or "").lstrip()
    if not keyword and not markexpr:
        return None
    try:
        from _pytest.mark import MarkMatcher
        from _pytest.mark.expression import Expression
    except ImportError:
        return None
    try:
        keyword_expr = Expression.compile(keyword) if keyword else None
        mark_expr = Expression.compile(markexpr) if markexpr else None
        keyword_idents = expression_idents(keyword) if keyword else []
        mark_idents = expression_idents(markexpr) if markexpr else []
    except Exception:  # a malformed expression: let pytest report it in its own words
        return None
    # KeywordMatcher.from_item's names: every node of the chain but the session and the root directory.
    chain = [node.name for node in parent.listchain()
             if not isinstance(node, pytest.Session)
             and not (isinstance(node, pytest.Directory) and isinstance(node.parent, pytest.Session))]
    return Selector(keyword_expr, mark_expr, keyword_idents, mark_idents, chain, MarkMatcher.from_markers)
