"""How long generation took and how fast it ran, in every report: the JSON header's ``generation`` figures, the
terminal summary, the Markdown run table and the HTML run table; and the progress lines a CI log gets."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest

from pytest_toolbench.report import markdown, terminal
from pytest_toolbench.report.facts import generation_figures, run_facts
from pytest_toolbench.report.run_report import build
from pytest_toolbench.run.summary import RunSummary
from test_engine_endpoint import ScriptedServer, completion
from test_report import echo, run  # noqa: F401  (the echo fixture)

FIGURES = {"requested": 120, "cached": 16, "generated": 104, "rounds": 0, "prompt_tokens": 98_765,
           "output_tokens": 4_321, "seconds": 131.5, "engine_startup_s": 31.5, "requests": 104,
           "generation_s": 100.0, "prompt_tokens_per_s": 987.7, "output_tokens_per_s": 43.2, "backend": {}}
EXPECTED = ("104 requests, 98,765 prompt + 4,321 generated tokens in 100.0 s (988 prompt tok/s, 43.2 generated "
            "tok/s); 16 from the cache; engine start-up 31.5 s")


def summary_with(figures) -> RunSummary:
    return RunSummary(header={"backend": "vllm", "model": "/ckpt/step-1200", "mode": "prompt",
                              "generation": figures})


def test_the_figures_in_one_line():
    assert generation_figures({"generation": FIGURES}) == EXPECTED
    assert generation_figures({"backend": "gold"}) is None  # nothing was generated: no line
    everything_cached = dict(FIGURES, generated=0, requests=0, prompt_tokens=0, output_tokens=0, generation_s=0.0,
                             prompt_tokens_per_s=None, output_tokens_per_s=None, engine_startup_s=None, cached=120)
    assert generation_figures({"generation": everything_cached}) == \
        "0 requests, 0 prompt + 0 generated tokens in 0.0 s; 120 from the cache; no engine start-up"


def test_terminal_and_markdown_run_headers_carry_the_figures():
    summary = summary_with(FIGURES)
    assert f"generation: {EXPECTED}" in terminal.render(build(summary))
    assert ("Generation", EXPECTED) in run_facts(summary)
    assert f"| Generation | {EXPECTED} |" in markdown.render(build(summary)).splitlines()


def test_every_report_of_an_endpoint_run_says_how_long_and_how_fast(echo):
    def answer(body):
        text = body["messages"][-1]["content"].removeprefix("Echo this: ")
        return 200, completion(json.dumps({"name": "echo", "arguments": {"text": text}}), prompt_tokens=40,
                               completion_tokens=12), {}

    with ScriptedServer(default=answer) as server:
        result = run(echo, "--toolbench-backend=openai", f"--toolbench-base-url={server.url}", "--model=m",
                     "--toolbench-json=run.json", "--toolbench-md=run.md", "--html=page.html",
                     "--self-contained-html")
    assert result.ret == 0, result.stdout.str()
    figures = json.loads((echo.path / "reports" / "run.json").read_text())["header"]["generation"]
    assert {key: figures[key] for key in ("requests", "prompt_tokens", "output_tokens", "engine_startup_s")} == \
        {"requests": 3, "prompt_tokens": 120, "output_tokens": 36, "engine_startup_s": None}
    assert figures["generation_s"] == round(figures["seconds"], 3) > 0
    assert figures["prompt_tokens_per_s"] == pytest.approx(120 / figures["seconds"], rel=0.01)  # no engine: all of it
    assert figures["output_tokens_per_s"] == pytest.approx(36 / figures["seconds"], rel=0.01)
    line = generation_figures({"generation": figures})
    assert line.startswith("3 requests, 120 prompt + 36 generated tokens in ") and "no engine start-up" in line

    # off a terminal (a CI log): plain progress lines, the last with the final figures
    progress = [text for text in result.stdout.lines if text.startswith("toolbench: generating: ")]
    assert progress and "\r" not in result.stdout.str()
    assert re.fullmatch(r"toolbench: generating: 3/3 requests \(100%\), prompt [\d,]+ tok/s, generation [\d,.]+ "
                        r"tok/s, elapsed 0m\d\ds", progress[-1]), progress
    assert f"generation: {line}" in result.stdout.lines
    assert f"| Generation | {line} |" in (echo.path / "reports" / "run.md").read_text().splitlines()
    page = html.unescape((echo.path / "reports" / "page.html").read_text(encoding="utf-8"))
    assert f"<tr><th>Generation</th><td>{line}</td></tr>" in page


TTY_CONFTEST = '''
import pytest


class Yes:  # pytest's isatty is a bool that can also be called
    def __bool__(self):
        return True

    def __call__(self):
        return True


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.pluginmanager.get_plugin("terminalreporter").isatty = Yes()  # as on a terminal
'''


def test_on_a_terminal_progress_is_one_line_redrawn_in_place(echo):
    echo.makeconftest(TTY_CONFTEST)
    with ScriptedServer() as server:  # run by hand: pytester's output lines are split at carriage returns too
        result = subprocess.run([sys.executable, "-m", "pytest", "suites", "--toolbench-data=data", "-p",
                                 "no:cacheprovider", "--toolbench-backend=openai",
                                 f"--toolbench-base-url={server.url}", "--model=m"],
                                cwd=echo.path, capture_output=True, timeout=300)  # bytes: text mode reads \r as \n
    text = result.stdout.decode()
    drawn = text.split("toolbench: pre-generating answers for 3 cases of echo with openai (m)", 1)[1]
    drawn = drawn.split("toolbench: 3 generated, 0 from cache", 1)[0]
    # redrawn with a carriage return; the final figures replace it and end the line
    redraws = [part.strip() for part in drawn.split("\r") if part.strip()]
    # the redrawn status line is the short form ("generating 1/3 (33%), ..."), the final one the full figures
    assert redraws and all(part.startswith(("toolbench: generating ", "toolbench: generating: "))
                           for part in redraws), drawn
    assert redraws[-1].startswith("toolbench: generating: 3/3 requests (100%)")
    assert drawn.count("\n") == 2 and drawn.rstrip(" ").endswith("\n"), drawn  # the line before, and its end
