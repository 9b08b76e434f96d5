"""Separate a model's thinking from its answer: `passbench.core.thinking`, which the providers
share (the markers and rules are documented there)."""

from __future__ import annotations

from passbench.core.thinking import Split, split_thinking

__all__ = ["Split", "split_thinking"]
