"""BFCL's function-doc conversion exists once (``scorer_lib/bfcl_handlers/function_docs.py``) with upstream's
behaviour (bfcl-eval 2026.3.23 ``model_handler/utils.py::convert_to_tool``): the FC handlers' renderers and the
suite's native-mode tools both use it, and an unknown item type raises as upstream's direct mapping lookup does."""

from __future__ import annotations

import pytest

from pytest_toolbench.scorer_lib.bfcl_handlers import glm, granite, hammer, minicpm_fc
from pytest_toolbench.scorer_lib.bfcl_handlers.function_docs import FunctionDocError, convert_to_tool
from pytest_toolbench.suites.bfcl.scorer import prompt


def _doc(**properties):
    return {"name": "math.mean", "description": "d",
            "parameters": {"type": "dict", "properties": properties, "required": []}}


def test_types_are_cast_as_upstream_casts_them():
    doc = _doc(x={"type": "float", "description": "x"}, y={"type": "mystery"}, z={"description": "no type"},
               w={"type": "list", "items": {"type": "tuple", "items": {"type": "Bigint"}}})
    (tool,) = convert_to_tool([doc], wrap=False)
    assert tool["name"] == "math_mean" and tool["parameters"]["type"] == "object"
    props = tool["parameters"]["properties"]
    assert props["x"] == {"type": "number", "format": "float", "description": "x This is a float type value."}
    assert props["y"]["type"] == "string" and props["z"]["type"] == "string"
    assert props["w"] == {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
    assert doc["name"] == "math.mean"  # the caller's doc is not changed


@pytest.mark.parametrize("properties", [
    {"a": {"type": "array", "items": {"type": "mystery"}}},  # unknown item type
    {"a": {"type": "array", "items": {}}},  # missing item type
    {"a": {"type": "list", "items": {"type": "list", "items": {"type": "mystery"}}}},  # unknown nested item type
    {"a": {"type": "float"}},  # a float without a description: upstream's += fails
])
def test_what_upstream_fails_on_raises(properties):
    with pytest.raises(FunctionDocError, match="convert_to_tool"):
        convert_to_tool([_doc(**properties)], wrap=True)
    with pytest.raises(FunctionDocError):
        prompt.native_tools([_doc(**properties)], "simple_python")


def test_the_suite_and_the_handlers_use_the_one_conversion():
    assert prompt.convert_to_tool is convert_to_tool
    assert all(module._convert_to_tool is convert_to_tool for module in (glm, granite, minicpm_fc))
    assert not hasattr(prompt, "_cast_properties") and not hasattr(hammer, "_cast_properties")
    doc = _doc(n={"type": "integer", "description": "n"})
    assert prompt.native_tools([doc], "simple_python") == convert_to_tool(
        prompt.hinted_functions([doc], "simple_python"), wrap=True)
