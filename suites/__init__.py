"""The benchmark suites, one folder each: ``suite.yaml`` (the declaration pytest collects into one item per case;
there is no test module), the ``scorer/`` package, ``samples/``, ``README.md`` and optional known defects (the shape
of README.md "Adding a suite", checked by tests/test_suite_shape.py). Shipped as ``pytest_toolbench.suites``."""
