"""Build a tiny random-weight Qwen2 model folder offline, for engine tests that cannot download weights.

The model is useless as a model but real as a workload: a ``Qwen2ForCausalLM`` (hidden 128, 4 heads of 32, since
vLLM's CPU attention needs head_dim >= 32), random weights drawn with a large ``initializer_range`` so greedy
decoding does not collapse onto one token, a byte-level BPE tokenizer trained with ``tokenizers`` on the text below
(byte-level, so every string is encodable), Qwen-style special tokens and a hermes-style chat template that renders
``tools=`` (so :func:`pytest_toolbench.parsing.tool_calls.detect_parser` picks ``hermes``).

Building takes about a second. Heavy imports (torch, transformers, tokenizers) happen inside :func:`build_tiny_model`.
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]

# A hermes-style template written for this fixture: system prompt with a <tools> block when tools are given,
# assistant tool calls as <tool_call> JSON blocks, tool results as <tool_response> user turns.
CHAT_TEMPLATE = """\
{%- if tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages and messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
{{- '# Tools\\n\\nYou may call one or more functions. Signatures:\\n<tools>' }}
{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}
{{- '\\n</tools>\\n\\nReturn each call as <tool_call>\\n{"name": <name>, "arguments": <json object>}\\n</tool_call><|im_end|>\\n' }}
{%- elif messages and messages[0].role == 'system' %}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'system' %}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>user\\n<tool_response>\\n' + (message.content | string) + '\\n</tool_response><|im_end|>\\n' }}
{%- elif message.role == 'assistant' and message.tool_calls %}
{{- '<|im_start|>assistant\\n' + (message.content or '') }}
{%- for call in message.tool_calls %}
{%- set fn = call.function if call.function is defined else call %}
{{- '<tool_call>\\n{"name": "' + fn.name + '", "arguments": ' + (fn.arguments | tojson) + '}\\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\\n' + (message.content | string) + '<|im_end|>\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""

_CORPUS = """\
The quick brown fox jumps over the lazy dog. A benchmark case asks a model to call a function with arguments.
What is the weather like in Paris today? Please book a table for two at seven pm in Berlin.
Convert 100 US dollars to euros and tell me the exchange rate. Find the area of a triangle with base 10 and height 5.
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
{"name": "calculate_area", "arguments": {"base": 10, "height": 5}}
[get_current_weather(location="Boston, MA", unit="fahrenheit"), math.factorial(number=5)]
def add(a: int, b: int) -> int: return a + b  # numbers 0 1 2 3 4 5 6 7 8 9 10 42 100 1000
Questions, answers, tools, parameters, required, properties, description, type, string, integer, number, boolean.
You are a helpful assistant. Use the tools when they are needed; otherwise answer directly and briefly.
"""


def build_tiny_model(folder: Path, *, seed: int = 0, vocab_size: int = 1024, layers: int = 2,
                     max_position_embeddings: int = 4096) -> Path:
    """Write config, safetensors weights, tokenizer files and the chat template into ``folder``; return it.
    ``max_position_embeddings``: the context; BFCL's multi-turn prompts need far more than the default."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS.splitlines() * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
        model_max_length=max_position_embeddings,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)

    config = Qwen2Config(
        vocab_size=-(-len(fast) // 64) * 64,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_position_embeddings,
        initializer_range=0.5,
        tie_word_embeddings=False,
        bos_token_id=fast.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=fast.convert_tokens_to_ids("<|im_end|>"),
        torch_dtype="float32",
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.save_pretrained(folder, safe_serialization=True)
    # Leave no generation_config.json: its defaults would silently change sampling.
    (folder / "generation_config.json").unlink(missing_ok=True)
    (folder / "tiny_model.json").write_text(json.dumps({"builder": __name__, "seed": seed}) + "\n")
    return folder
