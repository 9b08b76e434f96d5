"""Anthropic's wire protocol: POST /v1/messages."""

from __future__ import annotations

from typing import Any

from .base import CUT, FakeServer, Recorded, Reply, cut_text, last_user_text, sample_text

MISSING_MODEL = "missing-model"
BAD_KEY = "bad-key"


class AnthropicFake(FakeServer):
    def __init__(self, latency_s: float = 0.0, rejects: dict[str, set[str]] | None = None) -> None:
        super().__init__(latency_s)
        self.rejects = rejects or {}

    def error_body(self, status: int) -> Any:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"fake error {status}"}}

    def answer(self, request: Recorded) -> Reply:
        body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
        # SDK releases have sent the key as x-api-key and as a bearer token; accept both
        key = request.headers.get("x-api-key") or request.headers.get(
            "authorization", ""
        ).removeprefix("Bearer ")
        if key == BAD_KEY:
            return Reply(
                401,
                {
                    "type": "error",
                    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
                },
            )
        if not request.path.startswith("/v1/messages"):
            return Reply(
                404,
                {"type": "error", "error": {"type": "not_found_error", "message": request.path}},
            )
        model = body.get("model")
        if model == MISSING_MODEL:
            return Reply(
                404,
                {
                    "type": "error",
                    "error": {"type": "not_found_error", "message": f"model: {model}"},
                },
            )
        for param in sorted(self.rejects.get(str(model), set())):
            if param in body:
                return Reply(
                    400,
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": f"{param}: Extra inputs are not permitted",
                        },
                    },
                )
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        if last.get("role") == "assistant" and str(last.get("content", "")).rstrip() != last.get(
            "content"
        ):
            return Reply(
                400,
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "final assistant content cannot end with trailing whitespace",
                    },
                },
            )
        prompt = last_user_text(messages)
        cut = CUT in prompt
        content = [{"type": "text", "text": (cut_text if cut else sample_text)(prompt, 0)}]
        if body.get("thinking"):
            content.insert(0, {"type": "thinking", "thinking": "let me think", "signature": "sig"})
        return Reply(
            200,
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "max_tokens" if cut else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": len(prompt.split()) + 1, "output_tokens": 9},
            },
        )
