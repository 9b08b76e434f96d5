"""LiveCodeBench as one subpackage: the benchmark (`benchmark.py`), the host-side grading of what
the sandboxed harness (`_lcb_harness.py`) printed (`grade.py`), and LiveCodeBench's own result
file, `*_codegeneration_output_eval_all.json` (`eval_all.py`), which passbench reads as a run
and writes beside its own result files. Nothing outside this package names LiveCodeBench."""

from passbench.stages.benchmarks.livecodebench.benchmark import LiveCodeBench

__all__ = ["LiveCodeBench"]
