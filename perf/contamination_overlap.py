"""Time and peak memory of `passbench contamination overlap` per GB of corpus.

Builds corpora under a scratch folder (default /tmp/passbench-overlap-bench, reused when there):

  - synthetic JSONL (StarCoderData's shape: one {"content": ...} a line) and one synthetic text
    file, of code-like text: Python lines with English comments and docstrings whose words are
    drawn from the BigCodeBench instructions' own vocabulary (the expensive case for the check,
    which only looks closely at runs of the tasks' words), with the instructions of
    `--planted` tasks copied into random documents, which the check must find;
  - real code: every .py file of passbench's own virtual environment (site-packages), a folder.

Each corpus is checked against BigCodeBench's 1,140 instruct prompts in a fresh process
(`python -m passbench.apps.cli contamination overlap ... --format json`); the script reports
wall time, MB/s and s/GB of the scan, the command's CPU seconds (per GB: the fairer figure on a
shared machine) and its peak RSS, and checks that every planted task is found.
Run two sizes (--sizes) to see that memory does not grow with the corpus.

Usage: python perf/contamination_overlap.py [--sizes 100,400] [--planted 20] [--keep]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRATCH = Path("/tmp/passbench-overlap-bench")
_CODE = (
    "def {f}({a}, {b}=None):",
    "    {a} = [{b} for {b} in range({n}) if {b} % {m} == 0]",
    "    return {{'{a}': {a}, '{b}': len({a})}}",
    "for {a} in sorted({b}.items(), key=lambda x: x[1]):",
    "    {b}.append(np.mean({a}) * {n})",
    "import {a}",
    "class {F}(object):",
    "    self.{a} = pd.DataFrame({b}, columns=['{a}', '{b}'])",
    "if not isinstance({a}, {F}): raise ValueError('{a}')",
    "{a}, {b} = {f}({n}), {m}",
)


def _data_dir() -> Path:
    return Path(os.environ.get("PASSBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))


def _instructions() -> dict[str, str]:
    path = _data_dir() / "bigcodebench" / "BigCodeBench-v0.1.4.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {row["task_id"]: row["instruct_prompt"].split("```")[0] for row in rows}


def _document(rng: random.Random, words: list[str], names: list[str]) -> str:
    lines = []
    for _ in range(rng.randint(20, 200)):
        if rng.random() < 0.3:  # a comment or docstring line of the tasks' own words
            lines.append("    # " + " ".join(rng.choices(words, k=rng.randint(4, 16))))
        else:
            a, b, f = rng.sample(names, 3)
            lines.append(
                rng.choice(_CODE).format(
                    a=a, b=b, f=f, F=f.title(), n=rng.randint(0, 999), m=rng.randint(2, 9)
                )
            )
    return "\n".join(lines) + "\n"


def build_synthetic(size_mb: int, planted: int, seed: int = 0) -> tuple[Path, Path, list[str]]:
    """A JSONL file and a text file of about `size_mb` MB each; the planted task ids."""
    jsonl = SCRATCH / f"synthetic-{size_mb}mb-{planted}.jsonl"
    text = SCRATCH / f"synthetic-{size_mb}mb-{planted}.txt"
    texts = _instructions()
    rng = random.Random(seed)
    chosen = sorted(rng.sample(sorted(texts), planted))
    if jsonl.is_file() and text.is_file():
        return jsonl, text, chosen
    SCRATCH.mkdir(parents=True, exist_ok=True)
    words = sorted({word for value in texts.values() for word in value.split()})
    names = [w.strip(".,:;()'\"`").lower() or "x" for w in rng.sample(words, 400)]
    names = [n for n in names if n.isidentifier()] or ["x", "y", "z"]
    pool = [_document(rng, words, names) for _ in range(2000)]
    target = size_mb * 1_000_000
    average = sum(len(json.dumps({"content": d})) + 1 for d in pool) / len(pool)
    places = set(rng.sample(range(int(target / average * 0.95)), planted))
    written = 0
    with jsonl.open("w", encoding="utf-8") as j, text.open("w", encoding="utf-8") as t:
        number = 0
        while written < target:
            content = rng.choice(pool)
            if number in places:
                task = chosen[len([p for p in places if p < number])]
                content += '    """' + texts[task] + '"""\n'
            line = json.dumps({"content": content}) + "\n"
            j.write(line)
            t.write(content)
            written += len(line)
            number += 1
    return jsonl, text, chosen


def real_code() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def measure(corpus: Path, label: str) -> dict[str, object]:
    """One check in a fresh process: wall time, peak RSS of the child, what it found."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    started = time.perf_counter()
    with subprocess.Popen(
        [
            *(sys.executable, "-m", "passbench.apps.cli", "contamination", "overlap"),
            *("--corpus", str(corpus), "--include", "*.py", "--format", "json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    ) as child:
        assert child.stdout is not None
        output = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
        child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode:
        raise SystemExit(f"the check failed on {corpus} (exit {child.returncode})")
    peak_kib = usage.ru_maxrss
    cpu = usage.ru_utime + usage.ru_stime
    document = json.loads(output)
    size = document["corpus"]["bytes"]
    return {
        "corpus": label,
        "mb": round(size / 1e6, 1),
        "files": document["corpus"]["files"],
        "documents": document["corpus"]["documents"],
        "seconds": round(seconds, 1),
        "scan_seconds": document["seconds"],
        "mb_per_s": round(size / 1e6 / document["seconds"], 1),
        "s_per_gb": round(document["seconds"] * 1e9 / size, 1),
        # CPU time of the whole command (load included): on a shared machine the fairer figure
        "cpu_seconds": round(cpu, 1),
        "cpu_s_per_gb": round(cpu * 1e9 / size, 1),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        "contaminated": document["contaminated"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,400", help="synthetic sizes in MB, ascending")
    parser.add_argument("--planted", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the generated corpora")
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        jsonl, text, planted = build_synthetic(size, args.planted)
        for path, kind in ((jsonl, "jsonl"), (text, "text")):
            row = measure(path, f"synthetic {kind} {size} MB")
            found = set(row.pop("contaminated"))  # type: ignore[arg-type]
            row["planted_found"] = f"{len(set(planted) & found)}/{len(planted)}"
            # tasks sharing a boilerplate 10-gram ("The function should output with: ...")
            # with a planted instruction are flagged too, as BigCodeBench's rule says
            row["other_flagged"] = len(found - set(planted))
            rows.append(row)
            print(json.dumps(row), flush=True)
    row = measure(real_code(), "real: site-packages .py folder")
    row["flagged"] = len(row.pop("contaminated"))  # type: ignore[arg-type]
    rows.append(row)
    print(json.dumps(row), flush=True)
    if not args.keep:
        shutil.rmtree(SCRATCH, ignore_errors=True)


if __name__ == "__main__":
    main()
