"""Mistral's wire protocol: POST /v1/chat/completions (OpenAI-like bodies, its own errors)."""

from __future__ import annotations

from typing import Any

from .base import CUT, FakeServer, Recorded, Reply, cut_text, last_user_text, sample_text

MISSING_MODEL = "missing-model"
BAD_KEY = "bad-key"


class MistralFake(FakeServer):
    def __init__(self, latency_s: float = 0.0, rejects: dict[str, set[str]] | None = None) -> None:
        super().__init__(latency_s)
        self.rejects = rejects or {}

    def error_body(self, status: int) -> Any:
        return {
            "object": "error",
            "message": f"fake error {status}",
            "type": "api_error",
            "param": None,
            "code": None,
        }

    def answer(self, request: Recorded) -> Reply:
        body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
        if request.headers.get("authorization") == f"Bearer {BAD_KEY}":
            return Reply(401, {"message": "Unauthorized", "request_id": "x"})
        if not request.path.startswith("/v1/chat/completions"):
            return Reply(404, {"detail": "Not Found"})
        model = body.get("model")
        if model == MISSING_MODEL:
            return Reply(
                400,
                {
                    "object": "error",
                    "message": "Invalid model: missing-model",
                    "type": "invalid_model",
                    "param": None,
                    "code": "1500",
                },
            )
        for param in sorted(self.rejects.get(str(model), set())):
            if param in body:
                return Reply(
                    422,
                    {
                        "object": "error",
                        "message": {
                            "detail": [
                                {
                                    "type": "extra_forbidden",
                                    "loc": ["body", param],
                                    "msg": "Extra inputs are not permitted",
                                }
                            ]
                        },
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    },
                )
        messages = body.get("messages") or []
        prefix = messages[-1]["content"] if messages and messages[-1].get("prefix") else ""
        prompt = last_user_text(messages)
        n = int(body.get("n") or 1)
        cut = CUT in prompt

        def content(i: int) -> Any:
            answer = prefix + (cut_text if cut else sample_text)(prompt, i)
            if not body.get("reasoning_effort"):
                return answer
            # Magistral: the thinking is a chunk of its own before the answer's text chunk
            return [
                {"type": "thinking", "thinking": [{"type": "text", "text": "weighing it"}]},
                {"type": "text", "text": answer},
            ]

        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": content(i)},
                "finish_reason": "length" if cut else "stop",
            }
            for i in reversed(range(n))
        ]
        return Reply(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": choices,
                "usage": {
                    "prompt_tokens": len(prompt.split()) + 1,
                    "completion_tokens": 4 * n,
                    "total_tokens": len(prompt.split()) + 1 + 4 * n,
                },
            },
        )
