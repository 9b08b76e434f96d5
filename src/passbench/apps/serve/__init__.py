"""An evaluation server: the official BigCodeBench evaluator's API (`/predict`) answered by
passbench (official.py), passbench's own program-level API for its `remote` sandbox backend
(programs.py), served over HTTP with Gradio and FastAPI (app.py)."""

from passbench.apps.serve.app import build_app, serve
from passbench.apps.serve.config import ServeConfig, ServerLimits
from passbench.apps.serve.official import OfficialRequest, answer

__all__ = ["OfficialRequest", "ServeConfig", "ServerLimits", "answer", "build_app", "serve"]
