"""The contract a suite is written against, and the only part of the package besides the scorer libraries
(``pytest_toolbench.parsing``, ``pytest_toolbench.scorer_lib``) that a suite's scorer may import: the case, answer
and verdict types and the protocols (``suite``), the errors a scorer raises (``errors``), reading data files with a
schema (``data_files``) and reading replayed result files tolerantly (``replay_files``). It imports nothing else of
the package."""

#: The modules of this package that a suite's scorer (and a scorer library) may import, and nothing else of
#: ``pytest_toolbench``; a scorer imports no other suite's scorer, and none of :data:`SCORER_MAY_NOT_IMPORT`
#: (``tests/test_scorer_lib.py`` checks every shipped scorer; docs/adding-a-suite.md quotes this list).
SCORER_MAY_IMPORT = ("pytest_toolbench.contract.suite", "pytest_toolbench.contract.errors",
                     "pytest_toolbench.contract.data_files", "pytest_toolbench.contract.replay_files",
                     "pytest_toolbench.parsing", "pytest_toolbench.scorer_lib")
#: Top-level packages a scorer never imports: pytest and its plugins, and the engines and clients of the backends.
SCORER_MAY_NOT_IMPORT = ("pytest", "_pytest", "xdist", "vllm", "torch", "openai", "httpx", "requests")
