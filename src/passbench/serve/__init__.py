"""An evaluation server: the official BigCodeBench evaluator's API (`/predict`) answered by
passbench (official.py), served over HTTP with Gradio (app.py)."""

from passbench.serve.app import ServeConfig, build_app, serve
from passbench.serve.official import OfficialRequest, ServerLimits, answer

__all__ = ["OfficialRequest", "ServeConfig", "ServerLimits", "answer", "build_app", "serve"]
