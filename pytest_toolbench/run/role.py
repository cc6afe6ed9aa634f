"""Which part of a run this process plays: the one public answer to "am I an xdist worker?".

``single``: a run without xdist (or ``--collect-only``); ``controller``: the xdist controller, which collects nothing
and owns the engine; ``worker``: an xdist worker, which collects, scores and reads what its controller handed it
(``worker_input``).
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

Role = Literal["single", "controller", "worker"]

#: The key of the plugin's payload in xdist's ``workerinput`` (filled by ``plugin.xdist.XdistHooks``).
WORKER_INPUT_KEY = "toolbench"


def process_role(config: pytest.Config) -> Role:
    if hasattr(config, "workerinput"):
        return "worker"
    if config.getoption("dist", "no") != "no" and not config.getoption("collectonly"):
        return "controller"
    return "single"


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def worker_input(config: pytest.Config) -> dict[str, Any]:
    """What the controller handed this worker (options, manifest folder, fingerprint); empty off a worker."""
    return dict(getattr(config, "workerinput", {}).get(WORKER_INPUT_KEY) or {})


def worker_id(config: pytest.Config) -> str | None:
    return getattr(config, "workerinput", {}).get("workerid")
