"""Every command and workflow in the documentation is checked against the code, so a document cannot drift from it.

The documents are README.md, docs/**/*.md, suites/*/README.md and examples/**/README.md. From each, every fenced
block and every inline code span that starts with a command is extracted (``$ `` lines of a console block, with
their ``\\`` continuations; a block's other lines are the output it shows), and every GitHub Actions workflow (a YAML
block with ``jobs:``). Then:

- every pytest command is parsed by pytest's real option parser with the plugin and its companions loaded (one
  subprocess for all of them): an unknown option, an option that moves the rootdir, a bad ``--toolbench-suite-option``
  (checked against the suite's own option schema) or a gate value the plugin cannot read fails here. A command
  written with placeholders (``<name>``, ``N``, ``PATH``) is checked for its option names only;
- every metric a gate names (``--toolbench-fail-under SUITE.METRIC=VALUE``) and every ``SUITE.METRIC`` a shown gate
  line names must be a metric of that suite in a real gold run: one shared run of the named shipped suites on their
  shipped samples (``--toolbench-no-download``: a few seconds, no data needed), and the example suite's own run. A
  figure that only the full data produce (ACEBench's ``combined/`` en+zh means) cannot be checked so: the documents'
  examples use figures that every run of the suite has;
- every script, file and folder a command names exists; ``pip`` extras exist in pyproject.toml; a ``python`` script's
  options appear in its ``--help``;
- the workflow parses as YAML, its steps are well formed, its shell variables are defined in its own script, and
  its pytest commands pass the checks above;
- the example suite's worked examples are executed as written (they need neither data nor a model): they must run,
  exit as they say, and the figures and gates they show must name real metrics.

- the documented runs on the upstream data (``DOC_RUNS``: worked examples on NesTools, RoTBench and BFCL) are
  executed verbatim in a fresh copy of the checkout with ``../shared`` beside it, the layout a reader has: each
  must exit as it shows and print the figure rows, ranks and gate figures it shows;
- every other command of a fenced block (and of README's set-up table) falls under one rule of ``NOT_EXECUTED``,
  which says why it cannot run here (a GPU, a real model, a served model, the network, a Ray cluster, the Actions
  runner, CI's own job); a new command that is neither executed nor declared fails a test.

A program the checks do not know (``apt-get``, ``ray``, ``vllm``) must be listed in ``EXTERNAL`` so that a new kind
of command is a decision, not an oversight.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

#: Programs the documents may name that nothing here can run or check beyond their existence in the text.
EXTERNAL = {"apt-get", "chromium", "ray", "vllm", "hf", "huggingface-cli", "git", "sha256sum", "cat", "curl",
            "mkdir", "cp", "export", "ls", "sed", "head", "tail", "nvidia-smi", "docker", "kill"}
#: Upper-case words that stand for a value the reader fills in (``--toolbench-limit N``).
PLACEHOLDER_WORDS = re.compile(r"^(N|K|PATH|DIR|URL|ADDR|NAME|ID|ID_OR_PATH|POINTS|ALPHA|VALUE|S|SUITE\.\S*)$")
COMMAND_START = re.compile(r"^(\$ )?((?:[A-Z_]+=\S+ )*)(\.venv/bin/python|python3?|pytest|bash|pip|apt-get|chromium|"
                           r"ray|vllm|hf|huggingface-cli|export|cd|git|cp|mkdir|sha256sum|cat)\b")


def doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md")), *sorted(ROOT.glob("suites/*/README.md")),
             *sorted(ROOT.glob("examples/**/README.md"))]
    return [path for path in files if path.is_file()]


@dataclass
class Command:
    """One command as a reader would type it: where it is written, the folder it runs in and its words."""

    doc: str
    line: int
    words: list[str]
    cwd: str = "."          # relative to the repository root
    env: dict[str, str] = field(default_factory=dict)
    shown: list[str] = field(default_factory=list)  # the output lines the document shows after it
    block: int = -1         # the console block it belongs to (its commands run in order)
    inline: bool = False    # an inline code span: prose may quote part of a command (`pytest --model`)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}: {' '.join(self.words)}"

    @property
    def program(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def is_template(self) -> bool:
        """Written with placeholders, or quoted inline: checked for its option names only."""
        return self.inline or any("<" in w or "…" in w or "..." in w or "path/to/" in w or PLACEHOLDER_WORDS.match(w.partition("=")[2] or w)
                   for w in self.words[1:])

    def pytest_args(self) -> list[str] | None:
        """The arguments after ``pytest`` / ``python -m pytest``; None for another program."""
        words = self.words
        if words[:1] == ["pytest"]:
            return words[1:]
        if len(words) >= 3 and words[0].endswith(("python", "python3")) and words[1:3] == ["-m", "pytest"]:
            return words[3:]
        return None


@dataclass
class Workflow:
    doc: str
    line: int
    text: str


def _split_commands(text: str) -> list[str]:
    """A shell line into its commands (``a && b``, ``a; b``), quotes kept."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    parts, current = [], []
    for token in lexer:
        if token in (";", "&&", "||", "|", "&"):
            if current:
                parts.append(current)
            current = []
        else:
            current.append(token)
    if current:
        parts.append(current)
    return [shlex.join(part) for part in parts]


def _words(text: str) -> tuple[dict[str, str], list[str]]:
    """Environment assignments in front of a command, and its words."""
    words = shlex.split(text, comments=True)
    env = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line of the opening fence, language, body) of every fenced block."""
    blocks, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        opening = re.match(r"^(\s*)```(\w*)\s*$", lines[index])
        if opening:
            indent, body, start = len(opening.group(1)), [], index + 1
            index += 1
            while index < len(lines) and not re.match(r"^\s*```\s*$", lines[index]):
                line = lines[index]
                body.append(line[indent:] if not line[:indent].strip() else line.lstrip())
                index += 1
            blocks.append((start, opening.group(2), "\n".join(body)))
        index += 1
    return blocks


def _joined(lines: list[str], start: int) -> tuple[str, int]:
    """The logical line at ``start`` with its backslash continuations, and the index after it."""
    text, index = lines[start], start + 1
    while text.rstrip().endswith("\\") and index < len(lines):
        text = text.rstrip()[:-1] + " " + lines[index].strip()
        index += 1
    return text, index


def _inline_spans(text: str) -> list[tuple[int, str]]:
    """Inline code spans outside fenced blocks, with their line."""
    spans, in_fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\s*```", line):
            in_fence = not in_fence
            continue
        if not in_fence:
            spans.extend((number, span) for span in re.findall(r"`([^`]+)`", line))
    return spans


def extract(path: Path) -> tuple[list[Command], list[Workflow], list[tuple[int, str]]]:
    """Commands, workflows and the other YAML blocks of one document."""
    doc = str(path.relative_to(ROOT))
    text = path.read_text(encoding="utf-8")
    commands: list[Command] = []
    workflows: list[Workflow] = []
    other_yaml: list[tuple[int, str]] = []
    for block_number, (start, language, body) in enumerate(fenced_blocks(text)):
        if language == "yaml":
            (workflows.append(Workflow(doc, start, body)) if re.search(r"^jobs:", body, re.M)
             else other_yaml.append((start, body)))
            continue
        if language not in ("", "bash", "sh", "console", "shell"):
            continue
        lines = body.splitlines()
        console = any(line.startswith("$ ") for line in lines)
        cwd, env, index, copies = ".", {}, 0, {}
        while index < len(lines):
            line = lines[index]
            if console and not line.startswith("$ "):
                if commands and commands[-1].block == block_number and line.strip() not in ("", "..."):
                    commands[-1].shown.append(line)
                index += 1
                continue
            logical, after = _joined(lines, index)
            logical = logical[2:] if console else logical
            if not console and not (COMMAND_START.match(logical) or logical.startswith("--toolbench-")):
                index = after
                continue
            if logical.startswith("--"):  # an option example, as it would be added to a pytest command
                logical = "pytest " + logical
            for part in _split_commands(logical):
                assigned, words = _words(part)
                if not words:
                    continue
                if words[0] == "cp" and words[1:2] == ["-r"] and len(words) == 4:
                    copies[words[3]] = words[2]  # a copy of a folder of the repository, to work in
                    continue
                if words[0] == "cd":
                    cwd = copies.get(words[1]) or os.path.normpath(os.path.join(cwd, words[1]))
                    continue
                if words[0] == "export":
                    env.update(dict(word.partition("=")[::2] for word in words[1:]))
                    continue
                commands.append(Command(doc, start + index + 1, words, cwd, {**env, **assigned},
                                        block=block_number))
            index = after
    for number, span in _inline_spans(text):
        if COMMAND_START.match(span) and re.match(r"^(\S+=\S+ )*\S+ \S", span) and not span.startswith("$"):
            for part in _split_commands(span):
                assigned, words = _words(part)
                if words and words[0] not in ("cd", "export"):
                    commands.append(Command(doc, number, words, ".", assigned, inline=True))
    return commands, workflows, other_yaml


def all_extracted() -> tuple[list[Command], list[Workflow], list[tuple[str, int, str]]]:
    commands, workflows, other = [], [], []
    for path in doc_files():
        found, flows, yaml_blocks = extract(path)
        commands += found
        workflows += flows
        other += [(str(path.relative_to(ROOT)), line, body) for line, body in yaml_blocks]
    for flow in workflows:
        commands += workflow_commands(flow)
    return commands, workflows, other


def workflow_commands(flow: Workflow) -> list[Command]:
    """The commands of every ``run:`` step, with the shell variables the script assigns expanded."""
    document = yaml.safe_load(flow.text)
    found = []
    for job in document["jobs"].values():
        for step in job["steps"]:
            script = step.get("run")
            if not script:
                continue
            variables: dict[str, str] = {}
            lines = [line for line in script.splitlines()]
            index = 0
            while index < len(lines):
                logical, index = _joined(lines, index)
                logical = logical.strip()
                if not logical or logical.startswith("#"):
                    continue
                for name, value in re.findall(r'\b([A-Z_][A-Z0-9_]*)="([^"]*)"', logical):
                    variables[name] = value  # the script's own assignments; the last one is the fullest
                    logical = logical.replace(f'{name}="{value}"', "")
                if logical.startswith("["):  # a test: [ -f x ] && VAR=...; its assignment was read above
                    continue
                for variable in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", logical):
                    if variable in variables:
                        logical = re.sub(rf"\$\{{?{variable}\}}?", variables[variable], logical)
                for part in _split_commands(logical):
                    assigned, words = _words(part)
                    if words:
                        found.append(Command(flow.doc, flow.line, words, ".", assigned))
    return found


# -- the real parser, in one subprocess --------------------------------------------------------------------------
PARSE_SCRIPT = r"""
import contextlib, io, json, os, sys
from pathlib import Path
import pytest
from _pytest.config import _prepareconfig
from pytest_toolbench.contract.definition import OptionError, load_definition, with_options
from pytest_toolbench.plugin.options import _parse_suite_options
from pytest_toolbench.plugin.report_options import parse_threshold

root = Path(sys.argv[1])
out = []
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    config = _prepareconfig(["-p", "no:cacheprovider"])
known = sorted(getattr(config._parser, "optparser", None)._option_string_actions)
config._ensure_unconfigure()
for job in json.loads(sys.stdin.read()):
    os.chdir(root / job["cwd"])
    problem, config, paths = None, None, []
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            config = _prepareconfig(job["args"] if not job["template"] else ["-p", "no:cacheprovider"])
        paths = [str(arg) for arg in config.args]
        if not job["template"]:
            for given in config.getoption("toolbench_fail_under") or []:
                parse_threshold(given)
            for suite, overrides in _parse_suite_options(config.getoption("toolbench_suite_options")).items():
                definition = root / "suites" / suite / "suite.yaml"
                if not definition.is_file():
                    raise pytest.UsageError(f"--toolbench-suite-option: no shipped suite {suite!r}")
                with_options(load_definition(definition), overrides)
    except OptionError as error:
        problem = error.usage_line()
    except (pytest.UsageError, SystemExit, Exception) as error:
        problem = f"{type(error).__name__}: {error}"
    finally:
        if config is not None:
            config._ensure_unconfigure()
    out.append({"problem": problem, "paths": paths})
Path(sys.argv[2]).write_text(json.dumps({"problems": out, "options": known}))  # pytest captures fd 1
"""


def parse_with_pytest(jobs: list[dict], out: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", PARSE_SCRIPT, str(ROOT), str(out)], input=json.dumps(jobs),
                            capture_output=True, text=True, timeout=300, cwd=ROOT,
                            env={**os.environ, "PYTEST_ADDOPTS": "", "PYTEST_XDIST_AUTO_NUM_WORKERS": "1"})
    assert result.returncode == 0 and out.is_file(), result.stderr[-3000:]
    return json.loads(out.read_text())


# -- the gold runs the metric names come from --------------------------------------------------------------------
GATE_LINE = re.compile(r"toolbench gate (?:missed|passed): (?:.*?: )?((?:[a-z_]+\.[^;(]+?) (?:fell|rose|=|is|:).*)")
METRIC_REF = re.compile(r"\b([a-z_][a-z0-9_]*)\.(.+?) (?:fell|rose)\b")


def metric_references(commands: list[Command]) -> list[tuple[str, str, str]]:
    """(suite, metric, where) of every gate value and of every SUITE.METRIC a shown gate line names."""
    refs = []
    for command in commands:
        args = command.pytest_args() or []
        for index, word in enumerate(args):
            value = None
            if word == "--toolbench-fail-under" and index + 1 < len(args):
                value = args[index + 1]
            elif word.startswith("--toolbench-fail-under="):
                value = word.partition("=")[2]
            if value and "<" not in value and not PLACEHOLDER_WORDS.match(value):
                name = value.rpartition("=")[0]
                suite, _, metric = name.partition(".")
                refs.append((suite, metric, command.where))
        for line in command.shown:
            if "toolbench gate" in line:
                refs += [(suite, metric, f"{command.doc}: {line.strip()[:80]}")
                         for suite, metric in METRIC_REF.findall(line)]
    return refs


def prose_gate_lines() -> list[tuple[str, str, str]]:
    """Gate lines quoted in the prose (``toolbench gate missed: bfcl.x fell ...``)."""
    refs = []
    for path in doc_files():
        for number, span in _inline_spans(path.read_text(encoding="utf-8")):
            if span.startswith("toolbench gate"):
                refs += [(suite, metric, f"{path.relative_to(ROOT)}:{number}: {span[:80]}")
                         for suite, metric in METRIC_REF.findall(span)]
    return refs


@pytest.fixture(scope="module")
def extracted():
    return all_extracted()


@pytest.fixture(scope="module")
def gold_metrics(extracted, tmp_path_factory):
    """Metric names per suite, from one gold run of every shipped suite the documents name a metric of, on their
    shipped samples."""
    commands = extracted[0]
    suites = sorted({suite for suite, _, _ in metric_references(commands) + prose_gate_lines()
                     if (ROOT / "suites" / suite / "suite.yaml").is_file()})
    out = tmp_path_factory.mktemp("gold") / "gold.json"
    env = {key: value for key, value in os.environ.items() if key not in ("TOOLBENCH_DATA", "PYTEST_ADDOPTS")}
    result = subprocess.run([sys.executable, "-m", "pytest", *(f"suites/{s}" for s in suites), "-q",
                             "-p", "no:cacheprovider", "-p", "no:randomly", "--toolbench-no-download",
                             f"--toolbench-cache={out.parent / 'cache'}", f"--toolbench-json={out}"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    document = json.loads(out.read_text())
    return {name: {m["name"] for m in suite["metrics"]} for name, suite in document["suites"].items()}


# -- tests -------------------------------------------------------------------------------------------------------
def test_the_extraction_finds_the_documented_commands(extracted):
    commands, workflows, _ = extracted
    assert any(flow.doc == "docs/reports.md" for flow in workflows), "the GitHub Actions workflow of docs/reports.md was not found"
    texts = {" ".join(c.words) for c in commands}
    assert any(t.startswith("pytest suites -k bfcl -n 2") for t in texts)  # the workflow's pytest step
    assert ".venv/bin/python -m pytest tests -n 2" in texts  # the test command of the set-up table
    assert any(c.env.get("TOOLBENCH_DATA") == "../shared/data" and c.pytest_args() == ["suites", "-n", "2"]
               for c in commands)  # the main job, its environment kept
    # the extractor itself: continuations, console output, cd, option fragments
    sample = "```\n$ cd examples/x\n$ pytest a \\\n    --b=1\nout line\n```\n`pytest --markers` and\n" \
             "```\n--toolbench-fail-under \"s.m=1\"\n```\n"
    probe = ROOT / "tests" / ".docs-probe.md"
    try:
        probe.write_text(sample)
        found, _, _ = extract(probe)
    finally:
        probe.unlink()
    assert [(c.words, c.cwd, c.shown) for c in found] == [
        (["pytest", "a", "--b=1"], "examples/x", ["out line"]),
        (["pytest", "--toolbench-fail-under", "s.m=1"], ".", []),
        (["pytest", "--markers"], ".", [])]


def test_every_pytest_command_is_accepted_by_the_real_option_parser(extracted, tmp_path):
    commands = [c for c in extracted[0] if c.pytest_args() is not None]
    jobs = [{"args": c.pytest_args(), "cwd": c.cwd, "template": c.is_template} for c in commands]
    parsed = parse_with_pytest(jobs, tmp_path / "parsed.json")
    known = set(parsed["options"])
    problems = []
    for command, found in zip(commands, parsed["problems"]):
        if found["problem"]:
            problems.append(f"{command.where}\n    {found['problem']}")
        for given in found["paths"]:  # the test paths pytest read: they must exist (../shared: when it is here)
            target = given.split("::")[0]
            module = "/" not in target and "." in target and not target.endswith(".py")  # --pyargs
            if not command.is_template and not module and not (ROOT / command.cwd / target).exists() and \
                    not (target.startswith("../shared") and not SHARED.is_dir()):
                problems.append(f"{command.where}\n    no such path {given}")
    for command in commands:
        for word in command.pytest_args():
            name = word.partition("=")[0]
            if name.startswith("--") and name not in known:
                problems.append(f"{command.where}\n    unknown option {name}")
    assert not problems, "\n".join(problems)


def test_every_gate_and_shown_gate_line_names_a_metric_of_a_real_run(extracted, gold_metrics):
    refs = metric_references(extracted[0]) + prose_gate_lines()
    assert any(where.startswith("README.md") for _, _, where in refs)
    problems = []
    for suite, metric, where in refs:
        if suite == "echo":  # the example suite's names come from its executed run (below)
            continue
        if suite not in gold_metrics:
            problems.append(f"{where}\n    no suite named {suite!r}")
        elif metric not in gold_metrics[suite]:
            close = sorted(m for m in gold_metrics[suite] if metric.split()[0] in m)[:6]
            problems.append(f"{where}\n    {suite} has no metric {metric!r}"
                            + (f" (did you mean {', '.join(close)})" if close else ""))
    assert not problems, "\n".join(problems)


def test_every_named_script_file_and_extra_exists(extracted):
    pyproject = (ROOT / "pyproject.toml").read_text()
    extras = set(re.findall(r"^([a-z0-9-]+)\s*=\s*\[", pyproject.split("[project.optional-dependencies]")[-1]
                            .split("\n[")[0], re.M))
    problems = []
    helps: dict[str, str] = {}
    for command in extracted[0]:
        words, cwd = command.words, ROOT / command.cwd
        program = command.program
        if command.pytest_args() is not None:
            continue  # checked by the option parser's test
        if program in ("bash",):
            if not (cwd / words[1]).is_file() and not (words[1].startswith("../shared") and not SHARED.is_dir()):
                problems.append(f"{command.where}\n    no such script {words[1]}")
        elif program.endswith(("python", "python3")):
            script = words[1]
            if script == "-m":
                continue
            if not (cwd / script).is_file():
                problems.append(f"{command.where}\n    no such script {script}")
                continue
            if script not in helps:
                helps[script] = subprocess.run([sys.executable, script, "--help"], cwd=cwd, capture_output=True,
                                               text=True, timeout=120).stdout
            for word in words[2:]:
                name = word.partition("=")[0]
                if name.startswith("--") and name not in helps[script]:
                    problems.append(f"{command.where}\n    {script} has no option {name}")
        elif program == "pip":
            for word in words[2:]:
                for extra_list in re.findall(r"\[([^\]]+)\]", word):
                    problems += [f"{command.where}\n    no extra {e!r} in pyproject.toml"
                                 for e in extra_list.split(",") if e.strip() not in extras]
                if word.startswith("scripts/") and not (ROOT / word).is_file():
                    problems.append(f"{command.where}\n    no such file {word}")
            for index, word in enumerate(words):
                if word in ("-r", "--requirement") and not (cwd / words[index + 1]).is_file():
                    problems.append(f"{command.where}\n    no such file {words[index + 1]}")
        elif program not in EXTERNAL:
            problems.append(f"{command.where}\n    unknown program {program!r}: check it here or list it in EXTERNAL")
    assert not problems, "\n".join(problems)


def test_the_github_actions_workflow_is_well_formed(extracted):
    _, workflows, other_yaml = extracted
    for flow in workflows:
        document = yaml.safe_load(flow.text)
        triggers = document.get("on", document.get(True))  # YAML 1.1 reads a bare `on` as true
        assert triggers, f"{flow.doc}:{flow.line}: no trigger"
        for name, job in document["jobs"].items():
            assert job.get("runs-on"), f"{flow.doc}:{flow.line}: job {name} has no runs-on"
            for step in job["steps"]:
                assert ("uses" in step) != ("run" in step), f"{flow.doc}:{flow.line}: step {step} needs uses or run"
                if "run" in step:
                    undefined = set(re.findall(r"\$([A-Z_][A-Z0-9_]*)", step["run"])) - \
                        set(re.findall(r"\b([A-Z_][A-Z0-9_]*)=", step["run"])) - {"GITHUB_STEP_SUMMARY"}
                    assert not undefined, f"{flow.doc}:{flow.line}: {step.get('name')}: undefined {undefined}"
        # the files later steps read are the files the pytest step writes (bare names go to reports/ here)
        text = flow.text
        for written in re.findall(r"--toolbench-(?:json|md)=(\S+)", text) + re.findall(r"--html=(\S+)", text):
            assert "/" in written or f"reports/{written}" in text or f"path: reports/" in text, written
    for doc, line, body in other_yaml:
        yaml.safe_load(re.sub(r"<[^>]*>", "x", body))  # the YAML examples parse (placeholders aside)


def test_the_example_suites_worked_examples_run_as_written(extracted, tmp_path):
    """The console blocks that run in examples/ (no data, no model needed) are executed in a copy of the example,
    in order; each must exit 0 and show only metrics its run has."""
    blocks: dict[tuple[str, int], list[Command]] = {}
    for command in extracted[0]:
        if command.block >= 0 and command.cwd.startswith("examples") and command.pytest_args() is not None:
            blocks.setdefault((command.doc, command.block), []).append(command)
    assert blocks, "no worked example runs in examples/ (the gate example of docs/statistics.md should)"
    env = {key: value for key, value in os.environ.items() if key not in ("TOOLBENCH_DATA", "PYTEST_ADDOPTS")}
    for (doc, _), commands in blocks.items():
        if any("--toolbench-backend=sampling" in c.words for c in commands):
            continue  # its backend is registered by the conftest of tests/test_repeat.py, which runs the same example
        work = tmp_path / f"{Path(doc).stem}-{commands[0].line}"
        shutil.copytree(ROOT / commands[0].cwd, work)
        for command in commands:
            result = subprocess.run([sys.executable, "-m", "pytest", *command.pytest_args(), "-p", "no:randomly",
                                     "-p", "no:cacheprovider"], cwd=work, env=env, capture_output=True,
                                    text=True, timeout=300)
            output = result.stdout + result.stderr
            assert result.returncode == 0, f"{command.where}\nexit {result.returncode}\n{output[-3000:]}"
            for line in command.shown:
                named = METRIC_REF.findall(line) if "toolbench gate" in line else []
                for suite, metric in named:
                    assert f"{suite}.{metric} " in output, f"{command.where}: shown {line!r}, not in the run"
                figure = re.match(r"^\s+(\S+)\s+(\d+\.\d+%)\s+(\d+/\d+)", line)
                if figure:  # a metric row: its name, value and counts as the run prints them
                    assert re.search(rf"^\s+{re.escape(figure.group(1))}\s+{re.escape(figure.group(2))}\s+"
                                     rf"{re.escape(figure.group(3))}", output, re.M), \
                        f"{command.where}: shown {line.strip()!r}, the run printed another figure"


def test_suites_needing_files_fetched_by_hand_are_named_and_unknown_sums_are_marked_unverified():
    """README's set-up says which suites need files that ../shared/data lacks (their download entries), and
    docs/data.md's "Data fetched by hand" where each file goes; a placeholder sum (64 zeros, no file's digest) is
    marked UNVERIFIED on its own file's line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set-up, main job, tests", 1)[1].split("\n## ", 1)[0]
    by_hand = (ROOT / "docs" / "data.md").read_text(encoding="utf-8").split("\n## Data fetched by hand\n", 1)[1]
    by_hand = by_hand.split("\n## ", 1)[0]
    assert "docs/data.md#data-fetched-by-hand" in setup
    problems = []
    for definition in sorted(ROOT.glob("suites/*/suite.yaml")):
        text = definition.read_text(encoding="utf-8")
        files = (yaml.safe_load(text).get("data") or {}).get("files") or {}
        downloads = [name for name, pin in files.items() if isinstance(pin, dict) and pin.get("download")]
        suite = definition.parent.name
        if downloads and f"`{suite}`" not in setup:
            problems.append(f"README set-up does not name {suite}, whose {downloads[0]} must be fetched")
        if downloads and f"`{suite}`" not in by_hand:
            problems.append(f"docs/data.md 'Data fetched by hand' does not say where {suite}'s {downloads[0]} goes")
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if re.search(r'sha256: "?0{64}"?', line):
                key = next(lines[i] for i in range(number, -1, -1) if re.match(r"^\s+\S+:\s*(#.*)?$", lines[i]))
                if "UNVERIFIED" not in key:
                    problems.append(f"{definition.relative_to(ROOT)}:{number + 1}: placeholder sum not marked "
                                    f"UNVERIFIED on its file's line ({key.strip()})")
    assert "unverified" in setup.lower() and "--toolbench-data-unverified" in setup
    assert "UNVERIFIED" in by_hand and "--toolbench-data-unverified" in by_hand
    assert not problems, "\n".join(problems)


def test_no_example_names_a_developers_path_or_needs_a_hub_download_offline(extracted):
    """Examples run on the reader's machine: no path of the machine they were written on (a worktree, a home), and
    the own-model recipe (a model run on the CPU) names a local folder, which works offline, not only a Hub id."""
    problems = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
                for path in doc_files()
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if re.search(r"/work/|/home/\w|/root/|wt-[a-z]+/", line)]
    assert not problems, "\n".join(problems)
    model_runs = [c for c in extracted[0] if c.pytest_args() is not None and not c.is_template
                  and any(w.startswith("--model=") for w in c.words) and c.env.get("TOOLBENCH_DATA")
                  and "--toolbench-backend=openai" not in c.words]  # an endpoint's --model is the served name
    assert model_runs, "the own-model recipe of docs/cpu.md (a --model run on the data) was not found"
    for command in model_runs:
        model = next(w for w in command.words if w.startswith("--model=")).partition("=")[2]
        assert model.startswith(("/", ".", "~")), f"{command.where}: a Hub id needs the network; use a local folder"


# -- which documented commands run here, and why the others cannot ---------------------------------------------
#: The documented runs these tests execute, each in a fresh copy of the checkout (its ``suites/``, ``conftest.py``,
#: ``pyproject.toml``, an empty ``reports/``, the ``.venv`` and ``../shared`` beside it: the layout a reader has),
#: every command of the block in order, **verbatim** (its words, environment and folder, nothing added; ``pytest``
#: is the set-up venv's, as on the PATH of a reader who activated it). Each must exit as its shown output says (1
#: when it shows a missed gate, else 0) and print the figure rows, ranks and gate figures it shows.
#: (doc, a phrase of the block's first command, slow)
DOC_RUNS: list[tuple[str, str, bool]] = [
    # NesTools' history example: two checkpoints, then a run against both with the HTML page (three runs of 1,000
    # cases; the comparison's paired tests over two baselines take ~40 s of CPU)
    ("docs/reports.md", "--toolbench-json=ckpt-1100.json", True),
    # RoTBench's gate example: a gold run, then the development outputs against it (exit 1: gates missed; ~10 s)
    ("docs/statistics.md", "suites/rotbench --toolbench-json=gold.json", False),
    # BFCL's gold answers without the agentic categories: 4,441 cases with the leaderboard rank (~10 s of CPU)
    ("docs/statistics.md", "--toolbench-md=bfcl.md", False),
    # BFCL's refused gate: the official Overall cannot be complete without SERPAPI_API_KEY, so the run stops before
    # anything is generated (exit 4, the usage error it shows; ~30 s of collection)
    ("docs/reports.md", "bfcl.overall_official=80%", True),
]

#: Every other command of a fenced block (and of README's set-up table) is not executed by these tests; why, by
#: rule (the first that matches). Each is still checked above (options, gates, files, scripts).
NOT_EXECUTED: list[tuple[str, str]] = [
    ("ci", "run by .ci/run exactly as written (CI's own job: the set-up, the tests, the slow tests, the site)"),
    ("site", "the documentation site's build: .ci/run runs it with `-d` and a temporary folder (the command as "
             "written leaves site/ in the checkout, which .gitignore ignores)"),
    ("example", "the example suite's worked examples are executed by "
                "test_the_example_suites_worked_examples_run_as_written (the sampling one by tests/test_repeat.py)"),
    ("fragment", "an option to add to a command (`pytest --toolbench-fail-under ...`), not a command"),
    ("main job", "every suite on the full data (tens of thousands of cases): too long for CI; its BFCL part runs in "
                 "the slow test of docs/statistics.md's BFCL example"),
    ("endpoint", "needs a model served at the URL (`vllm serve`, minutes to start on a CPU)"),
    ("model", "needs a real model (--model): a GPU, or vLLM's CPU build and a model folder built from the package "
              "registry (minutes); CI has neither"),
    ("ray", "needs a Ray cluster of GPU machines"),
    ("gpu", "a GPU benchmark (benchmarks/bench_gpu.py needs CUDA)"),
    ("install", "installs packages (network); CI's set-up, scripts/setup-dev.sh, installs what the tests need"),
    ("browser", "needs Chromium; tests/test_report_html.py renders the page with it where it is installed"),
    ("actions", "a step of the GitHub Actions workflow: needs the Actions runner (checkout, cache, artifacts)"),
    ("readers-files", "runs on results files of the reader's own (two releases' --toolbench-json files)"),
]


def _ci_script_commands() -> set[str]:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return {line.split("||")[0].strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def not_executed_rule(command: Command, in_workflow: bool) -> str | None:
    """The NOT_EXECUTED rule a command falls under, or None."""
    words, text = command.words, " ".join(command.words)
    program = command.program
    args = command.pytest_args()
    if text in _ci_script_commands() or text == "bash .ci/run":
        return "ci"
    if text.startswith(".venv/bin/python -m mkdocs build --strict") and \
            any(line.startswith(".venv/bin/python -m mkdocs build --strict -d") for line in _ci_script_commands()):
        return "site"
    if command.cwd.startswith("examples") or any(w.startswith("--toolbench-backend=sampling") for w in words):
        return "example"
    if in_workflow:
        return "actions"
    if args is not None and not [a for a in args if not a.startswith("-") and "=" not in a and a not in words[:1]] \
            and any(a.startswith("--toolbench-fail-under") for a in args) and len(args) <= 2:
        return "fragment"
    if args == ["suites", "-n", "2"] and command.env.get("TOOLBENCH_DATA"):
        return "main job"
    if "--toolbench-backend=openai" in words or "vllm.entrypoints.openai.api_server" in words:
        return "endpoint"
    if any(w == "--toolbench-ray-address" or w.startswith(("--toolbench-ray-address", "--toolbench-replicas"))
           for w in words):
        return "ray"
    if any(w == "--model" or w.startswith("--model=") for w in words) and args is not None:
        return "model"
    if program.endswith(("python", "python3")) and words[1:2] == ["benchmarks/bench_gpu.py"]:
        return "gpu"
    if program in ("pip", "apt-get") or (program == "bash" and words[1:2] and "real-small-model.sh" in words[1]):
        return "install"
    if program == "chromium":
        return "browser"
    if program.endswith(("python", "python3")) and words[1:2] == ["benchmarks/bench_gate_null.py"]:
        return "readers-files"
    return None


def _doc_run_blocks(commands: list[Command]) -> dict[tuple[str, str, bool], list[Command]]:
    found = {}
    for entry in DOC_RUNS:
        doc, phrase = entry[0], entry[1]
        starts = [c for c in commands if c.doc == doc and not c.inline and phrase in shlex.join(c.words)]
        assert len(starts) == 1, f"DOC_RUNS {doc}: {phrase!r} names {len(starts)} commands, not one"
        found[entry] = [c for c in commands if c.doc == doc and c.block == starts[0].block and not c.inline
                        and c.line >= starts[0].line]
    return found


def test_every_documented_command_is_executed_or_says_why_not(extracted):
    """Each command of a fenced block (README's set-up table too) is executed by a test here (DOC_RUNS, the example
    suite's worked examples) or falls under a NOT_EXECUTED rule with its reason: a new command is a decision."""
    commands, workflows, _ = extracted
    executed = {id(c) for block in _doc_run_blocks(commands).values() for c in block}
    workflow_docs = {(flow.doc, flow.line) for flow in workflows}
    undecided = []
    for command in commands:
        setup_table = command.inline and command.doc == "README.md" and command.env.get("TOOLBENCH_DATA") or \
            command.inline and command.doc == "README.md" and " ".join(command.words) in (
                "bash scripts/setup-dev.sh", ".venv/bin/python -m pytest tests -n 2",
                ".venv/bin/python -m pytest tests -m slow -n 2", "bash .ci/run")
        if (command.inline and not setup_table) or id(command) in executed:
            continue
        in_workflow = (command.doc, command.line) in workflow_docs
        if command.is_template and not in_workflow and command.program in ("pip",):
            continue  # a template install line (/path/to/...): the reader's own paths
        if not_executed_rule(command, in_workflow) is None:
            undecided.append(command.where)
    assert not undecided, ("commands neither executed (DOC_RUNS) nor declared not executable (NOT_EXECUTED):\n"
                           + "\n".join(undecided))
    rules = {name for name, _ in NOT_EXECUTED}
    assert len(rules) == len(NOT_EXECUTED) and all(reason for _, reason in NOT_EXECUTED)


def _fresh_checkout(tmp_path: Path) -> Path:
    """The reader's layout: a checkout (the suites, the root conftest and pyproject, an empty reports/ folder, the
    set-up's .venv) with ../shared beside it."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copytree(ROOT / "suites", checkout / "suites", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, checkout / name)
    (checkout / "reports").mkdir()
    (checkout / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    return checkout


def _run_documented_block(entry, tmp_path: Path) -> None:
    if not (SHARED / "data").is_dir():
        pytest.skip("the upstream data is not beside the checkout (../shared/data)")
    commands = _doc_run_blocks(all_extracted()[0])[entry]
    checkout = _fresh_checkout(tmp_path)
    venv_bin = str(Path(sys.prefix) / "bin")
    env = {key: value for key, value in os.environ.items()
           if key not in ("TOOLBENCH_DATA", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST")}
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")  # `pytest` as a reader with the set-up's venv has it
    checked = 0
    for command in commands:
        # a usage error shows its one line (exit 4); a missed gate its summary (exit 1)
        refused = [line for line in command.shown if line.startswith("pytest-toolbench: ")]
        expected = 4 if refused else 1 if any("toolbench gate missed" in line for line in command.shown) else 0
        result = subprocess.run(command.words, cwd=checkout / command.cwd, env={**env, **command.env},
                                capture_output=True, text=True, timeout=900)
        output = result.stdout + result.stderr
        assert result.returncode == expected, f"{command.where}\nexit {result.returncode}\n{output[-3000:]}"
        for line in refused:
            assert line in output, f"{command.where}: shown {line!r}, the run printed another error"
            checked += 1
        for line in command.shown:
            for suite, metric in (METRIC_REF.findall(line) if "toolbench gate" in line else []):
                assert f"{suite}.{metric} " in output, f"{command.where}: shown {line!r}, not in the run"
                checked += 1
            figure = re.match(r"^\s+(\S.*?\S)\s+(\d+\.\d+%)\s+(\d+/\d+)\s", line)
            if figure:  # a metric row: its name, value and counts as the run prints them
                assert re.search(rf"^\s+{re.escape(figure.group(1))}\s+{re.escape(figure.group(2))}\s+"
                                 rf"{re.escape(figure.group(3))}\s", output, re.M), \
                    f"{command.where}: shown {line.strip()!r}, the run printed another figure"
                checked += 1
            rank = re.match(r"^\s+(.+?): (\d+\.\d+%), rank (\d+) of (\d+)", line)
            if rank:
                assert rank.group(0).strip() in output, f"{command.where}: shown {line.strip()!r}, not in the run"
                checked += 1
    # each block shows figures, ranks or gates of its run: at least one of them was checked against the run
    assert checked, f"{commands[0].where}: none of the output it shows was checked"


@pytest.mark.parametrize("entry", [e for e in DOC_RUNS if not e[2]], ids=lambda e: f"{e[0]}:{e[1][:30]}")
def test_documented_runs_on_the_upstream_data_run_as_written(entry, tmp_path):
    _run_documented_block(entry, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("entry", [e for e in DOC_RUNS if e[2]], ids=lambda e: f"{e[0]}:{e[1][:30]}")
def test_documented_long_runs_on_the_upstream_data_run_as_written(entry, tmp_path):
    _run_documented_block(entry, tmp_path)


def test_every_documented_run_of_the_shipped_suites_names_its_data_folder(extracted):
    """A run without a data folder downloads the pinned files where it can and otherwise runs on the shipped samples
    (docs/data.md): a recipe that names none gives other figures on a reader's machine than it states. Every pytest
    command of a fenced block names one (``TOOLBENCH_DATA``, ``--toolbench-data``), except the example suite's
    (its ``data/`` folder is given) and option fragments."""
    commands, workflows, _ = extracted
    workflow_docs = {(flow.doc, flow.line) for flow in workflows}
    problems = []
    for command in commands:
        args = command.pytest_args()
        if args is None or command.inline or (command.doc, command.line) in workflow_docs:
            continue  # the workflow runs on GitHub's runner, whose network fetches the pinned files
        if not_executed_rule(command, False) in ("example", "fragment"):
            continue
        if not (command.env.get("TOOLBENCH_DATA") or any(w.startswith("--toolbench-data") for w in args)):
            problems.append(command.where)
    assert not problems, "documented runs that name no data folder:\n" + "\n".join(problems)
