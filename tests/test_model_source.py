"""A ``--model`` (or endpoint) that cannot be had is one usage error naming it and the fix, exit 4, before any engine
starts, without a traceback. No network is needed: "no network" is HF_ENDPOINT at a closed local port, the Hub's
answers for unknown and gated repositories come from a small local server that answers as the Hub does."""

from __future__ import annotations

import json
import os
import shutil
import socket
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from conftest import REPO, LocalHTTPServer
from pytest_toolbench.backends import model_source
from pytest_toolbench.backends.model_source import ModelUnavailable, check_endpoint, locate_model

EXAMPLE_SUITE = REPO / "examples" / "echo_suite"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class FakeHub(LocalHTTPServer):
    """Answers like huggingface.co: ``org/public`` exists, ``org/gated`` is gated (its metadata is public, its files
    answer 401 GatedRepo), every other id is 401 RepoNotFound (the Hub's answer without a token)."""

    def __init__(self):
        self.paths: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status, body=None, error_code=None):
                data = json.dumps(body or {}).encode()
                self.send_response(status)
                if error_code:
                    self.send_header("X-Error-Code", error_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def do_GET(self):
                hub.paths.append(self.path)
                if self.path.startswith("/api/models/org/public/revision/"):
                    return self._answer(200, {"id": "org/public", "sha": COMMIT, "gated": False})
                if self.path.startswith("/api/models/org/gated/revision/"):
                    return self._answer(200, {"id": "org/gated", "sha": COMMIT, "gated": "manual"})
                return self._answer(401, {"error": "Repository not found"}, "RepoNotFound")

            def do_HEAD(self):
                hub.paths.append(self.path)
                if self.path.startswith("/org/gated/"):
                    return self._answer(401, error_code="GatedRepo")
                return self._answer(200)

        super().__init__(Handler)



@pytest.fixture(autouse=True)
def isolated_hub(tmp_path, monkeypatch):
    """An empty Hugging Face cache and no token; the probes of one test are not reused by another."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    except ImportError:
        pass
    monkeypatch.setattr(model_source, "_PROBES", {})
    return tmp_path / "hf-cache"


def cache_model(cache: Path, model: str, weights: bool = True) -> Path:
    repo = cache / ("models--" + model.replace("/", "--"))
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    if weights:
        (snapshot / "model.safetensors").write_bytes(b"\0" * 16)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    return snapshot


def complete_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 16)
    return folder


# -- the checks themselves ----------------------------------------------------------------------------------------
def test_local_folders(tmp_path):
    assert locate_model(str(complete_folder(tmp_path / "ok"))).kind == "local"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailable, match=r"has no config.json and no weights .*pass a local folder with "
                                               r"config.json and \*.safetensors"):
        locate_model(str(tmp_path / "empty"))
    (tmp_path / "config-only").mkdir()
    (tmp_path / "config-only" / "config.json").write_text("{}")
    with pytest.raises(ModelUnavailable, match=r"has no weights"):
        locate_model(str(tmp_path / "config-only"))
    with pytest.raises(ModelUnavailable, match=r"--model=/nonexistent/ckpt: no such folder"):
        locate_model("/nonexistent/ckpt")
    with pytest.raises(ModelUnavailable, match=r"no such folder"):
        locate_model("./not-here")


def test_hub_ids_against_a_hub_that_answers(monkeypatch):
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert locate_model("org/public") == model_source.ModelSource("hub", COMMIT)
        with pytest.raises(ModelUnavailable, match=r"--model=org/nope: no local folder of that name and no model "
                                                   r"of that id on the Hub .*HTTP 401 RepoNotFound.*HF_TOKEN"):
            locate_model("org/nope")
        with pytest.raises(ModelUnavailable, match=r"--model=org/gated: a gated repository .*accept its licence "
                                                   r"at .*/org/gated and set HF_TOKEN"):
            locate_model("org/gated")
        # cached complete but refused (a private repository, an expired token): the cached copy runs offline
        cache_model(Path(os.environ["HF_HUB_CACHE"]), "org/private")
        found = locate_model("org/private")
        assert (found.kind, found.commit) == ("hub-cache", COMMIT) and "refused" in found.note
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    # one probe per model, no retries
    assert sorted(hub.paths) == sorted(["/api/models/org/public/revision/main", "/api/models/org/nope/revision/main",
                                        "/api/models/org/gated/revision/main",
                                        "/org/gated/resolve/main/config.json",
                                        "/api/models/org/private/revision/main"])


def test_no_network(monkeypatch, isolated_hub):
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    with pytest.raises(ModelUnavailable, match=r"did not answer within 10 s .*not in the local Hugging Face cache"
                                               r".*huggingface-cli download org/model"):
        locate_model("org/model")
    cache_model(isolated_hub, "org/partial", weights=False)
    with pytest.raises(ModelUnavailable, match=r"only partly in the local Hugging Face cache"):
        locate_model("org/partial")
    # a complete cached copy runs, offline from then on (vLLM and transformers would otherwise retry for minutes)
    cache_model(isolated_hub, "org/cached")
    found = locate_model("org/cached")
    assert (found.kind, found.commit) == ("hub-cache", COMMIT)
    assert "unreachable" in found.note and "HF_HUB_OFFLINE=1" in found.note
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_hf_hub_offline_reads_the_cache_only(monkeypatch, isolated_hub):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://never-asked.invalid")
    cache_model(isolated_hub, "org/cached")
    assert locate_model("org/cached") == model_source.ModelSource("hub-cache", COMMIT)
    with pytest.raises(ModelUnavailable, match=r"HF_HUB_OFFLINE is set and the model is not in the Hugging Face "
                                               r"cache"):
        locate_model("org/absent")
    assert model_source._PROBES == {}


def test_unreachable_endpoint_is_one_error_stating_the_wait():
    url = closed_port_url() + "/v1"
    with pytest.raises(ModelUnavailable, match=rf"--toolbench-base-url={url}: no answer from GET {url}/models "
                                               r"within 10 s \(ConnectionRefusedError"):
        check_endpoint("--toolbench-base-url", url)
    with pytest.raises(ModelUnavailable, match="not an http"):
        check_endpoint("--toolbench-base-url", "localhost:8000/v1")
    with FakeHub() as hub:
        check_endpoint("--toolbench-base-url", hub.url + "/v1")  # a 401 still proves a server


# -- through pytest: exit 4, one line, no traceback -----------------------------------------------------------------
@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    return pytester


def one_usage_error(result: pytest.RunResult, *needles: str) -> None:
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "Traceback" not in text and "HFValidationError" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, text
    for needle in needles:
        assert needle in errors[0], errors[0]


@pytest.mark.parametrize("case", ["missing", "empty-folder", "unknown-id", "gated", "no-network"])
def test_a_model_that_cannot_be_had_is_one_usage_error(echo, monkeypatch, tmp_path, case):
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", closed_port_url() if case == "no-network" else hub.url)
        model, fix = {
            "missing": ("/nonexistent/ckpt", "pass a local folder with config.json"),
            "empty-folder": (str(tmp_path / "empty"), "pass a local folder with config.json"),
            "unknown-id": ("org/nope", "check the spelling"),
            "gated": ("org/gated", "set HF_TOKEN"),
            "no-network": ("Qwen/Qwen2.5-0.5B-Instruct", "huggingface-cli download Qwen/Qwen2.5-0.5B-Instruct"),
        }[case]
        (tmp_path / "empty").mkdir(exist_ok=True)
        result = echo.runpytest_subprocess("suites", "--toolbench-data=data", "-p", "no:cacheprovider",
                                           f"--model={model}")
    one_usage_error(result, f"--model={model}", fix)
    assert "pre-generating" not in result.stdout.str()


def test_an_unreachable_openai_endpoint_is_one_usage_error(echo):
    url = closed_port_url() + "/v1"
    result = echo.runpytest_subprocess("suites", "--toolbench-data=data", "-p", "no:cacheprovider",
                                       "--toolbench-backend=openai", f"--toolbench-base-url={url}", "--model=m")
    one_usage_error(result, f"--toolbench-base-url={url}", "within 10 s", "start the server or fix the URL")
