"""BFCL's open-model registry (``pytest_toolbench/scorer_lib/bfcl_handlers/registry.py``) against the pinned wheel."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from pytest_toolbench.scorer_lib import bfcl_handlers as bh
from pytest_toolbench.scorer_lib.bfcl_handlers import registry

REPO = Path(__file__).resolve().parents[1]
WHEEL = REPO.parent / "shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl"


def test_registry_is_the_wheel_s_local_model_map():
    if not WHEEL.is_file():
        pytest.skip("the pinned bfcl-eval wheel is not beside the checkout")
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_bfcl_registry", REPO / "scripts/make_bfcl_registry.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    with zipfile.ZipFile(WHEEL) as archive:
        source = archive.read("bfcl_eval/constants/model_config.py").decode("utf-8")
    assert maker.rows(source) == json.loads(registry.REGISTRY_FILE.read_text(encoding="utf-8"))["rows"]


def test_lookup_by_registry_name_and_by_checkpoint():
    row = bh.bfcl_row("Qwen/Qwen3-8B-FC")
    assert (row.handler, row.mode, row.model_name, row.underscore_to_dot) == ("QwenFCHandler", "FC", "Qwen/Qwen3-8B",
                                                                              False)
    assert bh.bfcl_row("Qwen/Qwen3-8B").handler == "QwenHandler" and bh.bfcl_row("Qwen/Qwen3-8B").mode == "prompting"
    assert {r.name for r in bh.rows_for_checkpoint("qwen/qwen3-8b")} == {"Qwen/Qwen3-8B", "Qwen/Qwen3-8B-FC"}
    assert bh.bfcl_row("meta-llama/Llama-3.2-3B-Instruct-FC").handler == "LlamaHandler"  # upstream's choice
    assert bh.bfcl_row("THUDM/glm-4-9b-chat").underscore_to_dot
    assert not bh.bfcl_row("openbmb/MiniCPM-SALA-FC").local
    assert bh.bfcl_row("Qwen/Qwen3-8B-FC").to_json()["mode"] == "FC"
    assert len(bh.bfcl_rows()) == 76


def test_an_unknown_row_is_one_error_naming_the_closest():
    with pytest.raises(bh.UnknownBfclRow, match="closest: Qwen/Qwen3-8B-FC") as raised:
        bh.bfcl_row("Qwen/Qwen3-8b-fc")
    assert isinstance(raised.value, KeyError) and isinstance(raised.value, ValueError)
    assert "not an open-model row" in str(raised.value)
