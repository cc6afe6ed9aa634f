"""pytest-toolbench: LLM tool-use benchmarks as pytest suites, faithful to the official scorers."""

__version__ = "0.1.0"
