"""Finds the packages for the wheel; everything else is configured in pyproject.toml.

The suites live in the top-level ``suites/`` folder and ship as ``pytest_toolbench.suites`` (the
``package-dir`` mapping in pyproject.toml). ``[tool.setuptools.packages.find]`` names the packages it
finds relative to its ``where`` folder and cannot add a prefix, so it cannot turn ``suites/<name>`` into
``pytest_toolbench.suites.<name>``; this file does, so a new ``suites/<name>/`` folder ships with no edit.
"""

from pathlib import Path

from setuptools import find_namespace_packages, find_packages, setup

HERE = Path(__file__).resolve().parent
SUITES = "pytest_toolbench.suites"

setup(
    packages=[
        *find_packages(where=HERE, include=["pytest_toolbench", "pytest_toolbench.*"]),
        SUITES,
        # Every folder below suites/ is a package, with or without Python code in it, except the samples/
        # trees: they are data, shipped whole by the "samples/**/*" package-data pattern in pyproject.toml.
        *(f"{SUITES}.{name}"
          for name in find_namespace_packages(where=HERE / "suites", exclude=["*.samples", "*.samples.*"])),
    ],
)
