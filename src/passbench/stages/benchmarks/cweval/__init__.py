"""CWEval as one subpackage: the benchmark (`benchmark.py`) and the program the sandbox runs
for each sample (`_cweval_harness.py`, copied into the sandbox by path). Nothing outside this
package names CWEval."""

from passbench.stages.benchmarks.cweval.benchmark import CWEval

__all__ = ["CWEval"]
