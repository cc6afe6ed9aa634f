"""The backend contract beyond ``generate`` (``contract/engine.py``): what pre-generation uses of a backend (start,
news, figures, commit rhythm, a stream) is read through typed protocols; a backend that declares one (names it among
its bases) without its members is one clear error when it is built (``backends.checked``); one that merely has the
members is used as before; the built-in backends have what they declare."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_toolbench.backends import checked
from pytest_toolbench.backends.openai_endpoint import OpenAIEndpointBackend
from pytest_toolbench.backends.user_simulator import UserSimulatorRouter
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
from pytest_toolbench.contract.engine import CAPABILITIES, CommitRhythm, ListeningBackend, StartableBackend, \
    StatsBackend, StreamingBackend, declared, lacking, offers
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import MODEL_BACKEND, Case, Generation, Request
from pytest_toolbench.run.cache import GenerationCache
from pytest_toolbench.run.generation import pregenerate


class Engine:
    """A model backend with an engine to start, news to tell and figures to give, none of it declared."""

    name = "engine"
    capabilities = MODEL_BACKEND

    def __init__(self):
        self.calls: list = []

    def fingerprint(self):
        return {"model": "m"}

    def listen(self, write):
        self.calls.append("listen")
        write("replica 0 ready")

    def start(self):
        self.calls.append("start")

    def generate(self, tasks, *, on_chunk=None, on_progress=None):
        self.calls.append(("generate", len(tasks)))
        return [Generation(text=f"answer {t.case.case_id}", finish_reason="stop", prompt_tokens=3, output_tokens=2)
                for t in tasks]

    def stats(self):
        return {"requests": 3, "engine_start_seconds": 99.0}

    def close(self):
        pass


class DeclaredEngine(Engine, StartableBackend, ListeningBackend, StatsBackend):
    """The same backend, its capabilities declared."""


class ClaimsAStream(Engine, StreamingBackend):
    """Declares a stream it does not have."""


class StatsAsAValue(Engine):
    stats = {"not": "callable"}


def _suite():
    benchmark = SimpleNamespace(build_request=lambda case: Request(messages=({"role": "user",
                                                                              "content": case.case_id * 10},)))
    return SimpleNamespace(name="s", interactive=False, benchmark=benchmark,
                           definition=SimpleNamespace(generation={"max_tokens": 8}, max_tokens=8))


def _pregenerate(backend, folder):
    suite = _suite()
    entries = [(suite, Case(suite="s", case_id=f"c{i}", category="x", payload={})) for i in range(3)]
    lines: list[str] = []
    stats = pregenerate(entries, backend, GenerationCache(folder), backend.fingerprint(), None, progress=lines.append)
    return stats, lines


@pytest.mark.parametrize("kind", [Engine, DeclaredEngine])
def test_pregeneration_starts_listens_and_reads_the_figures_of_a_backend_that_offers_them(kind, tmp_path):
    backend = checked(kind(), "engine")
    assert [capability.__name__ for capability in CAPABILITIES if offers(backend, capability)] == \
        ["ListeningBackend", "StartableBackend", "StatsBackend"]
    stats, lines = _pregenerate(backend, tmp_path)
    assert backend.calls == ["listen", "start", ("generate", 3)]
    assert lines[0] == "replica 0 ready" and lines[1].startswith("engine started in ")
    assert stats.backend == {"requests": 3, "engine_start_seconds": 99.0}
    assert stats.engine_startup_s is not None and stats.engine_startup_s < 99.0  # the start the core timed
    assert (stats.requested, stats.generated, stats.cached) == (3, 3, 0)
    rerun = kind()
    again, _ = _pregenerate(rerun, tmp_path)  # everything cached: no engine started
    assert rerun.calls == [] and (again.cached, again.generated) == (3, 0)


def test_a_declared_capability_without_its_members_is_one_error_when_the_backend_is_built():
    with pytest.raises(ToolbenchError) as error:
        checked(ClaimsAStream(), "mine")
    assert str(error.value) == ("backend 'mine' (ClaimsAStream) declares StreamingBackend "
                                "(pytest_toolbench.contract.engine) but lacks continuous, open_stream")
    assert lacking(ClaimsAStream(), StreamingBackend) == ["continuous", "open_stream"]
    assert not offers(ClaimsAStream(), StreamingBackend)  # the protocol's own empty stubs are not an engine's

    class ForgotStart(Engine, StartableBackend):
        start = None  # type: ignore[assignment]

    with pytest.raises(ToolbenchError, match="declares StartableBackend .* but lacks start"):
        checked(ForgotStart(), "mine")


def test_a_member_that_is_not_a_method_is_not_offered(tmp_path):
    backend = checked(StatsAsAValue(), "engine")  # undeclared: nothing to refuse
    assert not offers(backend, StatsBackend)
    stats, _ = _pregenerate(backend, tmp_path)
    assert stats.backend == {}


def test_the_built_in_backends_have_what_they_declare():
    endpoint = OpenAIEndpointBackend("http://127.0.0.1:9", "m", api_key_env=None)
    engine = VllmBackend("some/model")
    replicas = ReplicatedVllmBackend(engine, 2)
    router = UserSimulatorRouter(engine, endpoint)
    expected = {
        endpoint: {StatsBackend, CommitRhythm},
        engine: {StartableBackend, StatsBackend, CommitRhythm, StreamingBackend},
        replicas: {ListeningBackend, StartableBackend, StatsBackend},
        router: {ListeningBackend, StartableBackend, StatsBackend},
    }
    for backend, capabilities in expected.items():
        assert set(declared(backend)) == capabilities, type(backend).__name__
        assert checked(backend, backend.name) is backend
        assert all(offers(backend, capability) for capability in capabilities)
    assert router.stats()["requests"] == 0  # the model's figures through the router
