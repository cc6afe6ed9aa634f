"""Incremental tokenization of a conversation's prompts: only the new turn is tokenized, the earlier turns' token ids
are reused.

Each step of a conversation renders its whole history again (BFCL's multi-turn prompts reach ~6.6k tokens), so
tokenizing each prompt from scratch is most of the host work per step. A Hugging Face tokenizer first cuts the text
at its added tokens (``<|im_start|>``, ``<|im_end|>``, ...), which are never merged with their neighbours, and
tokenizes the pieces between them independently. So the ids of a prompt are the ids of its pieces, in order, with the
added tokens' own ids between them; a piece the conversation's previous prompt already had (every earlier turn) keeps
its ids, and only new pieces are tokenized. That is exact by construction where the tokenizer works that way, which
is checked three ways, falling back to full tokenization whenever it does not hold:

* the tokenizer qualifies: a fast tokenizer whose added tokens neither strip their neighbours' whitespace
  (``lstrip``/``rstrip``), nor match single words only, nor match normalized text;
* the first ``VERIFY_FIRST`` prompts of each kind (with and without the tokenizer's own special tokens) and then every
  ``VERIFY_EVERY``-th are compared with a full tokenization; one difference (a scheme that treats the first piece
  differently, such as SentencePiece's prefix space) switches the incremental path off for the run, and the full
  tokenization is used from then on;
* a text without any added token is tokenized in full.

References: Hugging Face ``tokenizers``, ``AddedVocabulary`` (added tokens are split out before normalization and
pre-tokenization; pieces are tokenized independently).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Hashable, Sequence

#: Prompts of each kind compared with a full tokenization before the incremental path is trusted, then one in this many.
VERIFY_FIRST = 4
VERIFY_EVERY = 64
#: Conversations whose pieces are kept (least recently used dropped first): memory stays one prompt per conversation.
CONVERSATIONS_KEPT = 4096


def qualifies(tokenizer: Any) -> str | None:
    """None when the tokenizer splits at its added tokens as described above, else why it does not."""
    if not getattr(tokenizer, "is_fast", False):
        return "not a fast tokenizer"
    added = getattr(tokenizer, "added_tokens_decoder", None)
    if not added:
        return "no added tokens to cut at"
    for token in added.values():
        for quirk in ("lstrip", "rstrip", "single_word", "normalized"):
            if getattr(token, quirk, False):
                return f"added token {str(token)!r} has {quirk}"
    return None


class SegmentedEncoder:
    """``encode(texts, flags, conversations)``: token ids of each text, reusing the pieces of the same
    conversation's previous prompt (``conversations[i]`` None: tokenized in full)."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self.disabled = qualifies(tokenizer)
        self.pieces: OrderedDict[Hashable, dict[str, list[int]]] = OrderedDict()
        self.checked = {False: 0, True: 0}
        self.counts = {"prompts": 0, "pieces_reused": 0, "pieces_tokenized": 0, "verified": 0}
        if self.disabled is None:
            added = {getattr(token, "content", str(token)): token_id
                     for token_id, token in tokenizer.added_tokens_decoder.items()}
            self.added_ids = added
            self.cut = re.compile("(" + "|".join(re.escape(t) for t in sorted(added, key=len, reverse=True)) + ")")
            self.edges = {flag: self._edges(flag) for flag in (False, True)}

    def _edges(self, flag: bool) -> tuple[list[int], list[int]] | None:
        """The ids the tokenizer adds around a text (a BOS, say) when asked for its special tokens."""
        if not flag:
            return [], []
        bare = list(self.tokenizer("x", add_special_tokens=False)["input_ids"])
        full = list(self.tokenizer("x", add_special_tokens=True)["input_ids"])
        for start in range(len(full) - len(bare) + 1):
            if full[start:start + len(bare)] == bare:
                return full[:start], full[start + len(bare):]
        return None

    def describe(self) -> dict[str, Any]:
        return {"incremental": self.disabled is None, **({"why_not": self.disabled} if self.disabled else {}),
                **self.counts}

    def full(self, texts: Sequence[str], flag: bool) -> list[list[int]]:
        return [list(row) for row in self.tokenizer(list(texts), add_special_tokens=flag)["input_ids"]] if texts \
            else []

    def encode(self, texts: Sequence[str], flag: bool, conversations: Sequence[Hashable | None]) -> list[list[int]]:
        """Token ids of ``texts``, tokenized with (``flag``) or without the tokenizer's special tokens."""
        if self.disabled is not None or self.edges.get(flag) is None:
            return self.full(texts, flag)
        out: list[list[int] | None] = [None] * len(texts)
        whole = [i for i, c in enumerate(conversations) if c is None]
        split: dict[int, list[str]] = {}
        for i, conversation in enumerate(conversations):
            if conversation is None:
                continue
            parts = self.cut.split(texts[i])
            if len(parts) == 1:
                whole.append(i)
            else:
                split[i] = parts
        if whole:
            for i, ids in zip(whole, self.full([texts[i] for i in whole], flag)):
                out[i] = ids
        wanted: dict[str, list[int] | None] = {}
        for i, parts in split.items():
            known = self.pieces.get(conversations[i], {})
            for piece in parts[0::2]:
                if piece and piece not in known and piece not in wanted:
                    wanted[piece] = None
        if wanted:
            fresh = list(wanted)
            for piece, ids in zip(fresh, self.tokenizer(fresh, add_special_tokens=False)["input_ids"]):
                wanted[piece] = list(ids)
        before, after = self.edges[flag]
        for i, parts in split.items():
            known = self.pieces.pop(conversations[i], {})
            kept: dict[str, list[int]] = {}
            ids = list(before)
            for number, piece in enumerate(parts):
                if number % 2:
                    ids.append(self.added_ids[piece])
                elif piece:
                    piece_ids = known.get(piece)
                    if piece_ids is None:
                        piece_ids = wanted[piece]
                        self.counts["pieces_tokenized"] += 1
                    else:
                        self.counts["pieces_reused"] += 1
                    kept[piece] = piece_ids
                    ids.extend(piece_ids)
            ids.extend(after)
            self.pieces[conversations[i]] = kept
            out[i] = ids
        while len(self.pieces) > CONVERSATIONS_KEPT:
            self.pieces.popitem(last=False)
        self.counts["prompts"] += len(split)
        return self._verified(texts, flag, out, list(split))

    def _verified(self, texts: Sequence[str], flag: bool, out: list[Any], incremental: list[int]) -> list[list[int]]:
        """Compare the first prompts and then a sample with a full tokenization; one difference switches the
        incremental path off and every prompt of this call is tokenized in full."""
        chosen = []
        for i in incremental:
            self.checked[flag] += 1
            if self.checked[flag] <= VERIFY_FIRST or self.checked[flag] % VERIFY_EVERY == 0:
                chosen.append(i)
        if chosen:
            self.counts["verified"] += len(chosen)
            for i, ids in zip(chosen, self.full([texts[i] for i in chosen], flag)):
                if ids != out[i]:
                    self.disabled = (f"a prompt's pieces tokenized apart differ from the whole "
                                     f"({'with' if flag else 'without'} special tokens)")
                    self.pieces.clear()
                    return self.full(texts, flag)
        return out
