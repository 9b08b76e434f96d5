"""Differential testing on the trusted side: expected outputs, EvalPlus's limits, the judge.

A differential benchmark (`benchmarks.DifferentialBenchmark`: HumanEval, HumanEval+) judges a
candidate by its outputs on given inputs. The candidate's process receives only its own code
and the inputs (sandbox/inside/_io_style.py); everything that decides the verdict lives here,
outside it:

    expected.py   the reference's outputs and times (computed once in the sandbox, cached),
                  EvalPlus's per-input and whole-program time limits, the io programs
    judge.py      EvalPlus's comparison rules (==, tolerances, special oracles) on the records
    outcome.py    a sample's phases combined into one verdict, with EvalPlus's result fields
"""

from passbench.stages.differential.expected import (
    DEFAULT_GT_TIME_LIMIT_FACTOR,
    DEFAULT_MIN_TIME_LIMIT_S,
    ExpectedPhase,
    ExpectedStore,
    candidate_program,
    expected_fingerprint,
    expected_from,
    program_cap,
    reference_program,
    reference_sha,
    time_limits,
)
from passbench.stages.differential.judge import PhaseSpec, judge, wanted_values
from passbench.stages.differential.outcome import PhaseOutcome, combine, evalplus_fields

__all__ = [
    "DEFAULT_GT_TIME_LIMIT_FACTOR",
    "DEFAULT_MIN_TIME_LIMIT_S",
    "ExpectedPhase",
    "ExpectedStore",
    "PhaseOutcome",
    "PhaseSpec",
    "candidate_program",
    "combine",
    "evalplus_fields",
    "expected_fingerprint",
    "expected_from",
    "judge",
    "program_cap",
    "reference_program",
    "reference_sha",
    "time_limits",
    "wanted_values",
]
