"""Ollama's native wire protocol: POST /api/chat and /api/generate (non-streaming)."""

from __future__ import annotations

from typing import Any

from .base import CUT, FakeServer, Recorded, Reply, cut_text, last_user_text, sample_text

MISSING_MODEL = "missing-model"


class OllamaFake(FakeServer):
    def error_body(self, status: int) -> Any:
        return {"error": f"fake error {status}"}

    def answer(self, request: Recorded) -> Reply:
        body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
        model = body.get("model")
        if model == MISSING_MODEL:
            return Reply(404, {"error": f"model '{model}' not found"})
        common = {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "done": True,
            "done_reason": "stop",
            "total_duration": 1,
            "prompt_eval_count": 3,
            "eval_count": 6,
        }
        if request.path == "/api/chat":
            messages = body.get("messages") or []
            prefix = (
                messages[-1]["content"] if messages and messages[-1]["role"] == "assistant" else ""
            )
            prompt = last_user_text(messages)
            cut = CUT in prompt
            message = {
                "role": "assistant",
                "content": prefix + (cut_text if cut else sample_text)(prompt, 0),
            }
            if cut:
                common["done_reason"] = "length"
            if body.get("think"):
                message["thinking"] = "hmm"
            return Reply(200, {**common, "message": message})
        if request.path == "/api/generate":
            if not body.get("raw"):
                return Reply(400, {"error": "test server expects raw prompts"})
            return Reply(200, {**common, "response": sample_text(str(body.get("prompt")), 0)})
        return Reply(404, {"error": "404 page not found"})
