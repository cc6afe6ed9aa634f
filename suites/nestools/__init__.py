"""Suite nestools: NesTools: nested tool learning (Selection / Order / Parameter / Nested-Param, Tree) (see suite.yaml)."""
