"""xdist: the controller owns the engine and generates once; workers only read the cache and score.

Registered on the controller only (as syrupy and pytest-randomly do), so nothing here runs without xdist.
Facts relied on (pytest-xdist 3.x): ``pytest_configure_node`` fills ``workerinput`` before a worker starts; the
controller never collects; ``pytest_xdist_node_collection_finished`` runs before scheduling, so generating there
delays dispatch without any worker timing out. Workers send their selection through a manifest file written in
``pytest_collection_finish`` before xdist reports their collected ids.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from .lifecycle import check_backend, one_line_failures, run_pregeneration, selected_items, terminal_writer
from ..run import ledger
from ..run.context import RunContext
from ..run.role import WORKER_INPUT_KEY, worker_id, worker_input


class WorkerManifest:
    """Worker side: writes the selected cases (after -k/-m/--lf) for the controller to generate. ``tryfirst``
    so the file exists before xdist's own ``pytest_collection_finish`` reports this worker's ids."""

    def __init__(self, toolbench: RunContext):
        self.toolbench = toolbench

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = session.config
        path = Path(worker_input(config)["manifest_dir"]) / f"{worker_id(config)}.json"
        manifest = ledger.manifest(selected_items(self.toolbench, session.items))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest.to_json()), encoding="utf-8")
        tmp.replace(path)


class XdistHooks:
    def __init__(self, toolbench: RunContext):
        self.toolbench = toolbench
        self.manifest_dir = Path(tempfile.mkdtemp(prefix="toolbench-manifest-"))
        self.generated = False

    def pytest_configure_node(self, node: Any) -> None:
        payload: dict[str, Any] = {"options": self.toolbench.options.to_json(),
                                   "manifest_dir": str(self.manifest_dir)}
        if self.toolbench.uses_engine:
            payload["fingerprint"] = self.toolbench.fingerprint()
        node.workerinput[WORKER_INPUT_KEY] = payload

    @pytest.hookimpl(trylast=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        # Every worker collects the same selection (xdist checks it); the first manifest serves for all.
        if self.generated:
            return
        self.generated = True
        path = self.manifest_dir / f"{node.workerinput['workerid']}.json"
        manifest = (ledger.Manifest.from_json(json.loads(path.read_text(encoding="utf-8"))) if path.exists()
                    else ledger.Manifest())
        toolbench = self.toolbench
        toolbench.ledger.expect(manifest)
        from . import report_unmatched_keywords

        report_unmatched_keywords(toolbench.config, toolbench, ids)
        check_backend(toolbench)
        one_line_failures(toolbench.config, only_cases=bool(ids) and len(manifest.cases) == len(ids))
        toolbench.report_selection(terminal_writer(toolbench.config))
        if not toolbench.uses_engine:
            return
        entries = []
        suites = {name: toolbench.catalog.load(Path(facts.definition))
                  for name, facts in manifest.suites.items()}
        for row in manifest.cases:
            suite = suites[row.suite]
            entries.append((suite, suite.case(row.case_id), row.sample or 0))
        run_pregeneration(toolbench, entries, terminal_writer(toolbench.config))
        # Workers read the cache from here on; the controller needs neither the engine nor a writer any more.
        toolbench.close()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for path in self.manifest_dir.glob("*"):
            path.unlink(missing_ok=True)
        try:
            os.rmdir(self.manifest_dir)
        except OSError:
            pass
