"""The run's markers: every marker of the run's suites registered (described) before collection, and a ``-m``
expression that names a marker nobody declares refused (called by the session at configure time)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from .collection import Markers, unknown_mark_names


def register_markers(config: pytest.Config, markers: Markers, definitions: Any, warn: bool,
                     data_unverified: bool) -> None:
    """Every marker of the run's suites, described, before collection (``pytest --markers``,
    ``--strict-markers``, also on xdist workers, whose ``-m`` check may name a suite they rule out); then a
    ``-m`` expression naming a marker no suite, plugin or ini file declares is a usage error (once: not on
    workers), as ``--strict-markers`` makes an undeclared mark one: such a name can select nothing, so a typo
    would run nothing (``-m multiturn``) or everything (``-m "not multiturn"``) with only a warning to say so.
    Every marker of the pinned data is declared by name; only with ``--toolbench-data-unverified`` (data beyond
    the pinned files) does a name that a family pattern allows (a NesTools task domain) get a warning instead."""
    markers.register_declared(definitions)
    if not warn or not definitions:
        # no suite in this run (the plugin installed beside a project's own tests): their marks follow pytest's
        # own rules, an undeclared one selecting what carries it (with pytest's warning)
        return
    known = sorted({line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")})
    unknown = []
    for name in unknown_mark_names(config):
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        if data_unverified and \
                any(definition.keyword_description(name) for definition in definitions):
            # every name of the pinned data is declared; data beyond it (accepted unverified) may carry a name
            # only a family pattern allows (a task domain), registered once its suite is collected
            config.issue_config_time_warning(pytest.PytestConfigWarning(
                f"pytest-toolbench: -m {config.option.markexpr!r} names the marker {name!r}, which no suite "
                f"declares by name; it selects only cases whose data carry it{hint}"), stacklevel=2)
        else:
            unknown.append((name, hint))
    if not unknown:
        return
    name, hint = unknown[0]
    suites = sorted(definition.name for definition in definitions)
    raise pytest.UsageError(
        f"-m {config.option.markexpr!r} names the marker {name!r}, which no suite, plugin or ini file declares, "
        f"so it would select nothing by that name{hint} (the {len(known)} known markers, among them the suites' "
        f"{', '.join(suites) or 'none'}, are listed by `pytest --markers`; a mark of your own tests is declared "
        "in the ini file's `markers`)")
