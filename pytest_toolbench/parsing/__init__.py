"""Parsing of model output shared by backends and scorers: native tool-call formats (``tool_calls``), Python-call
text with each benchmark's quirks as flags (``python_calls``), bounded constant arithmetic (``arithmetic``)."""
