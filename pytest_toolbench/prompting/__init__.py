"""How a request's messages become what the model is sent, apart from any engine: which suites' prompts the official
harness writes (``suite_prompts``, from suite.yaml ``generation.prompt``), which renderer each request gets
(``prompt_format``), the official handlers' renderers (``handler_formats``), the leaderboard row a checkpoint is
prompted as (``rows``), the official path's sampling and what was sent (``sampling_record``), the chat template's
message shape (``chat_template``) and the ``--toolbench-check-prompts`` report (``check``).

Imports contract, parsing and scorer_lib; no pytest, no engine (transformers only inside the check's callers).
"""
