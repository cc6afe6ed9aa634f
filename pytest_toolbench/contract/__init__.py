"""The contract a suite is written against, and the only part of the package besides the scorer libraries
(``pytest_toolbench.parsing``, ``pytest_toolbench.scorer_lib``) that a suite's scorer may import: the case, answer
and verdict types and the protocols (``suite``), the errors a scorer raises (``errors``), reading data files with a
schema (``data_files``) and reading replayed result files tolerantly (``replay_files``). It imports nothing else of
the package."""
