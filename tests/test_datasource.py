"""Data resolution: a given folder, a verified download at a pinned commit, or the samples (said loudly)."""

from __future__ import annotations

import ast
import hashlib
import http.server
import sys
import threading
from functools import partial
from pathlib import Path

import pytest
import yaml

from pytest_toolbench import data
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.run.cache_layout import CacheLayout

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
    cache = CacheLayout.at(tmp_path / "cache")
    source = data.resolve(definition, None, "", cache.downloads, allow_download=True)
    assert source.kind == "download" and "(downloaded)" in source.description
    assert source.path == cache.data_downloads / "echo" / "0123456789abcdef"
    assert (source.path / "cases.jsonl").read_text() == UPSTREAM
    again = data.resolve(definition, None, "", cache.downloads, allow_download=False)
    assert again.kind == "download" and "(cached)" in again.description


def test_checksum_mismatch_falls_back_to_samples_loudly(tmp_path, upstream_server):
    definition = load_definition(make_suite(tmp_path, upstream_server, "0" * 64))
    cache = CacheLayout.at(tmp_path / "cache")
    source = data.resolve(definition, None, "", cache.downloads, allow_download=True)
    assert source.is_sample and "SHIPPED SAMPLES ONLY" in source.description
    assert not any((tmp_path / "cache").rglob("cases.jsonl"))


def test_a_given_folder_wins(tmp_path):
    definition = load_definition(make_suite(tmp_path, "https://example.invalid/", "0" * 64))
    (tmp_path / "given" / "echo").mkdir(parents=True)
    source = data.resolve(definition, str(tmp_path / "given"), "TOOLBENCH_DATA", CacheLayout.at(tmp_path).downloads,
                          True)
    assert source.kind == "folder" and source.path == tmp_path / "given" / "echo"


def test_suite_definition_errors_name_file_line_and_field(tmp_path):
    path = make_suite(tmp_path, "ftp://nope/", "0" * 64)
    with pytest.raises(DataError) as error:
        load_definition(path)
    message = str(error.value)
    assert "suite.yaml:" in message and "field 'data/upstream/base_url'" in message
    line = int(message.split("suite.yaml:")[1].split(":")[0])
    assert "base_url" in path.read_text().splitlines()[line - 1]


def test_a_checksum_difference_shows_both_sums_whole(tmp_path):
    """Two sums that differ only in their last character must not look alike in the error."""
    actual = hashlib.sha256(UPSTREAM.encode()).hexdigest()
    listed = actual[:-1] + ("1" if actual[-1] == "0" else "0")
    definition = load_definition(make_suite(tmp_path, "https://example.invalid/", listed))
    folder = tmp_path / "given" / "echo"
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_text(UPSTREAM)
    with pytest.raises(DataError) as error:
        data.verify(data.DataSource(folder, "folder", str(folder)), definition, data.HashCache(None), False)
    message = str(error.value)
    assert str(folder / "cases.jsonl") in message
    assert f"sha256 {actual} differs from {listed} in suite.yaml of suite 'echo'" in message


# -- the data package's place: it imports the contract and the standard library, nothing else of the plugin -------
DATA_PACKAGE = Path(data.__file__).parent
ALLOWED_OUTSIDE_STDLIB = ("pytest_toolbench.contract", "pytest_toolbench.data", "yaml")


def imports_outside(source: str, package: str) -> list[str]:
    """The modules imported by ``source`` (a module of ``package``, nested imports included) that are neither in the
    standard library nor among ``ALLOWED_OUTSIDE_STDLIB``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # each name as a dotted path: ``from .. import run`` is the run
            parts = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            origin = ".".join(parts + ([node.module] if node.module else []))
            names = [f"{origin}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in sys.stdlib_module_names:
                continue
            if not any(name == allowed or name.startswith(allowed + ".") for allowed in ALLOWED_OUTSIDE_STDLIB):
                found.append(name)
    return found


def test_the_import_check_sees_what_it_must_refuse():
    package = "pytest_toolbench.data"
    assert imports_outside("from ..contract.errors import DataError\nfrom .hashes import HashCache\n"
                           "import json, os.path\nimport yaml\nfrom . import lfs\n", package) == []
    refused = ("from ..run.cache_layout import CacheLayout\n"
               "def later():\n    from ..plugin import options\n"
               "import pytest_toolbench.backends\nimport requests\nfrom .. import report\n")
    assert sorted(imports_outside(refused, package)) == [
        "pytest_toolbench.backends", "pytest_toolbench.plugin.options", "pytest_toolbench.report",
        "pytest_toolbench.run.cache_layout.CacheLayout", "requests"]


def test_the_data_package_imports_only_the_contract():
    modules = sorted(DATA_PACKAGE.glob("*.py"))
    assert {path.stem for path in modules} >= {"__init__", "source", "resolution", "verification", "hashes"}
    outside = {path.name: imports_outside(path.read_text(encoding="utf-8"), "pytest_toolbench.data")
               for path in modules}
    assert {name: found for name, found in outside.items() if found} == {}
