"""Data resolution: a given folder, a verified download at a pinned commit, or the samples (said loudly)."""

from __future__ import annotations

import hashlib
import http.server
import threading
from functools import partial
from pathlib import Path

import pytest
import yaml

from pytest_toolbench.data import datasource
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError

UPSTREAM = '{"id": "echo_0", "text": "from upstream"}\n'


@pytest.fixture
def upstream_server(tmp_path):
    """A local stand-in for the upstream repository (127.0.0.1 only)."""
    root = tmp_path / "upstream"
    (root / "data").mkdir(parents=True)
    (root / "data" / "cases.jsonl").write_text(UPSTREAM)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def make_suite(tmp_path: Path, base_url: str, digest: str) -> Path:
    folder = tmp_path / "suite"
    (folder / "samples").mkdir(parents=True)
    (folder / "samples" / "cases.jsonl").write_text('{"id": "echo_0", "text": "sample"}\n')
    definition = {
        "name": "echo", "title": "Echo", "scorer": "echo",
        "data": {"folder": "echo", "upstream": {"repository": "example/echo", "commit": "0123456789abcdef",
                                                "base_url": base_url},
                 "files": {"cases.jsonl": {"sha256": digest, "source": "data/cases.jsonl"}}},
        "categories": [{"name": "short"}], "generation": {"max_tokens": 512},
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(definition))
    return folder / "suite.yaml"


def test_download_is_verified_cached_and_reused(tmp_path, upstream_server):
    digest = hashlib.sha256(UPSTREAM.encode()).hexdigest()
    definition = load_definition(make_suite(tmp_path, upstream_server, digest))
    source = datasource.resolve(definition, None, "", tmp_path / "dl", allow_download=True)
    assert source.kind == "download" and "(downloaded)" in source.description
    assert (source.path / "cases.jsonl").read_text() == UPSTREAM
    again = datasource.resolve(definition, None, "", tmp_path / "dl", allow_download=False)
    assert again.kind == "download" and "(cached)" in again.description


def test_checksum_mismatch_falls_back_to_samples_loudly(tmp_path, upstream_server):
    definition = load_definition(make_suite(tmp_path, upstream_server, "0" * 64))
    source = datasource.resolve(definition, None, "", tmp_path / "dl", allow_download=True)
    assert source.is_sample and "SHIPPED SAMPLES ONLY" in source.description
    assert not (tmp_path / "dl" / "echo").exists() or not any((tmp_path / "dl" / "echo").rglob("cases.jsonl"))


def test_a_given_folder_wins(tmp_path):
    definition = load_definition(make_suite(tmp_path, "https://example.invalid/", "0" * 64))
    (tmp_path / "given" / "echo").mkdir(parents=True)
    source = datasource.resolve(definition, str(tmp_path / "given"), "TOOLBENCH_DATA", tmp_path / "dl", True)
    assert source.kind == "folder" and source.path == tmp_path / "given" / "echo"


def test_suite_definition_errors_name_file_line_and_field(tmp_path):
    path = make_suite(tmp_path, "ftp://nope/", "0" * 64)
    with pytest.raises(DataError) as error:
        load_definition(path)
    message = str(error.value)
    assert "suite.yaml:" in message and "field 'data/upstream/base_url'" in message
    line = int(message.split("suite.yaml:")[1].split(":")[0])
    assert "base_url" in path.read_text().splitlines()[line - 1]
