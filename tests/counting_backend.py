"""A deterministic local "engine" for the plugin's end-to-end tests, as the text of a conftest that registers it.

It answers the example echo suite correctly except for texts containing 'bye', and logs every batch it is asked for
(``COUNTING_LOG``, one JSON line per batch with the pid and size). ``COUNTING_PAD=N`` pads each answer with N spaces
(still valid JSON) to make the cache grow; ``COUNTING_KILL_AFTER=N`` kills the process after its N-th answer.
"""

COUNTING_BACKEND = '''
import json, os, signal
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation


class CountingBackend:
    name = "counting"
    capabilities = MODEL_BACKEND

    def __init__(self, options):
        self.log = os.environ["COUNTING_LOG"]

    def fingerprint(self):
        return {"backend": "counting", "version": 1}

    def generate(self, tasks, on_chunk=None, **_):
        with open(self.log, "a") as handle:
            handle.write(json.dumps({"pid": os.getpid(), "n": len(tasks)}) + "\\n")
        pad = " " * int(os.environ.get("COUNTING_PAD", "0"))
        out = []
        for index, task in enumerate(tasks):
            text = task.request.messages[-1]["content"].removeprefix("Echo this: ")
            answer = "not json" if "bye" in text else json.dumps({"name": "echo", "arguments": {"text": text}})
            out.append(Generation(text=answer + pad, finish_reason="stop", prompt_tokens=5, output_tokens=7))
            if on_chunk is not None:
                on_chunk([(index, out[-1])])
            if os.environ.get("COUNTING_KILL_AFTER") == str(index + 1):
                os.kill(os.getpid(), signal.SIGKILL)
        return out

    def close(self):
        pass


def pytest_toolbench_register(registry):
    registry.add_backend("counting", CountingBackend)
'''
