import pytest

pytestmark = pytest.mark.toolbench_suite("echo")


def test_case(toolbench_case, toolbench):
    toolbench.check(toolbench_case)
