"""Scorer libraries: parts that several suites' scorers share, outside the plugin core.

A suite opts into a behavioural library from its ``suite.yaml`` (``libraries: [tl_failures]``, the names the contract
declares in ``contract.definition.LIBRARIES``); its scorer finds the opt-in in the suite's context
(``case.context.uses(tl_failures.LIBRARY)``), never in a case payload. Format libraries hold what a suite that reuses
another suite's data (``data.reuses`` in ``suite.yaml``) needs to read and judge it, so that no scorer imports
another suite's scorer package.

* :mod:`.tl_failures`: TL-Training's tool-call error categories and reward, a failure classifier for any suite
  (opt-in: ``libraries: [tl_failures]``);
* :mod:`.rotbench`: RoTBench's data files, its ReAct answer parser and its official stage rules (used by the
  ``rotbench`` suite and by ``tltraining``, which reuses RoTBench's clean First_Turn file).
* :mod:`.rouge`: ROUGE-L as the ``rouge==1.0.1`` package computes it (API-Bank's dialogue score, NesTools'
  parameter values).
* :mod:`.bfcl_handlers`: BFCL's open-model rows (registry name -> handler, mode) and its local handlers' prompt
  text and reply decoding (rendered through :mod:`.handler_library`, decoded by the BFCL scorer); its
  ``library`` module is the handler library ``suites/bfcl/suite.yaml`` names (``generation.handlers``).
* :mod:`.handler_library`: what an official-handler library is (renderers, row choice, the option naming a row),
  and :func:`~.handler_library.load_library`, the core's one way to reach a library (by the declared name).
* :mod:`.python_dialects`: the Python-call decoders of BFCL and ACEBench as presets of
  :class:`~pytest_toolbench.parsing.python_calls.PythonCallDecoder`.

Like scorers, libraries import neither pytest, a backend nor the core: only the contract types
(:mod:`pytest_toolbench.contract.suite`, :mod:`pytest_toolbench.contract.data_files`, :mod:`pytest_toolbench.contract.errors`) and
:mod:`pytest_toolbench.parsing`.
"""
