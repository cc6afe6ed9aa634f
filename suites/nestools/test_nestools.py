"""NesTools: one item per test_id, scored with the official NesTools counts; item pass = Tree."""

import pytest

pytestmark = pytest.mark.toolbench_suite("nestools")


def test_case(toolbench_case, toolbench):
    toolbench.check(toolbench_case)
