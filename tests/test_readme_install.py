"""README's install lines work for a newcomer: the package is not on PyPI, so every `pip install` of it names a
checkout or a wheel, and the wheel named is the one `pip wheel` builds from this version."""

from __future__ import annotations

import re

from conftest import REPO


def test_every_install_of_the_plugin_in_the_readme_names_a_checkout_or_a_wheel():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(encoding="utf-8"), re.M)[1]
    installs = re.findall(r"pip install[^`\n]*?[\"']?[^\s\"'`]*pytest[-_]toolbench[^\s\"'`]*", readme)
    assert installs, "the README says how to install the plugin"
    from_pypi = [line for line in installs if not re.search(r"[/\\]|\.whl", line.split("pip install", 1)[1])]
    # the one line that says `pip install pytest-toolbench` finds nothing is the only bare name left
    assert all("finds nothing" in readme.split(line, 1)[1][:20] for line in from_pypi), from_pypi
    wheels = set(re.findall(r"pytest_toolbench-[\w.]+-py3-none-any\.whl", readme))
    assert wheels == {f"pytest_toolbench-{version}-py3-none-any.whl"}, wheels
