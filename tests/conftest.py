"""Shared fixtures for the plugin's own tests, and the ``slow`` marker.

Slow tests (a real vLLM engine, long end-to-end ``pytest`` runs in subprocesses) carry ``@pytest.mark.slow`` and are
deselected unless the ``-m`` expression names the marker: ``pytest tests -m slow`` runs only them, ``pytest tests
-m "slow or not slow"`` everything. CI (``.ci/run``) runs both.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SUITE = REPO / "examples" / "echo_suite"
#: ``parametrize("workers", [[], XDIST])``: the ``-n 2`` variant of an end-to-end run whose serial variant runs by
#: default is slow (several seconds each: a controller and two workers); CI runs it with ``-m slow``
XDIST = pytest.param(["-n", "2"], marks=pytest.mark.slow)
SLOW_SELECTED_BY = '-m slow (only the slow ones) or -m "slow or not slow" (all)'

#: where pytest was invoked: a relative TOOLBENCH_DATA names a folder from there, as the plugin reads it
_invocation_dir = Path.cwd()


def pytest_configure(config: pytest.Config) -> None:
    global _invocation_dir
    _invocation_dir = config.invocation_params.dir
    config.addinivalue_line("markers", "slow: a slow end-to-end test (real engine, long subprocess runs); "
                                       f"deselected unless selected with {SLOW_SELECTED_BY}")


def pytest_report_header(config: pytest.Config) -> str | None:
    if "slow" in (config.getoption("markexpr") or ""):
        return None
    return f"slow tests deselected: run them with {SLOW_SELECTED_BY}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "slow" in (config.getoption("markexpr") or ""):
        return  # the -m expression decides
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def shared_data_dir() -> Path | None:
    """The upstream data, as an absolute path (tests hand it to runs in other folders): TOOLBENCH_DATA, relative
    to the folder pytest was invoked from, else ../shared/data beside the checkout."""
    given = os.environ.get("TOOLBENCH_DATA")
    candidate = (_invocation_dir / given).resolve() if given else REPO.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if path is None:
        pytest.skip("upstream benchmark data not available (set TOOLBENCH_DATA)")
    return path


def committed_generations(cache: Path) -> int:
    """How many generations the cache folder's SQLite file holds now (read-only; 0 while it is absent or busy)."""
    path = cache / "generations.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
    except sqlite3.Error:
        return 0


class LocalHTTPServer:
    """A request handler class served on a free loopback port by a background thread, as a context manager (the
    tests' stand-ins for the Hub and for OpenAI-compatible endpoints); ``url`` ends with ``path``."""

    def __init__(self, handler: type, path: str = ""):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
