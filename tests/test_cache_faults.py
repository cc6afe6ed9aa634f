"""Generation-cache faults: nothing generated is lost, nothing stored is misread, every fault is one clear line.

A corrupt (truncated, garbage) cache is moved aside and the run goes on, or with ``--toolbench-offline`` stops once
naming the file; a read-only cache (file or folder, as restored from a CI cache, WAL journal included) is read; a
write that fails (read-only, disk full) keeps the generations in memory, scores them and says so once; any model
text, lone surrogates included, is stored and read back unchanged.

Read-only files are made with ``chmod``; root ignores modes, so as root ``chattr +i`` is used instead (the variant is
skipped only where neither can stop a write).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE, XDIST
from counting_backend import COUNTING_BACKEND as COUNTING_BACKEND_BASE
from pytest_toolbench.backends.openai_endpoint import OpenAIEndpointBackend
from pytest_toolbench.backends.openai_wire import decode_body as _decode_body
from pytest_toolbench.run.cache import CacheError, GenerationCache, request_key
from pytest_toolbench.run.cache_layout import CacheLayout
from pytest_toolbench.run.requests import Answerer
from pytest_toolbench.backends import MissingOutput
from pytest_toolbench.backends.openai_plugin import OpenAIOptions
from pytest_toolbench.run.options import CacheOptions, RunOptions
from pytest_toolbench.contract.suite import Case, Generation, Request, Task
from test_engine_endpoint import ScriptedServer, completion

ODD_TEXT = "lone \ud800 and \udfff, NUL \x00, escape \x1b, emoji \U0001f600, bidi \u202e, high \uffff"


def gen(text: str = "hello", **kwargs) -> Generation:
    return Generation(text=text, finish_reason="stop", prompt_tokens=3, output_tokens=2, **kwargs)


def wal_cache(folder: Path, rows: dict[str, Generation], checkpoint: bool = True) -> Path:
    """A cache in WAL mode. ``checkpoint=False``: the answers stay in the ``-wal`` journal (a copy taken while the
    writer was still running, as a CI cache step can)."""
    if checkpoint:
        cache = GenerationCache(folder)
        cache.put_many(rows.items())
        cache.close()
        return CacheLayout.at(folder).generations
    staging = folder.with_name(folder.name + "-staging")
    cache = GenerationCache(staging)
    cache._db.execute("PRAGMA wal_autocheckpoint = 0")
    cache.put_many(rows.items())
    folder.mkdir(parents=True, exist_ok=True)
    path = CacheLayout.at(folder).generations
    for name in (path.name, path.name + "-wal"):
        shutil.copyfile(staging / name, folder / name)
    cache.close()
    shutil.rmtree(staging)
    assert path.with_name(path.name + "-wal").stat().st_size > 0
    return path


# -- read-only files and folders ----------------------------------------------------------------------------------
@pytest.fixture
def make_read_only():
    """``make_read_only(path, ...)``: files and folders this process can no longer write (undone at teardown)."""
    root = os.geteuid() == 0
    locked: list[Path] = []

    def lock(*paths: Path) -> None:
        for path in paths:
            if root:
                done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True) \
                    if shutil.which("chattr") else None
                if done is None or done.returncode != 0:
                    pytest.skip(f"running as root and chattr +i is not available here: "
                                f"{done.stderr.strip() if done else 'no chattr'}")
            else:
                path.chmod(0o555 if path.is_dir() else 0o444)
            locked.append(path)
        for path in paths:  # the premise of the test: a write really fails
            probe = path / "probe" if path.is_dir() else path
            try:
                with open(probe, "a"):
                    pass
            except OSError:
                continue
            if path.is_dir():
                probe.unlink()
            pytest.skip(f"{path} cannot be made read-only here")

    yield lock
    for path in reversed(locked):
        if root:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        else:
            path.chmod(0o755 if path.is_dir() else 0o644)


# -- unit: storage ------------------------------------------------------------------------------------------------
def test_any_model_text_round_trips_through_the_cache(tmp_path):
    stored = gen(ODD_TEXT, tool_calls=[{"name": "f\ud800", "arguments": {"x\udc80": ODD_TEXT, "n": 1.5}}])
    cache = GenerationCache(tmp_path)
    cache.put_many([("k", stored)])
    assert not cache.notes and not cache.unsaved  # written to the file, not kept aside
    cache.close()
    reopened = GenerationCache(tmp_path, readonly=True)
    assert reopened.get("k") == stored
    assert reopened.missing(["k", "other"]) == {"other"}


def test_a_request_with_a_lone_surrogate_has_a_key_and_other_keys_are_unchanged():
    fingerprint = {"backend": "x"}
    plain = Request(messages=({"role": "user", "content": "héllo"},))
    odd = Request(messages=({"role": "user", "content": "h\ud800"},))
    assert request_key(fingerprint, odd) != request_key(fingerprint, plain)
    # the key of ordinary text is the one earlier versions computed (existing caches stay valid)
    import hashlib

    blob = json.dumps({"fingerprint": fingerprint, "messages": list(plain.messages), "tools": None,
                       "max_tokens": None}, sort_keys=True, ensure_ascii=False, default=str)
    assert request_key(fingerprint, plain) == hashlib.sha256(blob.encode("utf-8")).hexdigest()


# -- unit: corrupt files ------------------------------------------------------------------------------------------
def _truncated(folder: Path) -> Path:
    path = wal_cache(folder, {f"k{i}": gen("x" * 3000) for i in range(40)})
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    return path


def _garbage(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = CacheLayout.at(folder).generations
    path.write_bytes(b"this is not an SQLite file\n" * 50)
    return path


@pytest.mark.parametrize("spoil", [_truncated, _garbage], ids=["truncated", "garbage"])
def test_a_corrupt_cache_is_moved_aside_and_a_fresh_one_started(tmp_path, spoil):
    path = spoil(tmp_path / "cache")
    bad = path.read_bytes()
    Path(f"{path}-wal").write_bytes(b"stale journal")  # must not be replayed into the fresh cache
    cache = GenerationCache(tmp_path / "cache")
    assert len(cache.notes) == 1
    asides = sorted((tmp_path / "cache").glob(f"{path.name}.corrupt-*"))
    aside = next(p for p in asides if not p.name.endswith(("-wal", "-shm")))
    assert aside.read_bytes() == bad
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").read_bytes() != b"stale journal"
    assert str(path) in cache.notes[0] and str(aside) in cache.notes[0] and "\n" not in cache.notes[0]
    cache.put_many([("k", gen())])
    assert cache.get("k") == gen() and cache.writable and len(cache) == 1


@pytest.mark.parametrize("spoil", [_truncated, _garbage], ids=["truncated", "garbage"])
def test_a_corrupt_cache_offline_is_one_error_naming_the_file(tmp_path, spoil):
    path = spoil(tmp_path / "cache")
    with pytest.raises(CacheError) as raised:
        GenerationCache(tmp_path / "cache", readonly=True, on_corrupt="raise")
    message = str(raised.value)
    assert str(path) in message and "is corrupt" in message and "--toolbench-offline" in message
    assert path.exists()  # left where it is: it may be the only copy


def test_a_worker_ignores_a_corrupt_cache_it_cannot_replace(tmp_path):
    _garbage(tmp_path / "cache")
    cache = GenerationCache(tmp_path / "cache", readonly=True, on_corrupt="ignore")
    assert cache.get("k") is None and cache.missing(["k"]) == {"k"}
    assert len(cache.notes) == 1 and "is corrupt" in cache.notes[0]


def test_a_read_failure_mid_run_is_this_cases_missing_output(tmp_path):
    cache = GenerationCache(tmp_path)
    cache.put_many([("k", gen())])
    cache._db.close()  # any sqlite3 error on a read stands for the file going bad under the run
    answer = Answerer(backend=None, cache=cache, fingerprint={"backend": "x"})
    task = Task(Case("c1", "cat", {}, suite="s"), Request(messages=({"role": "user", "content": "hi"},)), 0)
    with pytest.raises(MissingOutput, match=r"case 'c1' \(step 0\): the generation cache .*generations\.sqlite "
                                            r"cannot be read"):
        answer(task)


# -- unit: failed writes ------------------------------------------------------------------------------------------
def test_a_full_disk_keeps_generations_in_memory_and_says_so_once(tmp_path):
    cache = GenerationCache(tmp_path)
    pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
    cache._db.execute(f"PRAGMA max_page_count = {pages + 1}")  # SQLITE_FULL as soon as the file must grow
    rows = [(f"k{i}", gen(f"{i}" * 20_000)) for i in range(5)]
    for row in rows:
        cache.put_many([row])  # never raises
    assert 1 <= len(cache.unsaved) <= 5
    assert all(cache.get(key) == generation for key, generation in rows)
    assert cache.missing([key for key, _ in rows] + ["other"]) == {"other"}
    assert len(cache.notes) == 1
    assert "could not be written (database or disk is full)" in cache.notes[0]
    assert str(cache.path) in cache.notes[0]


def test_unsaved_generations_reach_another_process_through_an_overlay(tmp_path):
    cache = GenerationCache(tmp_path / "cache")
    cache.write_error = "simulated"
    cache.put_many([("k", gen(ODD_TEXT))])
    assert cache.save_unsaved(CacheLayout.unsaved(tmp_path))
    worker = GenerationCache(tmp_path / "cache", readonly=True)
    assert worker.get("k") is None
    assert worker.add_overlay(CacheLayout.unsaved(tmp_path))
    assert worker.get("k") == gen(ODD_TEXT) and worker.missing(["k", "x"]) == {"x"}


# -- unit: read-only caches ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("checkpoint", [True, False], ids=["checkpointed", "answers-in-wal"])
@pytest.mark.parametrize("readonly", [True, False], ids=["reader", "writer"])
def test_a_read_only_wal_cache_in_a_read_only_folder_is_read(tmp_path, make_read_only, checkpoint, readonly):
    rows = {f"k{i}": gen(f"answer {i} {ODD_TEXT}") for i in range(3)}
    path = wal_cache(tmp_path / "ci-cache", rows, checkpoint=checkpoint)
    files = [p for p in path.parent.iterdir()]
    make_read_only(*files, path.parent)
    cache = GenerationCache(path.parent, readonly=readonly)
    assert all(cache.get(key) == generation for key, generation in rows.items())
    assert cache.missing([*rows, "new"]) == {"new"}
    assert not cache.notes  # nothing lost yet, nothing to say
    cache.put_many([("new", gen("fresh"))])
    assert cache.get("new") == gen("fresh")
    assert len(cache.notes) == (0 if readonly else 1)
    if not readonly:
        assert "could not be written" in cache.notes[0] and str(cache.path) in cache.notes[0]
    cache.close()
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(p.name for p in files)


def test_a_read_only_file_in_a_writable_folder_is_read(tmp_path, make_read_only):
    path = wal_cache(tmp_path / "cache", {"k": gen()})
    make_read_only(path)
    cache = GenerationCache(path.parent)
    assert cache.get("k") == gen()
    cache.put_many([("new", gen("fresh"))])
    assert cache.get("new") == gen("fresh") and len(cache.notes) == 1


# -- through the plugin -------------------------------------------------------------------------------------------
#: The shared counting backend, plus a disk that fills up: the cache file may grow by CACHE_SPARE_PAGES pages.
COUNTING_BACKEND = COUNTING_BACKEND_BASE + '''
import pytest_toolbench.run.cache as toolbench_cache


if os.environ.get("CACHE_SPARE_PAGES"):  # a disk that fills up: the cache file may grow by this many pages
    _open_writable = toolbench_cache.GenerationCache._open_writable

    def _small_disk(self, on_corrupt):
        _open_writable(self, on_corrupt)
        if self._db is not None:
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._db.execute(f"PRAGMA max_page_count = {pages + int(os.environ['CACHE_SPARE_PAGES'])}")

    toolbench_cache.GenerationCache._open_writable = _small_disk
'''


@pytest.fixture
def counting(pytester: pytest.Pytester, monkeypatch):
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    pytester.syspathinsert()
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + "\n" + textwrap.dedent(COUNTING_BACKEND))
    log = pytester.path / "calls.log"
    monkeypatch.setenv("COUNTING_LOG", str(log))
    return pytester, log


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data", "data", "-p", "no:randomly",
                                         "--toolbench-cache", "cache", *args)


def engine(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return run(pytester, "--toolbench-backend", "counting", *args)


def batches(log: Path) -> list[int]:
    return [json.loads(line)["n"] for line in log.read_text().splitlines()] if log.exists() else []


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


def rows_in(path: Path) -> int:
    with sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]


@pytest.mark.parametrize("spoil", [_truncated, _garbage], ids=["truncated", "garbage"])
def test_plugin_moves_a_corrupt_cache_aside_and_runs(counting, spoil):
    echo, log = counting
    path = spoil(echo.path / "cache").resolve()
    result = engine(echo)
    result.assert_outcomes(passed=2, failed=1)
    assert batches(log) == [3]
    lines = [line for line in result.stdout.lines if "is corrupt" in line]
    assert len(lines) == 1 and str(path) in lines[0] and f"{path.name}.corrupt-" in lines[0]
    assert "Traceback" not in output(result) and "DatabaseError" not in output(result)
    engine(echo).assert_outcomes(passed=2, failed=1)  # the fresh cache serves the next run
    assert batches(log) == [3]


@pytest.mark.parametrize("spoil", [_truncated, _garbage], ids=["truncated", "garbage"])
@pytest.mark.parametrize("workers", [[], XDIST], ids=["serial", "xdist"])
def test_plugin_offline_with_a_corrupt_cache_fails_once(counting, spoil, workers):
    echo, log = counting
    path = spoil(echo.path / "cache").resolve()
    result = engine(echo, "--toolbench-offline", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = output(result)
    assert text.count(f"the generation cache {path} is corrupt") == 1
    assert "--toolbench-offline" in text and "Traceback" not in text
    assert "no cached generation" not in text and "PASSED" not in text  # stopped before any case was scored
    assert path.exists() and not batches(log)


@pytest.mark.parametrize("workers", [[], XDIST], ids=["serial", "xdist"])
def test_plugin_scores_a_read_only_ci_cache_offline(counting, make_read_only, workers):
    echo, log = counting
    engine(echo).assert_outcomes(passed=2, failed=1)
    folder = echo.path / "cache"
    make_read_only(*folder.iterdir(), folder)
    result = engine(echo, "--toolbench-offline", *workers)
    result.assert_outcomes(passed=2, failed=1)
    assert batches(log) == [3] and "Traceback" not in output(result)


@pytest.mark.parametrize("workers", [[], XDIST], ids=["serial", "xdist"])
def test_plugin_generates_into_memory_when_the_cache_is_read_only(counting, make_read_only, workers):
    echo, log = counting
    engine(echo, "-k", "echo_0").assert_outcomes(passed=1)
    folder = echo.path / "cache"
    make_read_only(*folder.iterdir(), folder)
    result = engine(echo, *workers)
    result.assert_outcomes(passed=2, failed=1)  # the two new answers were scored although not saved
    assert batches(log) == [1, 2]
    notes = [line for line in result.stdout.lines if "could not be written" in line]
    assert len(notes) == 1 and str(CacheLayout.at(folder).generations.resolve()) in notes[0]
    assert "2 kept in memory only" in result.stdout.str()
    assert rows_in(CacheLayout.at(folder).generations) == 1


def test_plugin_keeps_scoring_when_the_disk_fills_during_generation(counting, monkeypatch):
    echo, log = counting
    monkeypatch.setenv("COUNTING_PAD", "6000")
    monkeypatch.setenv("CACHE_SPARE_PAGES", "3")
    result = engine(echo)
    result.assert_outcomes(passed=2, failed=1)
    notes = [line for line in result.stdout.lines if "could not be written" in line]
    assert len(notes) == 1 and "database or disk is full" in notes[0]
    saved = rows_in(CacheLayout.at(echo.path / "cache").generations)
    assert 1 <= saved < 3  # what was committed before the disk filled stays committed
    assert f"{3 - saved} kept in memory only" in result.stdout.str()
    monkeypatch.delenv("CACHE_SPARE_PAGES")
    engine(echo).assert_outcomes(passed=2, failed=1)
    assert batches(log) == [3, 3 - saved]  # only what was not saved is generated again


# -- the openai backend ---------------------------------------------------------------------------------------------
def _echo_server(raw_bytes: bool) -> ScriptedServer:
    """Echoes correctly, except that 'bye' comes back with a lone surrogate: JSON-escaped (what json.dumps and
    most servers send) or as raw CESU-8 bytes (what some servers write)."""

    def answer(body):
        text = body["messages"][-1]["content"].removeprefix("Echo this: ")
        if text == "bye":
            text = "bye\ud800"
        content = json.dumps({"name": "echo", "arguments": {"text": text}}, ensure_ascii=False)
        payload = completion(content)
        if raw_bytes:
            return 200, json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass"), {}
        return 200, payload, {}

    return ScriptedServer(default=answer)


@pytest.mark.parametrize("workers", [[], XDIST], ids=["serial", "xdist"])
@pytest.mark.parametrize("raw_bytes", [False, True], ids=["escaped", "raw-bytes"])
def test_openai_output_with_a_lone_surrogate_is_stored_and_scored(counting, raw_bytes, workers):
    echo, _ = counting
    with _echo_server(raw_bytes) as server:
        args = ("--toolbench-backend", "openai", "--toolbench-base-url", server.url, "--model", "m", *workers)
        result = run(echo, *args)
        result.assert_outcomes(passed=2, failed=1)
        assert "Traceback" not in output(result)
        assert len(server.bodies) == 3  # no retries: a surrogate is an answer, not a transport error
        offline = run(echo, *args, "--toolbench-offline")
        offline.assert_outcomes(passed=2, failed=1)  # read back from the cache
        assert len(server.bodies) == 3
    with sqlite3.connect(CacheLayout.at(echo.path / "cache").generations) as db:
        texts = [json.loads(row[0])["text"] for row in db.execute("SELECT generation FROM generations")]
    assert '{"name": "echo", "arguments": {"text": "bye\ud800"}}' in texts


def test_decode_body_keeps_what_the_server_sent():
    assert _decode_body("é\U0001f600".encode()) == "é\U0001f600"
    assert _decode_body(b'"\xed\xa0\x80"') == '"\ud800"'
    assert _decode_body(b'"\xff"').encode("utf-8", "surrogateescape") == b'"\xff"'


def _endpoint_options(**cache) -> RunOptions:
    return RunOptions(backend="openai", model="m", backend_options=OpenAIOptions(base_url="http://127.0.0.1:9/v1"),
                      cache=CacheOptions(**cache))


def test_openai_backend_commits_every_n_as_asked():
    assert OpenAIEndpointBackend.from_options(_endpoint_options()).chunk_size == 64
    backend = OpenAIEndpointBackend.from_options(_endpoint_options(commit_every=5))
    assert backend.chunk_size == 5
    with ScriptedServer() as server:
        backend.base_url = server.url
        backend.api_key_env = None
        chunks: list[int] = []
        tasks = [Task(Case(str(i), "c", {}, suite="s"), Request(({"role": "user", "content": str(i)},)), 0)
                 for i in range(12)]
        backend.generate(tasks, on_chunk=lambda chunk: chunks.append(len(chunk)))
    assert chunks == [5, 5, 2]
