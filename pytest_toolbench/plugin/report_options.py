"""Reporting options (``--toolbench-json``, ``--toolbench-md``, baselines, gates, ``--html`` placement), resolved once
on the controller into a :class:`~pytest_toolbench.report.settings.ReportSettings` value; every problem is a
``UsageError`` naming the option, before anything runs."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from .options import check_writable, report_path
from ..report import results_file
from ..report.results_file import ResultsFile
from ..report.leaderboard import LeaderboardError, resolve as resolve_sources
from ..report.settings import ReportSettings, Threshold


def parse_threshold_value(text: str) -> float:
    """'85%' and '85' are percentages, '0.85' a fraction: a number above 1 can only be a percentage."""
    stripped = text.strip()
    is_percent = stripped.endswith("%")
    number = float(stripped.rstrip("%").strip())
    if not math.isfinite(number):
        raise ValueError(f"{text!r} is not a finite number")
    if is_percent or number > 1:
        return number / 100
    return number


def parse_threshold(given: str) -> Threshold:
    target, sep, value_text = given.rpartition("=")
    suite, dot, metric = target.partition(".")
    if not sep or not dot or not suite.strip() or not metric.strip():
        raise pytest.UsageError(f"--toolbench-fail-under expects SUITE.METRIC=VALUE, got {given!r}")
    try:
        value = parse_threshold_value(value_text)
        raw = float(value_text.strip().rstrip("%"))
    except ValueError:
        raise pytest.UsageError(f"--toolbench-fail-under {given!r}: {value_text!r} is not a finite number "
                                "(write 85%, 85 or 0.85)") from None
    return Threshold(suite.strip(), metric.strip(), value, raw, given)


def load_baseline(path: Path) -> ResultsFile:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise pytest.UsageError(f"--toolbench-baseline {path}: cannot read it ({error.strerror})") from None
    except ValueError as error:
        raise pytest.UsageError(f"--toolbench-baseline {path}: not a JSON results file ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("suites"), dict):
        raise pytest.UsageError(f"--toolbench-baseline {path}: not a --toolbench-json results file "
                                "(no 'suites' object)")
    return results_file.read(document)


def resolve(config: pytest.Config) -> ReportSettings:
    """Raise ``UsageError`` naming the option at configure time, before anything runs."""
    get = config.getoption
    json_given, md_given, eee_given = get("toolbench_json"), get("toolbench_md"), get("toolbench_eee", None)
    baselines = []
    for given in get("toolbench_baseline") or []:  # oldest first; the last given is the one compared and gated on
        path = Path(given)
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        baselines.append((path, load_baseline(path)))
    baseline_path, baseline = baselines[-1] if baselines else (None, None)
    max_drop = get("toolbench_max_drop")
    if max_drop is not None:
        if not math.isfinite(max_drop) or max_drop < 0:
            raise pytest.UsageError("--toolbench-max-drop must be a non-negative number of percentage points")
        if baseline is None:
            raise pytest.UsageError("--toolbench-max-drop needs --toolbench-baseline PATH")
    significance = get("toolbench_significance")
    if significance is not None:
        if not math.isfinite(significance) or not 0 < significance < 1:
            raise pytest.UsageError(f"--toolbench-significance {significance:g}: the level must be between 0 and 1 "
                                    "(e.g. 0.05)")
        if max_drop is None:
            raise pytest.UsageError("--toolbench-significance needs --toolbench-max-drop POINTS (it qualifies that "
                                    "gate)")
    multiple = get("toolbench_multiple", "holm") or "holm"
    accept_untested = bool(get("toolbench_accept_untested", False))
    if accept_untested and significance is None:
        raise pytest.UsageError("--toolbench-accept-untested needs --toolbench-significance ALPHA (without it every "
                                "drop is gated on its size alone)")
    html = get("htmlpath", None)
    json_path = report_path(config, json_given) if json_given else None
    markdown_path = report_path(config, md_given) if md_given else None
    eee_path = report_path(config, eee_given) if eee_given else None
    for option, path in (("--toolbench-json", json_path), ("--toolbench-md", markdown_path)):
        if path is not None:
            check_writable(option, path if path.is_absolute() else config.invocation_params.dir / path)
    if eee_path is not None:
        check_folder("--toolbench-eee", eee_path if eee_path.is_absolute() else config.invocation_params.dir / eee_path)
    return ReportSettings(
        json_path=json_path,
        markdown_path=markdown_path,
        eee_path=eee_path,
        baseline_path=baseline_path, baseline=baseline,
        thresholds=tuple(parse_threshold(given) for given in get("toolbench_fail_under")),
        max_drop=max_drop, significance=significance, multiple=multiple, accept_untested=accept_untested,
        strict=bool(get("toolbench_strict")),
        html_path=Path(html) if html else None,
        baselines=tuple(baselines),
    )


def check_folder(option: str, path: Path) -> None:
    """Fail before the run, naming the option, when a folder the run writes into could not be made or written."""
    if path.exists() and not path.is_dir():
        raise pytest.UsageError(f"{option}={path}: is a file, not a folder")
    folder = path
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK):
        raise pytest.UsageError(f"{option}={path}: cannot be written (no write access to {folder})")


def resolve_leaderboards(config: pytest.Config, definitions: Any, data_dir: Any) -> dict[str, Any]:
    """``--toolbench-leaderboard=SUITE=PATH`` and the suites' declared defaults under the data folder, read once
    at configure time; a given file that cannot be used is one usage error naming it."""
    given = {}
    for text in get_list(config, "toolbench_leaderboard"):
        suite, sep, path = text.partition("=")
        if not sep or not suite.strip() or not path.strip():
            raise pytest.UsageError(f"--toolbench-leaderboard expects SUITE=PATH, got {text!r}")
        resolved = Path(path.strip())
        given[suite.strip()] = resolved if resolved.is_absolute() else config.invocation_params.dir / resolved
    try:
        return resolve_sources(definitions, data_dir, given)
    except LeaderboardError as error:
        raise pytest.UsageError(f"--toolbench-leaderboard: {error}") from None


def get_list(config: pytest.Config, name: str) -> list[str]:
    return list(config.getoption(name, None) or [])


def place_html_report(config: pytest.Config) -> None:
    """``--html report.html`` (a bare file name) goes to ``<rootdir>/reports/`` like the JSON and Markdown files.

    Runs before pytest-html's own ``pytest_configure`` opens the path; a path with a folder is left alone.
    """
    given = getattr(config.option, "htmlpath", None)
    if given and Path(given).parent == Path(".") and not Path(given).is_absolute():
        config.option.htmlpath = str(report_path(config, given))
    if given:
        path = Path(config.option.htmlpath)
        check_writable("--html", path if path.is_absolute() else config.invocation_params.dir / path)
