"""Stages: the pipeline, one folder a stage (benchmarks, prompts, providers, sanitize, sandbox,
evaluate, results) plus what they need (evaluation environments, differential judging).

A stage imports core and the stages below it in the import contract (pyproject.toml).
"""
