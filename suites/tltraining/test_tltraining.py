"""TL-Training protocol: TS / PI / CF on RoTBench Clean, BFCL executable and ToolAlpaca, with TL error categories."""

import pytest

pytestmark = pytest.mark.toolbench_suite("tltraining")


def test_case(toolbench_case, toolbench):
    toolbench.check(toolbench_case)
