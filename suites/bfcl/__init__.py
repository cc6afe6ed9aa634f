"""Suite bfcl: BFCL v4 single-turn (AST + relevance, 13 categories) (see suite.yaml)."""
