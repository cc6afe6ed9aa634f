"""Local data checked against the sha256 sums of ``suite.yaml``; the data's hash recorded with the results.

Exercised on a temporary copy of the example ``echo`` suite whose ``suite.yaml`` lists its one data file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLE_SUITE
from pytest_toolbench import data
from pytest_toolbench.data import hashes as data_hashes
from pytest_toolbench.run.catalog import Catalog, Registry
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.run.cache_layout import CacheLayout

FIX = "point --toolbench-data at an unmodified copy, or pass --toolbench-data-unverified"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(digests: dict[str, str]) -> str:
    """What ``data_sha256`` must be: sha256 of the ``sha256sum`` lines, sorted by path."""
    return hashlib.sha256("".join(f"{d}  {r}\n" for r, d in sorted(digests.items())).encode()).hexdigest()


def list_files(root: Path, files: dict[str, str] | None) -> None:
    definition = root / "suites" / "echo" / "suite.yaml"
    document = yaml.safe_load(definition.read_text())
    if files is None:
        document["data"].pop("files", None)
    else:
        document["data"]["files"] = files
    definition.write_text(yaml.safe_dump(document, sort_keys=False))


def edit(cases: Path) -> None:
    """Change one ground-truth text (still valid data, so only the checksum can tell)."""
    cases.write_text(cases.read_text().replace('"hello"', '"HELLO"', 1))


@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    cases = pytester.path / "data" / "echo" / "cases.jsonl"
    assert '"hello"' in cases.read_text()
    list_files(pytester.path, {"cases.jsonl": sha256(cases)})
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data=data", "--toolbench-cache=cache",
                                         "-p", "no:randomly", *args)


def data_source(pytester: pytest.Pytester, name: str = "out.json") -> dict:
    document = json.loads((pytester.path / name).read_text())
    return document["suites"]["echo"]["data_source"]


def toolbench_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines + result.errlines if "pytest-toolbench:" in line]


def test_unmodified_data_pass_and_the_json_records_the_data_hash(echo):
    cases = echo.path / "data" / "echo" / "cases.jsonl"
    result = run(echo, "--toolbench-json=out.json")
    result.assert_outcomes(passed=3)
    source = data_source(echo)
    assert source["data_sha256"] == manifest({"cases.jsonl": sha256(cases)})
    assert source["unverified"] == [] and source["unlisted"] == []
    assert "UNVERIFIED" not in source["description"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_an_edited_file_is_one_usage_error_naming_it(echo, workers):
    cases = echo.path / "data" / "echo" / "cases.jsonl"
    expected = sha256(cases)
    edit(cases)
    result = run(echo, *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = toolbench_lines(result)
    assert len(lines) == 1, lines
    line = lines[0]
    assert str(cases) in line and f"sha256 {sha256(cases)} differs from {expected}" in line and FIX in line
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert " passed" not in result.stdout.str()  # nothing ran


def test_a_missing_listed_file_is_an_error_too(echo):
    extra = echo.path / "data" / "echo" / "extra.json"
    list_files(echo.path, {"cases.jsonl": sha256(echo.path / "data" / "echo" / "cases.jsonl"), "extra.json": "0" * 64})
    result = run(echo)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = toolbench_lines(result)
    assert len(lines) == 1 and str(extra) in lines[0] and "missing" in lines[0] and FIX in lines[0]


def test_unverified_option_proceeds_and_records_the_difference(echo):
    cases = echo.path / "data" / "echo" / "cases.jsonl"
    original = sha256(cases)
    edit(cases)
    result = run(echo, "--toolbench-data-unverified", "--toolbench-json=out.json")
    assert result.ret == 0
    result.assert_outcomes(passed=3)  # gold answers come from the edited file: only the record tells
    source = data_source(echo)
    assert source["unverified"] == ["cases.jsonl"]
    assert "UNVERIFIED: 1 of 1 files differ" in source["description"]
    assert source["data_sha256"] == manifest({"cases.jsonl": sha256(cases)})
    assert source["data_sha256"] != manifest({"cases.jsonl": original})
    assert "UNVERIFIED" in result.stdout.str()  # the summary's data line shows the description


def test_files_read_but_not_listed_are_reported_as_unlisted(echo):
    list_files(echo.path, None)  # the example as shipped: no files listed
    cases = echo.path / "data" / "echo" / "cases.jsonl"
    result = run(echo, "--toolbench-json=out.json")
    result.assert_outcomes(passed=3)
    source = data_source(echo)
    assert source["unlisted"] == ["cases.jsonl"] and source["unverified"] == []
    assert source["data_sha256"] == manifest({"cases.jsonl": sha256(cases)})


def test_the_verification_cache_avoids_rehashing(echo, monkeypatch):
    """Through the real plugin, in-process: the second run hashes nothing; an edit is hashed and caught."""
    calls: list[str] = []
    real = data_hashes.file_sha256

    def counting(path):
        calls.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(data_hashes, "file_sha256", counting)
    args = ("suites", "--toolbench-data=data", "--toolbench-cache=cache", "-p", "no:randomly", "-p", "no:xdist")
    echo.runpytest_inprocess(*args).assert_outcomes(passed=3)
    assert calls == ["cases.jsonl"]
    assert CacheLayout.at(echo.path / "cache").data_hashes.is_file()
    calls.clear()
    echo.runpytest_inprocess(*args).assert_outcomes(passed=3)
    assert calls == []
    # Same size and modification time, other bytes: still hashed again (ctime and inode are in the key too).
    cases = echo.path / "data" / "echo" / "cases.jsonl"
    before = cases.stat()
    cases.write_text(cases.read_text().replace('"hello"', '"HELLO"', 1))
    os.utime(cases, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cases.stat().st_size == before.st_size
    result = echo.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert calls == ["cases.jsonl"]


def echo_catalog(root: Path, **kwargs) -> Catalog:
    from pytest_toolbench.run.catalog import import_scorer

    registry = Registry()
    registry.add_benchmark("echo", import_scorer(EXAMPLE_SUITE / "suites" / "echo"))
    downloads = CacheLayout.at(root / "cache").downloads
    return Catalog(registry, str(root / "data"), "test", downloads, False, None, **kwargs)


def test_catalog_raises_one_data_error_and_the_cache_file_survives_processes(tmp_path, monkeypatch):
    shutil.copytree(EXAMPLE_SUITE, tmp_path, dirs_exist_ok=True)
    cases = tmp_path / "data" / "echo" / "cases.jsonl"
    list_files(tmp_path, {"cases.jsonl": sha256(cases)})
    definition = tmp_path / "suites" / "echo" / "suite.yaml"
    cache = CacheLayout.at(tmp_path / "cache").data_hashes
    suite = echo_catalog(tmp_path, hash_cache=cache).load(definition)
    assert suite.source.data_sha256 == manifest({"cases.jsonl": sha256(cases)})
    entry = json.loads(cache.read_text())["files"][os.path.realpath(cases)]
    assert entry[-1] == sha256(cases)
    calls = []
    monkeypatch.setattr(data_hashes, "file_sha256", lambda path: calls.append(path) or "f" * 64)
    assert echo_catalog(tmp_path, hash_cache=cache).load(definition).source.unverified == ()
    assert calls == []  # a fresh catalog (another process) reads the digest from the file
    edit(cases)
    monkeypatch.undo()
    with pytest.raises(DataError) as error:
        echo_catalog(tmp_path, hash_cache=cache).load(definition)
    assert str(error.value).count("cases.jsonl") == 1 and FIX in str(error.value)
    loaded = echo_catalog(tmp_path, hash_cache=cache, data_unverified=True).load(definition)
    assert loaded.source.unverified == ("cases.jsonl",)


def test_samples_and_downloads_carry_a_data_hash(tmp_path):
    content = '{"id": "echo_0", "text": "x"}\n'
    digest = hashlib.sha256(content.encode()).hexdigest()
    folder = tmp_path / "suite"
    (folder / "samples").mkdir(parents=True)
    (folder / "samples" / "cases.jsonl").write_text(content)
    (folder / "suite.yaml").write_text(yaml.safe_dump({
        "name": "echo", "title": "Echo", "scorer": "echo",
        "data": {"folder": "echo", "upstream": {"repository": "example/echo", "commit": "0123456789abcdef",
                                                "base_url": "https://example.invalid/"},
                 "files": {"cases.jsonl": digest}},
        "categories": [{"name": "short"}], "generation": {"max_tokens": 512}}))
    definition = load_definition(folder / "suite.yaml")
    hashes = data.HashCache(None)
    cache = CacheLayout.at(tmp_path / "cache")
    samples = data.resolve(definition, None, "", cache.downloads, allow_download=False, hashes=hashes)
    assert samples.is_sample
    assert data.seal(samples, definition, {}, [], hashes).data_sha256 == manifest({"cases.jsonl": digest})
    target = cache.data_downloads / "echo" / "0123456789abcdef"
    target.mkdir(parents=True)
    (target / "cases.jsonl").write_text(content)
    download = data.resolve(definition, None, "", cache.downloads, allow_download=False, hashes=hashes)
    assert download.kind == "download" and download.data_sha256 == manifest({"cases.jsonl": digest})
    (tmp_path / "given" / "echo").mkdir(parents=True)
    (tmp_path / "given" / "echo" / "cases.jsonl").write_text(content)
    local = data.resolve(definition, str(tmp_path / "given"), "test", cache.downloads, False, hashes)
    local, digests = data.verify(local, definition, hashes, allow_unverified=False)
    assert data.seal(local, definition, digests, [], hashes).data_sha256 == download.data_sha256
