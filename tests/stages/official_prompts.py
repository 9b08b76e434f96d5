"""Write the official BigCodeBench chat prompts' digests: the fixture of
tests/stages/test_prompts.py::test_every_bigcodebench_prompt_matches_the_official_function.

Runs in the official tool's interpreter, not passbench's: it calls bigcodebench 0.2.5's own
`make_raw_chat_prompt` on every task of BigCodeBench v0.1.4, both splits, three ways (no
tokenizer: the API prompt; a ChatML chat template with the response prefilled; the same
template without prefill), and writes a SHA-256 digest (first 16 hex digits) of each prompt.
To regenerate, in a throwaway folder outside the repository (only the prompt-building module
is needed; it imports `transformers` for a type name only, so a one-line stub does):

    python3 -m venv /tmp/bcb-official
    /tmp/bcb-official/bin/pip install --no-deps bigcodebench==0.2.5
    mkdir -p /tmp/bcb-stub/transformers
    echo 'AutoTokenizer = None' > /tmp/bcb-stub/transformers/__init__.py
    PYTHONPATH=/tmp/bcb-stub /tmp/bcb-official/bin/python tests/stages/official_prompts.py \\
        ../shared/datasets/bigcodebench/BigCodeBench-v0.1.4.jsonl.gz \\
        > tests/stages/data/official-bigcodebench-prompts.json

The instruction and response prefixes are the official defaults (bigcodebench/generate.py);
tests/stages/test_prompts.py holds the same strings and checks the fixture was made with them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from importlib.metadata import version
from typing import Any

INSTRUCTION_PREFIX = (
    "Please provide a self-contained Python script that solves the following problem in a "
    "markdown code block:"
)
RESPONSE_PREFIX = (
    "Below is a Python script with a self-contained function that solves the problem and passes "
    "corresponding tests:"
)
#: The three ways each prompt is built, in the order of each task's digests.
VARIANTS = ("api", "chatml-prefilled", "chatml-no-prefill")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class ChatMLTokenizer:
    """A tokenizer with a ChatML chat template, rendered as transformers renders it."""

    chat_template = "chatml"

    def apply_chat_template(
        self,
        messages: list[dict[str, str]],
        tokenize: bool = False,
        add_generation_prompt: bool = False,
    ) -> str:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def main(data_file: str) -> dict[str, Any]:
    from bigcodebench.provider.utility import make_raw_chat_prompt  # type: ignore[import-not-found]

    with open(data_file, "rb") as raw:
        data_sha256 = hashlib.sha256(raw.read()).hexdigest()
    prompts: dict[str, dict[str, list[str]]] = {}
    with gzip.open(data_file, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            for split in ("complete", "instruct"):
                args = {
                    "task_prompt": row[f"{split}_prompt"],
                    "subset": "full",
                    "split": split,
                    "instruction_prefix": INSTRUCTION_PREFIX,
                    "response_prefix": RESPONSE_PREFIX,
                }
                built = [
                    make_raw_chat_prompt(**args, tokenizer=None),
                    make_raw_chat_prompt(**args, tokenizer=ChatMLTokenizer()),
                    make_raw_chat_prompt(**args, tokenizer=ChatMLTokenizer(), prefill=False),
                ]
                prompts.setdefault(row["task_id"], {})[split] = [digest(text) for text in built]
    return {
        "made_by": f"bigcodebench=={version('bigcodebench')}",
        "function": "bigcodebench.provider.utility.make_raw_chat_prompt",
        "data_sha256": data_sha256,
        "instruction_prefix": INSTRUCTION_PREFIX,
        "response_prefix": RESPONSE_PREFIX,
        "variants": list(VARIANTS),
        "digest": "sha256, first 16 hex digits, of the UTF-8 prompt",
        "prompts": prompts,
    }


def write(document: dict[str, Any]) -> str:
    """JSON with one line per task, so a regenerated fixture diffs task by task."""
    head = {key: value for key, value in document.items() if key != "prompts"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "prompts": {']
    tasks = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in document["prompts"].items()]
    lines.append(",\n".join(tasks))
    lines.append(" }\n}\n")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(write(main(sys.argv[1])))
