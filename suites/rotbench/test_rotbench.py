"""RoTBench: one item per case of both turns and all five noise environments, scored with the official TS/PI/CF."""

import pytest

pytestmark = pytest.mark.toolbench_suite("rotbench")


def test_case(toolbench_case, toolbench):
    toolbench.check(toolbench_case)
