"""Agentic BFCL (v4): memory (kv, vector, rec_sum) and web search (base, no snippet).

- ``conversation``: the cases, the step loop of each entry (a memory question after its scenario's prerequisite
  conversations), the gold replies and the agentic checker (the final answer against the ground truth).
- ``memory``: the official memory backends, their snapshots and the memory instruction.
"""
