"""Run-time downloads of files a suite may not redistribute (``download: true`` in ``data.files``).

A local HTTP server plays the upstream repository (``/raw/...``) and GitHub's LFS media host (``/media/...``):
a good file, a corrupted one, a Git LFS pointer with its object, and 404s. The checks: a missing file is fetched,
verified (git blob as ``git hash-object`` prints it, or sha256), cached, and seen by the scorer at ``data_dir/<rel>``;
a wrong or unreachable file is one error naming the file, the URL, the checksums and where to put it by hand, and
nothing wrong is kept; a file present in the user's folder is verified instead of downloaded.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import REPO, XDIST
from pytest_toolbench import data as toolbench_data
from pytest_toolbench.data import lfs
from pytest_toolbench.data.downloads import NO_DOWNLOAD_ENV
from pytest_toolbench.data.hashes import HashCache, file_digests, git_blob_of, manifest_sha256
from pytest_toolbench.data.lfs import lfs_media_url, parse_lfs_pointer
from pytest_toolbench.data.verification import UNVERIFIED_FIX, seal, verify
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.run.cache_layout import CacheLayout

CASES = b'{"id": "q0", "q": "first"}\n{"id": "q1", "q": "second"}\n'
ANSWERS = b'{"q0": "alpha", "q1": "beta"}\n'
CORRUPT = ANSWERS.replace(b"beta", b"betA")  # what a broken mirror serves in place of ANSWERS
BIG = b"".join(b'{"row": %d, "text": "an LFS object"}\n' % i for i in range(300))
POINTER = b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (
    hashlib.sha256(BIG).hexdigest().encode(), len(BIG))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob(data: bytes) -> str:
    """Independent of the plugin: what git itself stores (checked against ``git hash-object`` below)."""
    return hashlib.sha1(b"blob " + str(len(data)).encode() + b"\x00" + data).hexdigest()


@pytest.fixture
def upstream(monkeypatch):
    """127.0.0.1 only; ``files`` maps a URL path to the bytes served (anything else: 404); ``requests`` logs paths."""
    files = {"/raw/data/answers.json": ANSWERS, "/raw/data/corrupt.json": CORRUPT, "/raw/data/big.jsonl": POINTER,
             "/media/data/big.jsonl": BIG}
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            body = files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    # This host's LFS objects, as GitHub's raw -> media.githubusercontent.com rule does it for github.com.
    monkeypatch.setattr(lfs, "LFS_MEDIA", [(rf"^{re.escape(url)}raw/(?P<path>.+)$", url + "media/{path}")])
    monkeypatch.delenv(NO_DOWNLOAD_ENV, raising=False)
    yield SimpleNamespace(url=url, files=files, requests=requests)
    server.shutdown()
    server.server_close()


def closed_port_url() -> str:
    """A URL nothing answers at (a port just released): "no network" without waiting for a timeout."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/raw/"


def write_suite(folder: Path, base_url: str, files: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "name": "dl", "title": "Downloads", "scorer": "scorer",
        "data": {"folder": "dl", "samples": "samples",
                 "upstream": {"repository": "example/dl", "commit": "0123456789abcdef", "base_url": base_url},
                 "files": files},
        "categories": [{"name": "q"}], "generation": {"max_tokens": 512},
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return folder / "suite.yaml"


def user_data(root: Path) -> Path:
    """A user's data folder that has the redistributable file only."""
    (root / "dl").mkdir(parents=True)
    (root / "dl" / "cases.jsonl").write_bytes(CASES)
    return root


def answers_entry(**pins) -> dict:
    return {"source": "data/answers.json", "download": True, **(pins or {"git_blob": git_blob(ANSWERS)})}


def resolve(definition, data_dir, cache: Path, allow=True, hashes=None):
    layout = CacheLayout.at(cache)
    return toolbench_data.resolve(definition, str(data_dir) if data_dir else None, "--toolbench-data",
                                  layout.downloads, allow, hashes or HashCache(layout.data_hashes))


# -- git blob ids ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [b"", b"hello\n", b"\x00\x01binary\xff" * 1000, BIG, POINTER],
                         ids=["empty", "text", "binary", "big", "pointer"])
def test_git_blob_is_what_git_hash_object_prints(tmp_path, content):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    path = tmp_path / "file"
    path.write_bytes(content)
    printed = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert git_blob_of(content) == printed.strip() == git_blob(content)
    assert file_digests(path) == (sha256(content), printed.strip())
    hashes = HashCache(tmp_path / "h.json")
    assert hashes.git_blob(path) == printed.strip()
    hashes.save()
    again = HashCache(tmp_path / "h.json")
    assert again.git_blob(path) == printed.strip() and again.hashed == 0  # remembered by content, not re-read


def test_lfs_pointers_are_recognised_and_nothing_else():
    pointer = parse_lfs_pointer(POINTER)
    assert pointer is not None and pointer.oid == sha256(BIG) and pointer.size == len(BIG)
    assert parse_lfs_pointer(BIG) is None
    assert parse_lfs_pointer(POINTER.replace(b"sha256:", b"sha1:")) is None
    assert parse_lfs_pointer(b"version https://git-lfs.github.com/spec/v1\nsize 3\n") is None
    assert lfs_media_url("https://raw.githubusercontent.com/o/r/0123abc/wild/data/x.jsonl") == \
        "https://media.githubusercontent.com/media/o/r/0123abc/wild/data/x.jsonl"
    assert lfs_media_url("https://example.org/x.jsonl") is None


# -- the suite definition --------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", [
    {"source": "a.json", "download": True},  # no pin
    {"git_blob": "ab" * 20, "source": "a.json"},  # a git blob alone pins a downloaded file only
    {"git_blob": "ab" * 19, "source": "a.json", "download": True},  # not 40 hex
    {"git_blob": "ab" * 20, "source": "a.json", "download": False},
    {"sha256": "0" * 64, "source": "a.json", "download": True, "mirror": "x"},
])
def test_malformed_download_entries_are_refused_naming_the_field(tmp_path, entry):
    path = write_suite(tmp_path, "https://example.invalid/", {"a.json": entry})
    with pytest.raises(DataError) as error:
        load_definition(path)
    assert "field 'data/files/a.json'" in str(error.value)


def test_download_entries_are_not_expected_in_the_data_folder(tmp_path):
    definition = load_definition(write_suite(tmp_path, "https://example.invalid/base/", {
        "cases.jsonl": sha256(CASES), "x/answers.json": answers_entry(),
        "y.json": {"sha256": "1" * 64, "source": "https://elsewhere.invalid/y.json", "download": True}}))
    assert list(definition.data_files) == ["cases.jsonl"]
    entries = {e.rel: e for e in toolbench_data.download_entries(definition)}
    assert entries["x/answers.json"].url == "https://example.invalid/base/data/answers.json"
    assert entries["x/answers.json"].pin == git_blob(ANSWERS) and entries["x/answers.json"].sha256 is None
    assert entries["y.json"].url == "https://elsewhere.invalid/y.json" and entries["y.json"].pin == "1" * 64


# -- fetching into the user's data folder ----------------------------------------------------------------------
def test_a_missing_file_is_fetched_verified_cached_and_seen_at_data_dir(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "cases.jsonl": sha256(CASES), "extra/answers.json": answers_entry()}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    source = resolve(definition, data, cache)
    assert upstream.requests == ["/raw/data/answers.json"]
    assert source.kind == "folder" and source.downloaded == ("extra/answers.json",)
    assert (source.path / "extra" / "answers.json").read_bytes() == ANSWERS  # where the scorer looks
    assert (source.path / "cases.jsonl").read_bytes() == CASES  # the user's own file, through the overlay
    assert source.path.parent == cache / "data-overlay" and source.given_folder == str(data / "dl")
    assert "extra/answers.json (downloaded)" in source.description
    cached = cache / "downloads" / "dl" / git_blob(ANSWERS) / "extra" / "answers.json"
    assert cached.read_bytes() == ANSWERS and os.path.realpath(source.path / "extra" / "answers.json") == str(cached)
    assert not (data / "dl" / "extra").exists()  # the user's folder is never written
    hashes = HashCache(cache / "data-sha256.json")
    verified, digests = verify(source, definition, hashes, allow_unverified=False)
    assert digests == {"cases.jsonl": sha256(CASES), "extra/answers.json": sha256(ANSWERS)}
    with toolbench_data.recording_reads() as read:
        (verified.path / "extra" / "answers.json").read_bytes()
        (verified.path / "cases.jsonl").read_bytes()
    sealed = seal(verified, definition, digests, read, hashes)
    assert sealed.data_sha256 == manifest_sha256(digests) and sealed.unlisted == ()
    assert sealed.to_json()["downloaded"] == ["extra/answers.json"]
    hashes.save()

    # A second run (another process: a fresh digest cache object) fetches nothing and hashes nothing.
    upstream.requests.clear()
    again_hashes = HashCache(cache / "data-sha256.json")
    again = resolve(definition, data, cache, allow=False, hashes=again_hashes)
    assert upstream.requests == [] and again_hashes.hashed == 0
    assert again.path == source.path and "extra/answers.json (cached)" in again.description
    assert verify(again, definition, again_hashes, False)[1] == digests

    # A cached copy that changed is not trusted: fetched again.
    os.chmod(cached, 0o644)
    cached.write_bytes(CORRUPT)
    third = resolve(definition, data, cache)
    assert upstream.requests == ["/raw/data/answers.json"] and cached.read_bytes() == ANSWERS
    assert (third.path / "extra" / "answers.json").read_bytes() == ANSWERS


def test_files_the_loader_reads_beside_the_listed_ones_are_still_reported_through_the_overlay(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "cases.jsonl": sha256(CASES), "answers.json": answers_entry()}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    (data / "dl" / "sub").mkdir()
    (data / "dl" / "sub" / "notes.txt").write_text("unlisted")
    hashes = HashCache(None)
    source, digests = verify(resolve(definition, data, cache, hashes=hashes), definition, hashes, False)
    assert (source.path / "sub").is_dir() and not (source.path / "sub").is_symlink()  # walkable without links
    assert [p.name for p in source.path.rglob("*.txt")] == ["notes.txt"]
    with toolbench_data.recording_reads() as read:
        (source.path / "sub" / "notes.txt").read_text()
        (source.path / "answers.json").read_bytes()
    sealed = seal(source, definition, digests, read, hashes)
    assert sealed.unlisted == ("sub/notes.txt",)
    assert sealed.data_sha256 == manifest_sha256({**digests, "sub/notes.txt": sha256(b"unlisted")})


def test_a_corrupted_download_is_one_error_naming_file_url_expected_and_got_and_is_not_kept(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "cases.jsonl": sha256(CASES),
        "answers.json": {"git_blob": git_blob(ANSWERS), "source": "data/corrupt.json", "download": True}}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    with pytest.raises(DataError) as error:
        resolve(definition, data, cache)
    message = str(error.value)
    assert message.startswith(f"{data / 'dl' / 'answers.json'}: missing, and the download from "
                              f"{upstream.url}raw/data/corrupt.json was discarded")
    assert f"git blob {git_blob(CORRUPT)} (sha256 {sha256(CORRUPT)})" in message  # got
    assert f"not the git blob {git_blob(ANSWERS)} pinned" in message  # expected
    assert f"save the file as {data / 'dl' / 'answers.json'}" in message and f"--toolbench-data={data}" in message
    kept = [p for p in (cache / "downloads").rglob("*") if p.is_file() and p.name not in (".lock",)]
    assert kept == []  # no partial file, no record
    assert not (cache / "data-overlay").exists()


def test_a_sha256_pin_is_checked_too(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "a_good.json": {"sha256": sha256(ANSWERS), "source": upstream.url + "raw/data/answers.json", "download": True},
        "b_bad.json": {"sha256": sha256(ANSWERS), "source": "data/corrupt.json", "download": True}}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    with pytest.raises(DataError) as error:
        resolve(definition, data, cache)
    assert f"the file downloaded has sha256 {sha256(CORRUPT)}, not the sha256 {sha256(ANSWERS)} pinned" in \
        str(error.value) and str(error.value).startswith(str(data / "dl" / "b_bad.json"))
    assert (cache / "downloads" / "dl" / sha256(ANSWERS) / "a_good.json").read_bytes() == ANSWERS  # good one kept
    assert not (cache / "downloads" / "dl" / sha256(ANSWERS) / "b_bad.json").exists()


def test_a_404_and_no_network_run_the_samples_saying_where_to_put_the_file_by_hand(tmp_path, upstream):
    """A file that cannot be fetched costs its suite the real data (it runs on its samples, loudly), not the run."""
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    hand = data / "dl" / "extra" / "gone.json"
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "extra/gone.json": {"git_blob": "1" * 40, "source": "data/gone.json", "download": True},
        "later.json": {"git_blob": "2" * 40, "source": "data/later.json", "download": True}}))
    source = resolve(definition, data, cache)
    message = source.description
    assert source.kind == "samples" and source.path == definition.samples_dir and "SHIPPED SAMPLES ONLY" in message
    assert f"downloading it from {upstream.url}raw/data/gone.json failed: HTTP error 404" in message
    assert f"expected git blob {'1' * 40}" in message and "not tried: later.json" in message
    assert f"save the file as {hand} (DIR/dl/extra/gone.json with --toolbench-data={data})" in message

    offline = load_definition(write_suite(tmp_path / "suite", closed_port_url(), {
        "extra/gone.json": {"git_blob": "1" * 40, "source": "data/gone.json", "download": True}}))
    source = resolve(offline, data, cache)
    assert source.kind == "samples"
    assert "failed: no connection (" in source.description and f"save the file as {hand}" in source.description

    # Supplied by hand: verified, not fetched.
    hand.parent.mkdir()
    hand.write_bytes(ANSWERS)
    by_hand = load_definition(write_suite(tmp_path / "suite", closed_port_url(), {
        "extra/gone.json": {"git_blob": git_blob(ANSWERS), "source": "data/gone.json", "download": True}}))
    source = resolve(by_hand, data, cache)
    assert source.path == data / "dl" and source.downloaded == ()
    assert verify(source, by_hand, HashCache(None), False)[1] == \
        {"extra/gone.json": sha256(ANSWERS)}


@pytest.mark.parametrize("how", ["option", "environment"])
def test_downloads_turned_off_run_the_samples_with_the_hand_path(tmp_path, upstream, monkeypatch, how):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/",
                                             {"answers.json": answers_entry()}))
    data = user_data(tmp_path / "data")
    if how == "environment":
        monkeypatch.setenv(NO_DOWNLOAD_ENV, "1")
    source = resolve(definition, data, tmp_path / "cache", allow=how != "option")
    assert source.kind == "samples"
    message = source.description
    assert "missing, and downloads are turned off (--toolbench-no-download or TOOLBENCH_NO_DOWNLOAD)" in message
    assert f"{upstream.url}raw/data/answers.json" in message and git_blob(ANSWERS) in message
    assert f"save the file as {data / 'dl' / 'answers.json'}" in message
    assert upstream.requests == []


# -- Git LFS ---------------------------------------------------------------------------------------------------
def test_an_lfs_pointer_is_followed_to_its_object_and_checked_against_it(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "big.jsonl": {"git_blob": git_blob(POINTER), "source": "data/big.jsonl", "download": True}}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    source = resolve(definition, data, cache)
    assert upstream.requests == ["/raw/data/big.jsonl", "/media/data/big.jsonl"]
    assert (source.path / "big.jsonl").read_bytes() == BIG
    assert source.lfs_pointers == (("big.jsonl", sha256(BIG), len(BIG)),)
    hashes = HashCache(None)
    assert verify(source, definition, hashes, False)[1] == {"big.jsonl": sha256(BIG)}
    upstream.requests.clear()
    again = resolve(definition, data, cache, allow=False)  # cached with its pointer
    assert upstream.requests == [] and again.lfs_pointers == source.lfs_pointers
    assert verify(again, definition, HashCache(None), False)[1] == {"big.jsonl": sha256(BIG)}


def test_an_lfs_object_that_differs_from_its_pointer_is_refused(tmp_path, upstream):
    upstream.files["/media/data/big.jsonl"] = BIG[:-10] + b"corrupted\n"
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "big.jsonl": {"git_blob": git_blob(POINTER), "source": "data/big.jsonl", "download": True}}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    with pytest.raises(DataError) as error:
        resolve(definition, data, cache)
    message = str(error.value)
    assert f"the download from {upstream.url}media/data/big.jsonl was discarded" in message
    assert f"not the sha256 {sha256(BIG)} ({len(BIG)} bytes) of its pointer" in message
    assert not any(p.name == "big.jsonl" for p in (cache / "downloads").rglob("*"))


def test_lfs_content_supplied_by_hand_is_checked_against_the_pinned_pointer(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "big.jsonl": {"git_blob": git_blob(POINTER), "source": "data/big.jsonl", "download": True}}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    (data / "dl" / "big.jsonl").write_bytes(BIG)
    hashes = HashCache(None)
    # Before resolve (the run's early check), the pointer is unknown: the file is neither passed nor failed.
    early, _ = verify(toolbench_data.DataSource(data / "dl", "folder", "x"), definition, hashes, False)
    assert early.unverified == ("big.jsonl",) and "UNCHECKED: big.jsonl" in early.description
    # Downloads off: the pointer cannot be learned, so the content cannot be vouched for.
    refused = resolve(definition, data, cache, allow=False)
    with pytest.raises(DataError) as error:
        verify(refused, definition, hashes, False)
    assert "may name its Git LFS pointer, which could not be fetched" in str(error.value)
    assert str(error.value).startswith(str(data / "dl" / "big.jsonl"))
    source = resolve(definition, data, cache)  # learns the pointer
    assert source.path == data / "dl" and source.lfs_pointers == (("big.jsonl", sha256(BIG), len(BIG)),)
    assert verify(source, definition, hashes, False)[1] == {"big.jsonl": sha256(BIG)}
    (data / "dl" / "big.jsonl").write_bytes(BIG + b"\n")  # edited
    with pytest.raises(DataError) as error:
        verify(resolve(definition, data, cache), definition, hashes, False)
    assert f"not the Git LFS object (sha256 {sha256(BIG)}" in str(error.value)
    (data / "dl" / "big.jsonl").write_bytes(POINTER)  # the pointer itself is not the data
    with pytest.raises(DataError) as error:
        verify(resolve(definition, data, cache), definition, hashes, False)
    assert f"the file is the Git LFS pointer (git blob {git_blob(POINTER)}), not the file it points to" in \
        str(error.value)


def test_a_present_file_that_differs_is_a_mismatch_unless_unverified_is_allowed(tmp_path, upstream):
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "cases.jsonl": sha256(CASES), "answers.json": answers_entry()}))
    data, cache = user_data(tmp_path / "data"), tmp_path / "cache"
    (data / "dl" / "answers.json").write_bytes(CORRUPT)
    hashes = HashCache(None)
    source = resolve(definition, data, cache)
    with pytest.raises(DataError) as error:
        verify(source, definition, hashes, False)
    message = str(error.value)
    assert message.startswith(f"{data / 'dl' / 'answers.json'}: the file has git blob {git_blob(CORRUPT)}")
    assert f"not the git blob {git_blob(ANSWERS)}" in message and UNVERIFIED_FIX in message
    assert "LFS" not in message  # upstream serves the pinned blob itself (fetched once to tell): a plain mismatch
    assert upstream.requests == ["/raw/data/answers.json"]
    allowed, _ = verify(source, definition, hashes, True)
    assert allowed.unverified == ("answers.json",) and "UNVERIFIED: 1 of 2 files differ" in allowed.description
    # With a sha256 pin the content is decided locally: nothing is fetched.
    upstream.requests.clear()
    pinned = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "cases.jsonl": sha256(CASES),
        "answers.json": answers_entry(git_blob=git_blob(ANSWERS), sha256=sha256(ANSWERS))}))
    with pytest.raises(DataError) as error:
        verify(resolve(pinned, data, cache), pinned, hashes, False)
    assert f"the file has sha256 {sha256(CORRUPT)}, not the git blob {git_blob(ANSWERS)} and sha256" in str(error.value)
    assert upstream.requests == []


# -- no data folder at all -------------------------------------------------------------------------------------
def test_without_a_data_folder_the_whole_suite_is_downloaded_or_else_the_samples_say_why(tmp_path, upstream):
    upstream.files["/raw/data/cases.jsonl"] = CASES
    suite = tmp_path / "suite"
    (suite / "samples").mkdir(parents=True)
    (suite / "samples" / "cases.jsonl").write_bytes(CASES)
    files = {"cases.jsonl": {"sha256": sha256(CASES), "source": "data/cases.jsonl"},
             "answers.json": answers_entry(), "big.jsonl": {"git_blob": git_blob(POINTER),
                                                            "source": "data/big.jsonl", "download": True}}
    definition = load_definition(write_suite(suite, upstream.url + "raw/", files))
    cache = tmp_path / "cache"
    refused = resolve(definition, None, cache, allow=False)
    assert refused.is_sample and "SHIPPED SAMPLES ONLY (no data folder given; download unavailable: downloads " \
                                 "are turned off" in refused.description
    source = resolve(definition, None, cache)
    assert source.kind == "download" and "(downloaded;" in source.description
    assert {p: (source.path / p).read_bytes() for p in files} == \
        {"cases.jsonl": CASES, "answers.json": ANSWERS, "big.jsonl": BIG}
    assert source.data_sha256 == manifest_sha256(
        {"cases.jsonl": sha256(CASES), "answers.json": sha256(ANSWERS), "big.jsonl": sha256(BIG)})
    upstream.requests.clear()
    again = resolve(definition, None, cache, allow=False)
    assert again.path == source.path and "(cached;" in again.description and upstream.requests == []
    upstream.files.pop("/raw/data/answers.json")
    other = load_definition(write_suite(suite, upstream.url + "raw/", {
        **files, "answers.json": answers_entry(git_blob="3" * 40)}))
    broken = resolve(other, None, cache)
    assert broken.is_sample and "answers.json: HTTP error 404" in broken.description


# -- end to end, through pytest --------------------------------------------------------------------------------
SCORER = '''\
import json

from pytest_toolbench.contract.data_files import load_json, load_jsonl
from pytest_toolbench.contract.suite import Case, Metric, Request, Verdict


def load_cases(data_dir, definition):
    answers = load_json(data_dir / "extra" / "answers.json")
    rows = (data_dir / "big.jsonl").read_text().count("\\n")
    return [Case(row["id"], "q", {"answer": answers[row["id"]], "rows": rows})
            for row in load_jsonl(data_dir / "cases.jsonl")]


def build_request(case):
    return Request(messages=[{"role": "user", "content": case.case_id}])


def gold_output(case):
    return json.dumps([case.payload["answer"], case.payload["rows"]])


def score(case, generation):
    expected = [case.payload["answer"], 300]  # the real big.jsonl has 300 rows, the sample 1
    got = json.loads(generation.text)
    return Verdict(got == expected, None if got == expected else "wrong", f"expected {expected}, got {got}")


def aggregate(results):
    passed = sum(r.passed for r in results)
    return [Metric("accuracy", passed / len(results), passed, len(results), group="aggregate")]
'''


@pytest.fixture
def project(pytester: pytest.Pytester, upstream, monkeypatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))  # this checkout
    suite = pytester.path / "suites" / "dl"
    (suite / "samples" / "extra").mkdir(parents=True)
    (suite / "samples" / "cases.jsonl").write_bytes(CASES)
    (suite / "samples" / "extra" / "answers.json").write_bytes(ANSWERS)
    (suite / "samples" / "big.jsonl").write_text('{"row": 0}\n')
    (suite / "scorer.py").write_text(SCORER)
    write_suite(suite, upstream.url + "raw/", {
        "cases.jsonl": sha256(CASES), "extra/answers.json": answers_entry(),
        "big.jsonl": {"git_blob": git_blob(POINTER), "source": "data/big.jsonl", "download": True}})
    user_data(pytester.path / "data")
    # The subprocess's LFS media rule for this server (GitHub's is built in).
    (pytester.path / "conftest.py").write_text(
        "from pytest_toolbench.data import lfs\n"
        f"lfs.LFS_MEDIA[:] = {lfs.LFS_MEDIA!r}\n")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-cache=cache", "-p", "no:randomly",
                                         "-p", "no:cacheprovider", *args)


@pytest.mark.parametrize("workers", [[], XDIST], ids=["single", "xdist"])
def test_end_to_end_the_scorer_reads_downloaded_files_and_a_second_run_fetches_nothing(project, upstream, workers):
    result = run(project, "--toolbench-data=data", "--toolbench-json=out.json", *workers)
    result.assert_outcomes(passed=2)  # gold needs the real answers.json and the 300-row LFS object
    # Once, also when two workers resolve the suite at the same time.
    assert sorted(upstream.requests) == ["/media/data/big.jsonl", "/raw/data/answers.json", "/raw/data/big.jsonl"]
    source = json.loads((project.path / "out.json").read_text())["suites"]["dl"]["data_source"]
    assert source["kind"] == "folder" and sorted(source["downloaded"]) == ["big.jsonl", "extra/answers.json"]
    assert source["data_sha256"] == manifest_sha256(
        {"cases.jsonl": sha256(CASES), "extra/answers.json": sha256(ANSWERS), "big.jsonl": sha256(BIG)})
    upstream.requests.clear()
    run(project, "--toolbench-data=data", "--toolbench-no-download").assert_outcomes(passed=2)
    assert upstream.requests == []


def test_end_to_end_a_failed_download_is_one_clear_error(project, upstream):
    upstream.files["/raw/data/answers.json"] = CORRUPT
    result = run(project, "--toolbench-data=data")
    assert result.ret != 0
    output = result.stdout.str() + result.stderr.str()
    hand = project.path / "data" / "dl" / "extra" / "answers.json"
    lines = [line for line in output.splitlines() if "pytest-toolbench:" in line and "discarded" in line]
    assert len(lines) == 1, output
    assert all(f"{upstream.url}raw/data/answers.json" in line and git_blob(ANSWERS) in line
               and git_blob(CORRUPT) in line and f"save the file as {hand}" in line for line in lines)
    assert "Traceback" not in output and " passed" not in output
    assert not (project.path / "cache" / "downloads" / "dl" / git_blob(ANSWERS) / "extra").exists()


def test_end_to_end_without_data_or_network_the_samples_run_loudly(project, upstream):
    result = run(project, "--toolbench-no-download", "--toolbench-json=out.json")
    assert upstream.requests == []
    result.assert_outcomes(failed=2)  # the sample's big.jsonl has 1 row: samples are not the benchmark
    source = json.loads((project.path / "out.json").read_text())["suites"]["dl"]["data_source"]
    assert source["kind"] == "samples" and "SHIPPED SAMPLES ONLY" in source["description"]


def test_a_placeholder_pin_is_never_fetched_and_says_how_to_run_with_a_copy(tmp_path, upstream):
    """A suite whose upstream publishes no digest (T-Eval's Hub files) pins zeros: nothing is fetched, the suite runs
    on its samples, and the message says how to use a copy saved by hand."""
    definition = load_definition(write_suite(tmp_path / "suite", upstream.url + "raw/", {
        "answers.json": {"sha256": "0" * 64, "source": "data/answers.json", "download": True}}))
    source = resolve(definition, user_data(tmp_path / "data"), tmp_path / "cache")
    assert source.kind == "samples" and upstream.requests == []
    assert "placeholder checksum" in source.description and "--toolbench-data-unverified" in source.description


OTHER_SUITE_YAML = """\
name: other
title: Another suite
scorer: scorer
data:
  folder: other
  samples: samples
categories:
  - name: other_q
generation:
  max_tokens: 512
"""

OTHER_SCORER = '''
from pytest_toolbench.contract.suite import Case, Metric, Request, Verdict


def load_cases(data_dir, definition):
    return [Case(f"o{i}", "other_q", {}) for i in range(2)]


def build_request(case):
    return Request(messages=[{"role": "user", "content": case.case_id}])


def gold_output(case):
    return "ok"


def score(case, generation):
    return Verdict(generation.text == "ok", None if generation.text == "ok" else "wrong", "")


def aggregate(results):
    passed = sum(r.passed for r in results)
    return [Metric("accuracy", passed / len(results), passed, len(results), group="aggregate")]
'''


@pytest.mark.parametrize("data", [["--toolbench-data=data"], []], ids=["data-folder", "no-data-folder"])
@pytest.mark.parametrize("workers", [[], XDIST], ids=["single", "xdist"])
@pytest.mark.parametrize("selection", [["-k", "other"], ["-m", "other"], ["-k", "not dl"], ["-m", "other_q"]],
                         ids=lambda args: " ".join(args))
def test_a_deselected_suite_costs_no_download(project, upstream, data, workers, selection):
    other = project.path / "suites" / "other"
    (other / "samples").mkdir(parents=True)
    (other / "suite.yaml").write_text(OTHER_SUITE_YAML)
    (other / "scorer.py").write_text(OTHER_SCORER)
    result = run(project, *data, *workers, *selection)
    result.assert_outcomes(passed=2)
    assert upstream.requests == []  # the dl suite's files were neither fetched nor asked for
    assert not (project.path / "cache" / "downloads").exists()
    # selected, the same suite asks for what it needs, as before
    run(project, *data, "-k", "dl")
    assert upstream.requests


def test_a_case_id_selects_a_suite_whose_data_are_at_hand_and_never_starts_a_download(project, upstream):
    # nothing cached yet: only a case id could match, and finding out would take a download, so the suite is left out
    result = run(project, "--toolbench-data=data", "-k", "q0", "--collect-only", "-q")
    assert "suites/dl/suite.yaml::q0" not in result.stdout.str() and upstream.requests == []
    # by its suite's name, it is selected and downloaded as usual; then its case index is at hand, and the case id
    # alone selects it, with no request
    run(project, "--toolbench-data=data", "-k", "dl and q0").assert_outcomes(passed=1)
    assert upstream.requests
    upstream.requests.clear()
    run(project, "--toolbench-data=data", "-k", "q0").assert_outcomes(passed=1)
    assert upstream.requests == []
