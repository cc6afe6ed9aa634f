"""ACEBench (Normal, Special, Agent; en and zh): one item per case (ids `<lang>-<ACEBench id>`), scored with the faithful checker."""

import pytest

pytestmark = pytest.mark.toolbench_suite("acebench")


def test_case(toolbench_case, toolbench):
    toolbench.check(toolbench_case)
