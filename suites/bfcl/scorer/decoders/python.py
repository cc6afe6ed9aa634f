"""The Python return format: BFCL's prompting decoder for Python call syntax.

Upstream (bfcl-eval 2026.3.23 at gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8,
``bfcl_eval/model_handler/utils.py``: ``ast_parse`` with ``resolve_ast_call`` / ``resolve_ast_by_type``) parses the
text with Python's ``ast`` and runs ``eval`` on constant expressions; here the plugin's shared decoder reads the same
syntax without ``eval``, in BFCL's dialect.
"""

from __future__ import annotations

import dataclasses

from pytest_toolbench.scorer_lib.python_dialects import BFCL_PROMPTING, PythonCallDecoder
from .common import DecodeError

#: Python return format: the shared decoder (:mod:`pytest_toolbench.parsing.python_calls`) in BFCL's dialect
#: (``default_decode_ast_prompting``: bare calls and list/tuple/set displays, nested calls without keywords kept as
#: source text, f-strings and set displays in constant arithmetic, ``{1, 2} | {3}`` included; source text rendered
#: with ``bfcl evaluate``'s stack, so operator chains and subscripts too deep for upstream's ``ast.unparse`` fail at
#: the same length), raising this package's :class:`DecodeError`. Deviations: constant arithmetic is bounded
#: (too-large results count as undecodable), and a call inside it (``set() | {1}``, ``len('ab') + 1``), which
#: upstream's ``eval`` runs, is undecodable here; neither occurs in a gold output (2,351 Python entries).
PYTHON_DECODER = PythonCallDecoder(dataclasses.replace(BFCL_PROMPTING, error=DecodeError))

#: ``decode_python(text)``: decode python-call syntax the way BFCL's prompting decoder does, quirks included.
decode_python = PYTHON_DECODER.decode
