"""BFCL v4 single-turn: one item per case (ids are BFCL's own), scored with the faithful AST/relevance checker."""

import pytest

pytestmark = pytest.mark.toolbench_suite("bfcl")


def test_case(toolbench_case, toolbench):
    toolbench.check(toolbench_case)
