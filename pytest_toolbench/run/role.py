"""Which part of a run this process plays.

``single``: a run without xdist (or ``--collect-only``); ``controller``: the xdist controller, which collects nothing
and owns the engine; ``worker``: an xdist worker, which collects, scores and reads what its controller handed it
(its worker input: the payload under :data:`WORKER_INPUT_KEY`). The plugin reads these facts off pytest's config
(``plugin/session.py``) and hands the core the role and the payload as plain values.
"""

from __future__ import annotations

from typing import Literal

Role = Literal["single", "controller", "worker"]

#: The key of the plugin's payload in xdist's ``workerinput`` (filled by ``plugin/session.py`` on the controller).
WORKER_INPUT_KEY = "toolbench"


def role_of(is_worker: bool, distributed: bool, collect_only: bool) -> Role:
    """``is_worker``: the process has xdist's ``workerinput``; ``distributed``: ``--dist`` is not ``no``."""
    if is_worker:
        return "worker"
    if distributed and not collect_only:
        return "controller"
    return "single"
