"""`pytest -k bfcl -n 2 --toolbench-replay ...` gives the same summary as a serial run."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

import pytest

from conftest import REPO

from pytest_toolbench.run.catalog import Catalog, Registry
from pytest_toolbench.run.cache_layout import CacheLayout


# slow (-m slow): two end-to-end runs over the real BFCL data (about 6 s of CPU; 40 s on a busy 2-core machine);
# tests/test_plugin_core.py checks the same parity on the example suite by default
@pytest.mark.slow
def test_replay_summary_is_the_same_under_xdist(shared_data, tmp_path):
    downloads = CacheLayout.at(tempfile.mkdtemp()).downloads
    catalog = Catalog(Registry(), str(shared_data), "test", downloads, False, limit=8)
    suite = catalog.load(REPO / "suites" / "bfcl" / "suite.yaml")
    folder = tmp_path / "result"
    folder.mkdir()
    rows: dict[str, list[str]] = {}
    for index, case in enumerate(suite.cases):
        # every third answer is broken in a different way, so failures and error types are part of the comparison
        text = suite.benchmark.gold_output(case)
        text = [text, "```python\n" + text + "\n```", "[not_a_tool(x=1)]"][index % 3]
        rows.setdefault(case.category, []).append(json.dumps({"id": case.case_id, "result": text}))
    for category, lines in rows.items():
        (folder / f"BFCL_v4_{category}_result.json").write_text("\n".join(lines) + "\n")

    documents = []
    for extra in ([], ["-n", "2"]):
        out = tmp_path / f"run{len(documents)}.json"
        subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites"), "-k", "bfcl", "-q", "-p",
                        "no:cacheprovider", f"--toolbench-data={shared_data}", "--toolbench-limit", "8",
                        f"--toolbench-replay={folder}", f"--toolbench-json={out}", *extra],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
        documents.append(json.loads(out.read_text()))
    serial, parallel = documents
    assert serial["suites"]["bfcl"]["total"] == 23 * 8
    assert 0 < serial["suites"]["bfcl"]["passed"] < 23 * 8
    assert serial["suites"] == parallel["suites"]
    assert [(c["case_id"], c["passed"], c["error_type"]) for c in serial["cases"]] == \
           [(c["case_id"], c["passed"], c["error_type"]) for c in parallel["cases"]]
