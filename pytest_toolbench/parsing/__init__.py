"""Parsing of model output shared by backends and scorers (native tool-call formats, bounded arithmetic)."""
