"""Repository-level conftest: nothing benchmark-specific lives here (the plugin is loaded by its entry point).

``reports/`` is the default folder for HTML, JSON and Markdown reports given as bare file names.
"""
