"""Conversations without rounds (``run/conversations.py`` ``converse``): the same requests, answers, transcripts and
verdicts as step-synchronous rounds, resumable after an interrupt; incremental cache keys equal to ``request_key``;
incremental tokenization equal to a full one, or switched off where it would not be."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from conftest import REPO
from pytest_toolbench.backends.vllm.prompt_segments import SegmentedEncoder, qualifies
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.suite import MODEL_BACKEND, SIMULATED_USER, Generation, Request, SuiteContext
from pytest_toolbench.run.cache import ConversationKeys, GenerationCache, request_key
from pytest_toolbench.run.generation import pregenerate
from pytest_toolbench.run.requests import Answerer, run_case
from shipped import scorer

bfcl = scorer("bfcl")
multi_turn = scorer("bfcl", "multi_turn.conversation")


# -- incremental cache keys ---------------------------------------------------------------------------------------------

def test_conversation_keys_equal_request_key_for_growing_edited_and_varied_requests():
    fingerprint = {"model": "m", "sampling": {"temperature": 0.0}, SIMULATED_USER: {"model": "u"}}
    draw = random.Random(0)
    keys = ConversationKeys(fingerprint)
    for conversation in range(30):
        messages: list[dict] = []
        for _ in range(6):
            messages = messages + [{"role": draw.choice(["user", "assistant", "tool"]),
                                    "content": "é\ud800x" * draw.randrange(4), "n": draw.random()}]
            if draw.random() < 0.2:  # an earlier message edited: hashed in full again
                messages[0] = {"role": "system", "content": f"changed {draw.random()}"}
            request = Request(messages=tuple(messages), tools=[{"name": "f"}] if draw.random() < 0.5 else None,
                              max_tokens=draw.choice([5, 6]), temperature=draw.choice([None, 0.1]),
                              context_reserve=draw.choice([0, 2]), sample=draw.choice([0, 1]),
                              simulates=draw.choice([None, "user"]))
            assert keys.key(conversation % 7, request) == request_key(fingerprint, request)


# -- incremental tokenization -------------------------------------------------------------------------------------------

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CORPUS = ["The quick brown fox jumps over the lazy dog.", "def f(a, b): return a + b", "  spaces\tand\nlines  ",
          '{"name": "get_weather", "arguments": {"city": "Paris"}}'] * 4


def _tokenizer(metaspace: bool = False):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if metaspace:  # SentencePiece-style: a prefix space on the first piece only
        raw = Tokenizer(models.BPE(unk_token="<unk>"))
        raw.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
        trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", *SPECIALS], show_progress=False)
    else:
        raw = Tokenizer(models.BPE())
        raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        raw.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    raw.train_from_iterator(CORPUS, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIALS[1:])


def _turns(count: int, draw: random.Random) -> list[str]:
    """The prompts of one conversation: each the previous one's text, its answer and a new turn."""
    text, prompts = "<|im_start|>system\nYou call tools.<|im_end|>\n", []
    for _ in range(count):
        text += f"<|im_start|>user\n{draw.choice(CORPUS)} {draw.random()}<|im_end|>\n<|im_start|>assistant\n"
        prompts.append(text)
        text += f"{draw.choice(CORPUS)}<|im_end|>\n"
    return prompts


def test_a_conversation_tokenized_piece_by_piece_equals_its_full_tokenization():
    tokenizer = _tokenizer()
    encoder = SegmentedEncoder(tokenizer)
    assert encoder.disabled is None
    draw = random.Random(1)
    conversations = {number: _turns(5, draw) for number in range(6)}
    for step in range(5):
        texts = [conversations[n][step] for n in conversations] + ["no added token here"]
        for flag in (False, True):
            ids = encoder.encode(texts, flag, [(flag, n) for n in conversations] + [None])
            assert ids == [list(row) for row in tokenizer(texts, add_special_tokens=flag)["input_ids"]]
    assert encoder.disabled is None
    counts = encoder.describe()
    assert counts["incremental"] and counts["pieces_reused"] > counts["pieces_tokenized"] > 0


def test_tokenization_falls_back_to_full_where_pieces_apart_differ_from_the_whole():
    tokenizer = _tokenizer(metaspace=True)
    encoder = SegmentedEncoder(tokenizer)
    texts = _turns(3, random.Random(2))
    got = [encoder.encode([text], False, ["c"])[0] for text in texts]
    assert got == [list(row) for row in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    assert encoder.disabled and "differ" in encoder.disabled


def test_a_tokenizer_whose_added_tokens_strip_whitespace_is_tokenized_in_full():
    tokenizer = _tokenizer()
    from tokenizers import AddedToken

    tokenizer.add_tokens([AddedToken("<tool>", lstrip=True)])
    assert "lstrip" in qualifies(tokenizer)
    encoder = SegmentedEncoder(tokenizer)
    text = "a <tool> b<|im_end|>"
    assert encoder.encode([text], False, ["c"]) == [list(tokenizer(text, add_special_tokens=False)["input_ids"])]


# -- conversations without rounds -----------------------------------------------------------------------------------

class Scripted:
    """A cacheable model answering each step with BFCL's gold reply (so tools run and conversations go on); its
    stream hands answers back out of order, a few per step, as an engine finishes them."""

    capabilities = MODEL_BACKEND
    chunk_size = 1
    commit_seconds = 30.0

    def __init__(self, continuous: bool, interrupt_after: int | None = None):
        self.continuous = continuous
        self.interrupt_after = interrupt_after
        self.generated = 0
        self.batches: list[int] = []

    def fingerprint(self):
        return {"backend": "scripted"}

    def answer(self, task):
        self.generated += 1
        if self.interrupt_after is not None and self.generated > self.interrupt_after:
            raise KeyboardInterrupt
        return Generation(text=bfcl.gold_reply(task.case, task.step, task.request), finish_reason="stop",
                          prompt_tokens=len(task.request.messages), output_tokens=1)

    def generate(self, tasks, on_chunk=None, on_progress=None):
        self.batches.append(len(tasks))
        answers = [self.answer(task) for task in tasks]
        if on_chunk is not None:
            on_chunk(list(enumerate(answers)))
        return answers

    def open_stream(self):
        return _Stream(self)


class _Stream:
    def __init__(self, backend: Scripted):
        self.backend, self.queue, self.draw = backend, [], random.Random(3)

    def add(self, tasks, tags):
        self.queue += list(zip(tags, tasks))

    def pending(self):
        return len(self.queue)

    def step(self):
        chosen = self.draw.sample(range(len(self.queue)), min(len(self.queue), self.draw.randint(1, 3)))
        done = [self.queue[i] for i in chosen]
        self.queue = [item for i, item in enumerate(self.queue) if i not in chosen]
        return [(tag, self.backend.answer(task)) for tag, task in done]

    def close(self):
        pass


@pytest.fixture(scope="module")
def conversations(shared_data):
    loaded = bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": list(multi_turn.MULTI_TURN)}))
    chosen = [case for category in multi_turn.MULTI_TURN for case in
              [c for c in loaded if c.category == category][:3]]
    definition = load_definition(REPO / "suites" / "bfcl" / "suite.yaml")
    suite = SimpleNamespace(benchmark=bfcl, interactive=True,
                            definition=SimpleNamespace(generation=definition.generation, max_tokens=512))
    return suite, chosen


def _run(suite, cases, backend, folder):
    cache = GenerationCache(folder)
    lines: list[str] = []
    try:
        stats = pregenerate([(suite, case) for case in cases], backend, cache, backend.fingerprint(), None,
                            progress=lines.append)
    finally:
        cache.close()
    return stats, lines


def _outcome(suite, cases, folder):
    cache = GenerationCache(folder, readonly=True)
    answer = Answerer(None, cache, Scripted(True).fingerprint())
    transcripts = {case.case_id: run_case(case, suite, answer, None) for case in cases}
    rows = {key: cache.get(key) for key in cache_keys(folder)}
    cache.close()
    verdicts = {case_id: bfcl.score(case, transcripts[case_id]) for case_id, case in
                ((c.case_id, c) for c in cases)}
    return rows, transcripts, verdicts


def cache_keys(folder) -> list[str]:
    import sqlite3

    with sqlite3.connect(folder / "generations.sqlite") as db:
        return [row[0] for row in db.execute("SELECT key FROM generations")]


def test_conversations_without_rounds_match_rounds_and_resume_after_an_interrupt(conversations, tmp_path):
    suite, cases = conversations
    rounds_stats, _ = _run(suite, cases, Scripted(False), tmp_path / "rounds")
    stats, lines = _run(suite, cases, Scripted(True), tmp_path / "continuous")
    assert rounds_stats.rounds > 2
    assert (stats.requested, stats.generated, stats.cached, stats.rounds) == \
        (rounds_stats.requested, rounds_stats.generated, rounds_stats.cached, rounds_stats.rounds)
    assert any(line.startswith("conversations: 12 ran without rounds") for line in lines), lines
    reference = _outcome(suite, cases, tmp_path / "rounds")
    assert _outcome(suite, cases, tmp_path / "continuous") == reference
    assert all(verdict.passed for verdict in reference[2].values())  # gold replies: every conversation passes

    # interrupted after 7 answers (committed one by one), then resumed: nothing committed is generated again
    interrupted = Scripted(True, interrupt_after=7)
    with pytest.raises(KeyboardInterrupt):
        _run(suite, cases, interrupted, tmp_path / "resumed")
    assert len(cache_keys(tmp_path / "resumed")) == 7
    resumed, _ = _run(suite, cases, Scripted(True), tmp_path / "resumed")
    assert resumed.generated == stats.generated - 7
    assert _outcome(suite, cases, tmp_path / "resumed") == reference
