"""Single-turn BFCL: the rules of the AST checker and the FC (native tool-calling) path.

- ``ast_checker``: ``ast_checker.py`` rule for rule (calls against the ground truth's acceptable values).
- ``converters``: the Java and JavaScript literal converters the AST checker applies to source-text values.
- ``fc``: what an FC handler records for a native reply, its ``decode_ast``, FC result-file records.

The verdict built on them is ``..checker``; the prompting decoder is ``..decoding``.
"""
