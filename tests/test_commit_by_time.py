"""A run killed during generation loses at most ``--toolbench-commit-seconds`` of finished work, even when far fewer
requests than ``--toolbench-commit-every`` have finished (the issue: 94 of 104 answers lost to a kill after an
18-minute stall, commit-every 256). The endpoint here answers the first requests at once and then stalls, as an
overloaded server does; the run is killed with SIGKILL during the stall and rerun.

Also the progress meter (done/total, tok/s, elapsed, ETA) and the generation figures of the run header."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE, LocalHTTPServer, committed_generations
from pytest_toolbench.run.progress import ProgressMeter

CASES = 30
ANSWERED_BEFORE_STALL = 20


class StallingServer(LocalHTTPServer):
    """An OpenAI-compatible echo endpoint that answers the first ``answer_first`` requests at once and holds every
    later one until :meth:`release` (as an overloaded server can for minutes). Counts the requests it received."""

    def __init__(self, answer_first: int):
        self.answer_first = answer_first
        self.received = 0
        self.released = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # the plugin's reachability probe
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.received += 1
                    number = server.received
                if number > server.answer_first:
                    server.released.wait(timeout=300)
                text = body["messages"][-1]["content"].removeprefix("Echo this: ")
                content = json.dumps({"name": "echo", "arguments": {"text": text}})
                data = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": content}}],
                                   "usage": {"prompt_tokens": 11, "completion_tokens": 5}}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client was killed meanwhile

        super().__init__(Handler, "/v1")
        self.httpd.daemon_threads = True  # a handler stalled on a killed client must not hold the shutdown

    def release(self) -> None:
        self.answer_first = 10 ** 9
        self.released.set()

    def __exit__(self, *exc):
        self.released.set()
        super().__exit__(*exc)


@pytest.fixture
def echo_suite(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE_SUITE, tmp_path, dirs_exist_ok=True)
    rows = [{"id": f"echo_{i}", "text": f"text number {i}", "kind": "short"} for i in range(CASES)]
    (tmp_path / "data" / "echo" / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path


def pytest_args(folder: Path, url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "suites", "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
            "--toolbench-data=data", "--toolbench-backend=openai", f"--toolbench-base-url={url}", "--model=m",
            f"--toolbench-cache={folder / 'cache'}", f"--toolbench-json={folder / 'run.json'}",
            "--toolbench-commit-every=256", *extra]


def test_a_run_killed_during_a_stall_keeps_what_finished_and_the_rerun_asks_only_for_the_rest(echo_suite):
    with StallingServer(answer_first=ANSWERED_BEFORE_STALL) as server:
        running = subprocess.Popen(pytest_args(echo_suite, server.url, "--toolbench-commit-seconds=1"),
                                   cwd=echo_suite, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        deadline = time.monotonic() + 240
        while committed_generations(echo_suite / "cache") < ANSWERED_BEFORE_STALL and running.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(running.pid, signal.SIGKILL)
        output = running.communicate()[0].decode(errors="replace")
        assert committed_generations(echo_suite / "cache") == ANSWERED_BEFORE_STALL, output[-3000:]
        asked_before = server.received
        assert asked_before > ANSWERED_BEFORE_STALL  # requests were waiting when the run was killed

        server.release()
        rerun = subprocess.run(pytest_args(echo_suite, server.url), cwd=echo_suite, capture_output=True, text=True,
                               timeout=300)
        assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
        assert server.received - asked_before == CASES - ANSWERED_BEFORE_STALL
    header = json.loads((echo_suite / "run.json").read_text())["header"]
    assert (header["generation"]["cached"], header["generation"]["generated"]) == (20, 10)
    assert f"{CASES} passed" in rerun.stdout


def test_commit_seconds_is_in_help_and_checked(echo_suite):
    shown = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=echo_suite, capture_output=True,
                           text=True, timeout=120).stdout
    assert "--toolbench-commit-seconds=S" in shown and "default 30" in " ".join(shown.split())
    bad = subprocess.run(pytest_args(echo_suite, "http://127.0.0.1:9/v1", "--toolbench-commit-seconds=0"),
                         cwd=echo_suite, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 4 and "--toolbench-commit-seconds must be a positive number" in bad.stderr


# -- progress -------------------------------------------------------------------------------------------------------
class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_is_a_plain_line_per_tenth_or_per_interval():
    clock, lines = Clock(), []
    meter = ProgressMeter("generating", 100, lines.append, interval=30.0, clock=clock)
    clock.now = 10.0
    meter.update(5, prompt_tokens=5000, output_tokens=250)
    assert lines == []  # under a tenth, under the interval
    clock.now = 20.0
    meter.update(10, prompt_tokens=10_000, output_tokens=500)
    assert lines == ["generating: 10/100 requests (10%), prompt 500 tok/s, generation 25.0 tok/s, elapsed 0m20s, "
                     "ETA 3m00s"]
    clock.now = 51.0
    meter.tick()  # a stall still shows in the log every interval
    assert len(lines) == 2 and lines[-1].startswith("generating: 10/100 requests") and "elapsed 0m51s" in lines[-1]


def test_progress_on_a_terminal_redraws_one_line():
    clock, lines, status = Clock(), [], []
    meter = ProgressMeter("round 2", 4, lines.append, status=status.append, clock=clock)
    for done in range(1, 5):
        clock.now += 1.0
        meter.update(done, prompt_tokens=100 * done, output_tokens=10 * done)
    assert lines == [] and len(status) == 4
    assert status[-1] == "round 2 4/4 (100%), 100+10.0 tok/s, 0m04s"  # the short form: it fits 80 columns


def test_the_eta_counts_the_tokens_left_not_the_requests_left():
    """Longest first: ten long prompts (1,000 characters) take the first 10 s, ninety short ones (100) are left. Per
    request the rest would take 90 s; by tokens it is the 90 short prompts' 2,250 prompt and 900 output tokens at
    the 260 tokens per second seen so far, about 12 s."""
    clock, lines = Clock(), []
    meter = ProgressMeter("generating", 100, lines.append, clock=clock, sizes=[1000] * 10 + [100] * 90)
    clock.now = 10.0
    meter.update(10, prompt_tokens=2500, output_tokens=100)
    assert meter.eta_seconds() == pytest.approx(10.0 * (2250 + 900) / 2600)
    assert lines[-1].endswith("ETA 0m12s"), lines
    # without token counts (a backend that reports none), the prompt sizes alone
    bare = ProgressMeter("generating", 100, lines.append, clock=clock, sizes=[1000] * 10 + [100] * 90)
    bare.started = 0.0
    bare.done = 10
    assert bare.eta_seconds() == pytest.approx(10.0 * 9000 / 10000)


class FakeWriter:
    fullwidth = 80


class FakeReporter:
    isatty = True

    def __init__(self):
        self._tw = FakeWriter()
        self.screen: list[str] = []

    def rewrite(self, line, erase=False, **markup):
        self.screen.append("\r" + line + (" " * (self._tw.fullwidth - len(line) - 1) if erase else ""))

    def write(self, text, **markup):
        self.screen.append(text)

    def write_line(self, text, **markup):
        self.screen.append(text + "\n")


def test_the_status_line_fits_an_80_column_terminal_and_clears_what_it_replaces():
    from pytest_toolbench.plugin.lifecycle import TerminalLines

    class Config:
        class pluginmanager:
            @staticmethod
            def get_plugin(name):
                return reporter

    reporter = FakeReporter()
    lines = TerminalLines(Config())
    clock = Clock()
    meter = ProgressMeter("round 12", 24_000, lines.line, status=lambda text: lines.status(f"toolbench: {text}"),
                          clock=clock)
    for done in (1, 5_000, 23_999):
        clock.now += 100_000.0
        meter.update(done, prompt_tokens=123_456_789 * done, output_tokens=9_876_543 * done)
    redraws = [text for text in reporter.screen if text.startswith("\r")]
    assert len(redraws) == 3
    for text in redraws:
        assert len(text) == 80, repr(text)  # "\r" and 79 columns: the last one written whatever the old line held
    assert "ETA" in redraws[1] or redraws[1].endswith("…")
