"""A minimal benchmark: the model must call ``echo(text=...)`` with the text the user gave.

Modules, one job each, as every shipped suite has them: ``loading`` (the data file into cases), ``prompt`` (the
request), ``decoding`` (the model's text into a call), ``checker`` (the verdict, and the gold answer),
``aggregation`` (the figures), ``replay`` (saved result files, read tolerantly). This file re-exports the functions
the core calls (the ``Benchmark`` protocol of ``pytest_toolbench.contract.suite``).
"""

from .aggregation import aggregate
from .checker import gold_output, score
from .loading import load_cases
from .prompt import build_request
from .replay import replay_outputs

__all__ = ["load_cases", "build_request", "gold_output", "score", "aggregate", "replay_outputs"]
