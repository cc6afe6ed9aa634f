"""Multi-turn BFCL: the conversation against BFCL's own tool classes and its checker.

- ``conversation``: the cases, the step loop (:class:`.conversation.Dialogue`, also used by ``..agentic``), the gold
  replies, transcripts and the verdict.
- ``simulators``: the official tool classes, run from the pinned bfcl-eval wheel (also the memory and web-search
  classes of ``..agentic``).
- ``executor``: the step decoders and the safe executor (upstream ``eval``\\s the calls; this walks them).
- ``checker``: ``multi_turn_checker.py`` rule for rule (state and response checks, turn by turn).
"""
