"""Multi-turn BFCL: the conversation against BFCL's own tool classes and its checker.

- ``conversation``: the cases, the turns of an entry (holdouts), the gold replies, transcripts and the verdict.
- ``dialogue``: the step loop of one entry, prompting or FC (:class:`.dialogue.Dialogue`, also used by ``..agentic``).
- ``simulators``: the official tool classes, run from the pinned bfcl-eval wheel (also the memory and web-search
  classes of ``..agentic``).
- ``executor``: the step decoders and the safe executor (upstream ``eval``\\s the calls; this walks them).
- ``checker``: ``multi_turn_checker.py`` rule for rule (state and response checks, turn by turn).
"""
