"""Suite tltraining: TL-Training protocol (TS / PI / CF, TL error categories) (see suite.yaml)."""
