"""Every suite against a hostile model: a backend that answers each request (single-shot and every step of an
interactive case) with malformed, huge, deeply nested, non-finite and unencodable output, as text and as native
tool calls. Every case of every shipped suite must get a verdict, nothing may crash, and a serial and an ``-n 2``
run must keep identical records. The backend is a plain plugin, so the test covers any suite added later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

HOSTILE_BACKEND = textwrap.dedent('''
    from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation

    DEEP = 5_000
    VALUES = ["123456789012345678901", "5" * 5000, "10**5000", "1e999", "float('nan')", "NaN", "Infinity",
              "[" * DEEP + "]" * DEEP, "'\\\\ud800 lone'", "\\ud800", "nul\\x00byte", "'" + "a" * 300_000 + "'"]
    SHAPES = [
        "[get_weather(city={v})]",
        '[{{"api_name": "get_weather", "parameters": {{"city": {v}}}}}]',
        'Thought: call it\\nAction: get_weather\\nAction Input: {{"city": {v}}}',
        '{{"name": "get_weather", "arguments": {{"city": {v}}}}}',
        "Final Answer: {v}",
        "{v}",
        "",
    ]


    class HostileBackend:
        name = "hostile"
        capabilities = MODEL_BACKEND

        def __init__(self, options):
            pass

        def fingerprint(self):
            return {"backend": "hostile", "version": 1}

        def generate(self, tasks, on_chunk=None, **_):
            out = []
            for index, task in enumerate(tasks):
                value = VALUES[index % len(VALUES)]
                text = SHAPES[(index // len(VALUES)) % len(SHAPES)].format(v=value)
                calls = None
                if index % 3 == 0:  # native tool calls too: odd names, non-dict arguments, huge values
                    calls = [{"name": value[:50], "arguments": {"city": value, "n": 10**30}},
                             {"name": "x", "arguments": "not a dict"}, {"arguments": [1, 2]}]
                out.append(Generation(text=text, finish_reason="length" if index % 7 == 0 else "stop",
                                      tool_calls=calls, parse_error="bad call" if index % 11 == 0 else None))
                if on_chunk is not None:
                    on_chunk([(index, out[-1])])
            return out

        def close(self):
            pass


    def pytest_toolbench_register(registry):
        registry.add_backend("hostile", HostileBackend)
''')


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    plugin = tmp_path / "plugin"
    plugin.mkdir(exist_ok=True)
    (plugin / "hostile_backend.py").write_text(HOSTILE_BACKEND, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLBENCH_DATA", "PYTEST_XDIST_WORKER")}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(plugin), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites"), "-q", "-p", "no:cacheprovider",
                           "-p", "hostile_backend", "--toolbench-backend=hostile", "--toolbench-no-download",
                           f"--toolbench-cache={tmp_path / 'cache'}", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env)


def test_every_suite_gives_every_case_a_verdict_under_a_hostile_model(tmp_path):
    documents = []
    for name, extra in (("serial", []), ("parallel", ["-n", "2"])):
        out = tmp_path / f"{name}.json"
        result = _run(tmp_path, f"--toolbench-json={out}", *extra)
        combined = result.stdout + result.stderr
        assert "INTERNALERROR" not in combined and "Traceback" not in combined, combined[-4000:]
        assert result.returncode in (0, 1), combined[-4000:]  # failing cases are the measurement
        documents.append(json.loads(out.read_text(encoding="utf-8")))
    serial, parallel = documents
    suites = {path.parent.name for path in (REPO / "suites").glob("*/suite.yaml")}
    assert set(serial["suites"]) == suites
    cases = serial["cases"]
    assert cases and all(case["passed"] in (True, False) for case in cases)
    assert not [case for case in cases if case["error_type"] in ("not_run", "scorer_error")], \
        [(c["suite"], c["case_id"], str(c.get("explanation") or c.get("message"))[:300]) for c in cases if c["error_type"] in ("not_run",
                                                                                                "scorer_error")][:10]
    assert serial["cases"] == parallel["cases"]
    assert serial["suites"] == parallel["suites"]
