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
from ..run.session import ToolbenchSession


class WorkerManifest:
    """Worker side: writes the selected cases (after -k/-m/--lf) for the controller to generate. ``tryfirst``
    so the file exists before xdist's own ``pytest_collection_finish`` reports this worker's ids."""

    def __init__(self, session: ToolbenchSession):
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = session.config
        info = config.workerinput["toolbench"]
        path = Path(info["manifest_dir"]) / f"{config.workerinput['workerid']}.json"
        manifest = self.session.manifest(selected_items(self.session, session.items))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest), encoding="utf-8")
        tmp.replace(path)


class XdistHooks:
    def __init__(self, session: ToolbenchSession):
        self.session = session
        self.manifest_dir = Path(tempfile.mkdtemp(prefix="toolbench-manifest-"))
        self.generated = False

    def pytest_configure_node(self, node: Any) -> None:
        payload: dict[str, Any] = {"options": self.session.options.to_json(),
                                   "manifest_dir": str(self.manifest_dir)}
        if self.session.uses_engine:
            payload["fingerprint"] = self.session.fingerprint()
        node.workerinput["toolbench"] = payload

    @pytest.hookimpl(trylast=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        # Every worker collects the same selection (xdist checks it); the first manifest serves for all.
        if self.generated:
            return
        self.generated = True
        path = self.manifest_dir / f"{node.workerinput['workerid']}.json"
        manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"suites": {}, "cases": []}
        self.session.expect(manifest)
        check_backend(self.session)
        one_line_failures(self.session.config, only_cases=bool(ids) and len(manifest["cases"]) == len(ids))
        self.session.report_replay(terminal_writer(self.session.config))
        if not self.session.uses_engine:
            return
        entries = []
        suites = {name: self.session.catalog.load(Path(facts["definition"]))
                  for name, facts in manifest["suites"].items()}
        for _, suite_name, case_id, *_ in manifest["cases"]:
            suite = suites[suite_name]
            entries.append((suite, suite.case(case_id)))
        run_pregeneration(self.session, entries, terminal_writer(self.session.config))
        # Workers read the cache from here on; the controller needs neither the engine nor a writer any more.
        self.session.close()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for path in self.manifest_dir.glob("*"):
            path.unlink(missing_ok=True)
        try:
            os.rmdir(self.manifest_dir)
        except OSError:
            pass
