"""The ``vllm`` backend: one in-process ``vllm.LLM``, or ``--toolbench-replicas`` engines as Ray actors.

The modules, each one concern (imports run down this list, never up):

- ``engine_log``: vLLM's log to a file, its warnings once on the terminal;
- ``options``: the backend's command-line options, the frozen ``VllmOptions`` they become, the one engine-arguments
  parser, the replica options' check;
- ``shims``: what differs between vLLM versions and builds (the CPU build, ``LLM.enqueue`` or not, request ids);
- ``prompt_segments``: token ids of a conversation's earlier turns reused across its steps;
- ``prompts``: prompt preparation (tokenizer, chat template, the official renderer per suite, token ids);
- ``batch``: request preparation (sampling, over-long prompts, the engine's order, parts) and the Generation of a
  finished completion;
- ``executor``: the one ``generate`` skeleton, over an executor;
- ``stream``: the in-process executor (batched or streamed) and the conversation stream;
- ``engine``: ``VllmBackend``, the backend itself (fingerprint, engine start, ``generate``);
- ``ray_actor``: one engine replica as a Ray actor;
- ``dispatch``: the Ray executor, one ``generate`` call across the replicas;
- ``replicas``: ``ReplicatedVllmBackend``, the replicas' controller;
- ``plugin``: the kind (``VllmKind``; its hookimpl is in ``plugin/backend_kinds.py``).

The model's identity (a local checkpoint's content hash, a Hub id's commit) is ``backends.model_source``'s. vllm,
torch, transformers and ray are imported inside methods only, when an engine starts: importing any module here is
cheap.
"""
