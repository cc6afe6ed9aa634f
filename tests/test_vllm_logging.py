"""vLLM's log goes to a file the run header names; the terminal keeps each warning once (no engine started here:
the routing is vLLM's own ``VLLM_LOGGING_CONFIG_PATH`` file, applied as vLLM applies it)."""

from __future__ import annotations

import json
import logging
import logging.config
import os
import shutil

import pytest

from conftest import EXAMPLE_SUITE
from pytest_toolbench.backends.vllm import engine_log as vllm_logging


@pytest.fixture
def clean_vllm_logger(monkeypatch):
    for name in ("VLLM_LOGGING_CONFIG_PATH", "VLLM_CONFIGURE_LOGGING"):
        monkeypatch.setenv(name, "")  # recorded, so that what route() sets is undone afterwards
        monkeypatch.delenv(name)
    logger = logging.getLogger("vllm")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    for handler in logger.handlers:
        handler.close()
    logger.handlers[:], logger.level, logger.propagate = saved


def test_info_goes_to_the_file_and_a_repeated_warning_reaches_the_terminal_once(tmp_path, capsys, clean_vllm_logger):
    log = tmp_path / "cache" / "vllm.log"
    assert vllm_logging.route(log) == log
    config_file = os.environ["VLLM_LOGGING_CONFIG_PATH"]
    logging.config.dictConfig(json.loads(open(config_file).read()))  # what `import vllm` does with that file
    logger = logging.getLogger("vllm.sampling_params")
    logger.info("Initializing a V1 LLM engine with config: %s", "...")
    for temperature in (0.001, 0.002, 0.001):
        logger.warning("temperature %s is less than %s; maxed it out to %s.", temperature, 0.01, 0.01)
    terminal = capsys.readouterr().err.splitlines()
    assert terminal == [f"vLLM WARNING: temperature 0.001 is less than 0.01; maxed it out to 0.01. (said once; "
                        f"vLLM's log: {log})"]
    written = log.read_text().splitlines()
    assert len(written) == 4 and "Initializing a V1 LLM engine" in written[0]


def test_a_users_own_vllm_logging_is_left_alone(tmp_path, monkeypatch, clean_vllm_logger):
    monkeypatch.setenv("VLLM_CONFIGURE_LOGGING", "0")
    assert vllm_logging.route(tmp_path / "vllm.log") is None
    assert "VLLM_LOGGING_CONFIG_PATH" not in os.environ


@pytest.mark.parametrize("verbose", [False, True])
def test_the_header_names_the_log_file_unless_verbose(pytester, tmp_path, verbose, clean_vllm_logger):
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    result = pytester.runpytest("suites", "--toolbench-data=data", "--collect-only", "-p", "no:cacheprovider",
                                f"--model={tmp_path}", "--toolbench-cache=cache", *(["-v"] if verbose else []))
    header = [line for line in result.stdout.lines if line.startswith("toolbench: backend vllm")]
    assert len(header) == 1, result.stdout.str()
    assert ("vLLM's log: " in header[0]) is not verbose
    if not verbose:
        assert f"vLLM's log: {pytester.path / 'cache' / 'vllm.log'}" in header[0], header[0]
