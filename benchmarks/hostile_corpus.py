"""A seeded corpus of hostile model outputs for BFCL's handler rows (issue 40, item 4).

    python benchmarks/hostile_corpus.py --seed 0 --out /tmp/hostile.jsonl

Each line is one output: ``{"id", "payload", "shape", "text", "raw_bytes"}``. ``text`` is what the model wrote;
``raw_bytes`` says that its ``\\udc80``-``\\udcff`` characters stand for bytes that are not UTF-8 (what Python's
``surrogateescape`` decoding gives for them): a replay file writes them as those raw bytes inside the JSON string,
the stub engine answers them as they are (a front end decoding bytes carelessly).

The outputs are every *payload* (a hostile value or reply) in every *shape* (the call syntax of one handler family,
so each row's own decoder gets past its wrapper and meets the payload), plus whole-reply cases (1 MB of text, NUL
bytes only, nothing, nesting alone) and every shape truncated at a seeded position. Payloads:

- ``huge_int``: a 5,000-digit integer (past Python's 4,300-digit ``int``/``str`` limit); ``huge_float``: ``1e999999``
- ``deep_list`` / ``deep_dict``: 10,000-deep nesting (past the interpreter's recursion limit)
- ``lone_surrogate``: ``\\ud800`` as a JSON escape and as the character itself
- ``nul``: NUL bytes, raw and as ``\\u0000``
- ``megabyte``: a 1 MB string argument
- ``invalid_utf8``: bytes ``\\xff\\xfe\\xc3`` inside a JSON string (``raw_bytes``)

Deterministic: the same seed gives the same file, byte for byte.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
from pathlib import Path

DEEP = 10_000
MEGABYTE = 1_000_000

#: one call syntax per handler family; ``{v}`` is the argument's value as written
SHAPES: dict[str, str] = {
    "python_list": "[get_weather(city={v})]",
    "json_list": '[{{"name": "get_weather", "arguments": {{"city": {v}}}}}]',
    "tool_call_tag": '<tool_call>\n{{"name": "get_weather", "arguments": {{"city": {v}}}}}\n</tool_call>',
    "llama_3_1": '<|python_tag|>{{"name": "get_weather", "parameters": {{"city": {v}}}}}',
    "llama_3_1_split": '{{"name": "get_weather", "parameters": {{"city": {v}}}}}; {{"name": "x", "parameters": {{}}}}',
    "granite_fc": '<function_call> {{"name": "get_weather", "arguments": {{"city": {v}}}}}',
    "phi_granite_3": '<|tool_call|>[{{"name": "get_weather", "arguments": {{"city": {v}}}}}]',
    "mistral": '[{{"name": "get_weather", "arguments": {{"city": {v}}}}}]',
    "glm": 'get_weather\n{{"city": {v}}}',
    "function_gemma": "<start_function_call>call:get_weather{{city:<escape>{v}<escape>}}<end_function_call>",
    "minicpm_fc": "<|tool_call_start|>\n```python\nget_weather(city={v})\n```\n<|tool_call_end|>",
    "think_json": '<think>plan</think>[{{"name": "get_weather", "arguments": {{"city": {v}}}}}]',
    "fenced": '```json\n[{{"name": "get_weather", "arguments": {{"city": {v}}}}}]\n```',
    "arch": '<tool_call>\n{{"name": "get_weather", "arguments": {{"city": {v}}}}}\n</tool_call>',
    "bare": "{v}",
}


def payloads(draw: random.Random) -> dict[str, tuple[str, bool]]:
    """name -> (value text, raw_bytes)."""
    digits = str(draw.randint(1, 9)) + "".join(draw.choice(string.digits) for _ in range(4_999))
    letters = "".join(draw.choice(string.ascii_letters) for _ in range(MEGABYTE))
    return {
        "huge_int": (digits, False),
        "huge_float": ("1e999999", False),
        "deep_list": ("[" * DEEP + "]" * DEEP, False),
        "deep_dict": ('{"a": ' * DEEP + "1" + "}" * DEEP, False),
        "lone_surrogate": ('"\\ud800 lone \ud800 \udfff"', False),
        "nul": ('"nul\x00byte \\u0000"', False),
        "megabyte": ('"' + letters + '"', False),
        "invalid_utf8": ('"bad \udcff\udcfe\udcc3 bytes"', True),
    }


def corpus(seed: int) -> list[dict]:
    draw = random.Random(seed)
    values = payloads(draw)
    out: list[dict] = []

    def add(payload: str, shape: str, text: str, raw: bool) -> None:
        out.append({"id": f"{payload}/{shape}", "payload": payload, "shape": shape, "text": text, "raw_bytes": raw})

    for payload, (value, raw) in values.items():
        for shape, template in SHAPES.items():
            if payload == "megabyte" and shape not in ("python_list", "json_list", "tool_call_tag", "bare"):
                continue  # four 1 MB shapes are enough; the others meet 1 MB below, as a whole reply
            add(payload, shape, template.format(v=value), raw)
    for shape, template in SHAPES.items():  # truncated calls: each shape with a plain value, cut at a seeded place
        whole = template.format(v='"Paris"')
        add("truncated", shape, whole[:draw.randrange(1, len(whole))], False)
    noise = "".join(draw.choice(string.printable) for _ in range(MEGABYTE))
    add("megabyte_reply", "text", noise, False)
    add("nul_reply", "text", "\x00" * 64, False)
    add("empty_reply", "text", "", False)
    add("deep_reply", "text", "(" * DEEP + ")" * DEEP, False)
    add("unclosed_reply", "text", "[get_weather(city='Paris'" + "[" * DEEP, False)
    return out


def line_bytes(record: dict) -> bytes:
    """One JSON line; a ``raw_bytes`` record's escaped characters become the raw bytes they stand for."""
    if record.get("raw_bytes"):
        return json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"
    return json.dumps(record).encode("ascii") + b"\n"


def read_corpus(path: Path) -> list[dict]:
    """The corpus back (raw bytes read as ``surrogateescape`` characters, as written)."""
    return [json.loads(line) for line in path.read_bytes().decode("utf-8", "surrogateescape").splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    records = corpus(args.seed)
    with open(args.out, "wb") as handle:
        for record in records:
            handle.write(line_bytes(record))
    print(f"{len(records)} hostile outputs (seed {args.seed}) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
