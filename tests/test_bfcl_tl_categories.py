"""A BFCL replay run labels failed single-call cases with TL-Training's categories beside BFCL's error types."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

OUTPUTS = {
    "simple_python_0": "[calculate_triangle_area(base=10, height=5, colour='red')]",  # parameter hallucination
    "simple_python_1": "I cannot help with that.",  # unparseable
    "simple_python_2": "[geometry.hypotenuse(x=4, y=5)]",  # tool hallucination (not offered)
    "simple_python_3": "[algebra.quadratic_roots(a=1, b=-3, c=99)]",  # content mismatch
}


def test_replay_summary_has_tl_categories_beside_bfcl_error_types(shared_data, tmp_path):
    folder = tmp_path / "result"
    folder.mkdir()
    (folder / "BFCL_v4_simple_python_result.json").write_text(
        "".join(json.dumps({"id": case_id, "result": text}) + "\n" for case_id, text in OUTPUTS.items()))
    out = tmp_path / "run.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-p", "no:cacheprovider", "-q",
         f"--toolbench-data={shared_data}", f"--toolbench-replay={folder}", f"--toolbench-json={out}",
         "-k", "simple_python", "--toolbench-limit", "4"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    document = json.loads(out.read_text())
    by_id = {c["case_id"]: c for c in document["cases"]}
    assert by_id["simple_python_0"]["labels"]["tl_category"] == "parameter_hallucination"
    assert by_id["simple_python_1"]["labels"]["tl_category"] == "unparseable"
    assert by_id["simple_python_2"]["labels"]["tl_category"] == "tool_hallucination"
    assert by_id["simple_python_3"]["labels"]["tl_category"] == "content_mismatch"
    assert by_id["simple_python_1"]["error_type"] == "ast_decoder:decoder_failed"
    suite = document["suites"]["bfcl"]
    assert suite["labels"]["tl_category"] == {"parameter_hallucination": 1, "unparseable": 1,
                                              "tool_hallucination": 1, "content_mismatch": 1}
    assert "TL mean reward" in {m["name"] for m in suite["metrics"]}
    assert "[tl_category]" in result.stdout and "failures by error type" in result.stdout
