"""The run, apart from pytest: the suite catalog and its definitions, generation and its cache, the scoring of a
case, the records and the summary. Imports the contract, ``data`` and ``backends``; never the pytest glue."""
