"""Simulated-user turns: routed to the user model, keyed apart from the model under test."""

from __future__ import annotations

from pytest_toolbench.backends.user_simulator import UserSimulatorRouter
from pytest_toolbench.run.cache import request_key
from pytest_toolbench.contract.suite import MODEL_BACKEND, SIMULATED_USER, Case, Generation, Request, Task


class Echoing:
    """A deterministic backend that answers with its own name (stands for two different models)."""

    capabilities = MODEL_BACKEND

    def __init__(self, name: str):
        self.name = name
        self.seen: list[Request] = []

    def fingerprint(self):
        return {"backend": self.name}

    def generate(self, tasks, on_chunk=None, on_progress=None):
        self.seen.extend(t.request for t in tasks)
        answers = [Generation(text=f"{self.name}:{t.request.messages[-1]['content']}") for t in tasks]
        if on_chunk:
            on_chunk(list(enumerate(answers)))
        return answers

    def close(self):
        pass


CASE = Case("en-agent_multi_turn_0", "agent_multi_turn", {}, suite="acebench")


def test_router_sends_user_turns_to_the_user_model_and_keeps_order():
    model, user = Echoing("model"), Echoing("user")
    router = UserSimulatorRouter(model, user)
    tasks = [Task(CASE, Request([{"role": "user", "content": "a"}])),
             Task(CASE, Request([{"role": "user", "content": "b"}], simulates="user")),
             Task(CASE, Request([{"role": "user", "content": "c"}]))]
    chunks = []
    answers = router.generate(tasks, on_chunk=chunks.extend)
    assert [a.text for a in answers] == ["model:a", "user:b", "model:c"]
    assert sorted(i for i, _ in chunks) == [0, 1, 2]
    assert [r.messages[-1]["content"] for r in user.seen] == ["b"]


def test_cache_keys_of_model_requests_do_not_change_with_a_user_model():
    router = UserSimulatorRouter(Echoing("model"), Echoing("user"))
    plain = {"backend": "model"}
    request = Request([{"role": "user", "content": "hi"}])
    user_turn = Request([{"role": "user", "content": "hi"}], simulates="user")
    assert request_key(router.fingerprint(), request) == request_key(plain, request)
    assert request_key(router.fingerprint(), user_turn) != request_key(plain, user_turn)
    assert request_key(router.fingerprint(), user_turn) == request_key({"backend": "user"}, user_turn)
    assert router.fingerprint()[SIMULATED_USER] == {"backend": "user"}
