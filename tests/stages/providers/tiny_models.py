"""A tiny randomly initialised GPT-2 and a word-level tokenizer, built in a test (no Hub).

The hf and vllm provider tests load it like any local model folder. Its words are random, so
tests check what does not depend on them: rendering, batching, samples, stops, seeds, usage.
"""

from __future__ import annotations

from pathlib import Path

import tokenizers
import torch
import transformers

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}"
    "{% if not loop.last or m['role'] != 'assistant' %}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
WORDS = [
    "def",
    "return",
    "add",
    "a",
    "b",
    "x",
    "y",
    "print",
    "for",
    "in",
    "range",
    "if",
    "else",
    "import",
    "python",
    "```",
    "(",
    ")",
    ":",
    ",",
    "+",
    "-",
    "=",
    "0",
    "1",
    "2",
]


def make_tiny_gpt2(path: Path, *, chat: bool, n_positions: int = 256) -> Path:
    """Save a randomly initialised one-layer GPT-2 and a word-level tokenizer in `path`."""
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, "\n": 3, " ": 4}
    for word in WORDS + [chr(c) for c in range(ord("a"), ord("z") + 1)]:
        vocab.setdefault(word, len(vocab))
    model = tokenizers.models.WordLevel(vocab=vocab, unk_token="<unk>")
    raw = tokenizers.Tokenizer(model)
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Split(" ", behavior="isolated")
    raw.decoder = tokenizers.decoders.Fuse()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    if chat:
        tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    gpt = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=len(vocab),
            n_positions=n_positions,
            n_embd=64,  # 32 per head: vLLM's CPU attention needs a real head size
            n_layer=1,
            n_head=2,
            bos_token_id=1,
            eos_token_id=1,
            pad_token_id=0,
        )
    )
    tokenizer.save_pretrained(path)
    gpt.save_pretrained(path)
    return path
