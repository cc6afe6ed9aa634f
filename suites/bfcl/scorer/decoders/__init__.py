"""The argument syntax of BFCL's three return formats, as the prompting decoder reads model text.

- ``common``: what the Java and JavaScript parsers share (the decode error, tokens, syntax nodes, scanning steps,
  the token cursor, the call-argument reading and the guard around a parse).
- ``python``: Python call syntax through the plugin's shared decoder, in BFCL's dialect.
- ``java`` / ``javascript``: small parsers standing in for upstream's tree-sitter grammars.

``..decoding`` picks one by the category's language. Nothing here imports the rest of the scorer.
"""
