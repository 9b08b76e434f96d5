"""Google's Gemini wire protocol: POST /{version}/models/{model}:generateContent."""

from __future__ import annotations

from typing import Any

from .base import CUT, FakeServer, Recorded, Reply, cut_text, sample_text

MISSING_MODEL = "missing-model"
BAD_KEY = "bad-key"
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": _STATUS.get(code, "UNKNOWN")}}


class GoogleFake(FakeServer):
    def __init__(self, latency_s: float = 0.0, rejects: dict[str, set[str]] | None = None) -> None:
        super().__init__(latency_s)
        self.rejects = rejects or {}

    def error_body(self, status: int) -> Any:
        return _error(status, f"fake error {status}")

    def answer(self, request: Recorded) -> Reply:
        body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
        if request.headers.get("x-goog-api-key") == BAD_KEY:
            return Reply(400, _error(400, "API key not valid. Please pass a valid API key."))
        path = request.path.split("?")[0]
        if ":generateContent" not in path:
            return Reply(404, _error(404, f"no route {path}"))
        model = path.split("/models/")[-1].split(":")[0]
        if model == MISSING_MODEL:
            return Reply(404, _error(404, f"models/{model} is not found for API version v1beta"))
        config = body.get("generationConfig") or {}
        for param in sorted(self.rejects.get(model, set())):
            if param in config:
                return Reply(
                    400,
                    _error(
                        400,
                        f'Invalid JSON payload received. Unknown name "{param}" at '
                        "'generation_config': Cannot find field.",
                    ),
                )
        n = int(config.get("candidateCount") or 1)
        contents = body.get("contents") or []
        prompt = "".join(
            p.get("text", "")
            for c in contents
            if c.get("role") == "user"
            for p in c.get("parts", [])
        )

        def parts_for(i: int) -> list[dict[str, Any]]:
            thought = (
                [{"text": "thinking...", "thought": True}] if config.get("thinkingConfig") else []
            )
            return [*thought, {"text": (cut_text if CUT in prompt else sample_text)(prompt, i)}]

        candidates = [
            {
                "content": {"role": "model", "parts": parts_for(i)},
                "finishReason": "MAX_TOKENS" if CUT in prompt else "STOP",
                "index": i,
            }
            for i in reversed(range(n))
        ]
        return Reply(
            200,
            {
                "candidates": candidates,
                "usageMetadata": {
                    "promptTokenCount": len(prompt.split()) + 1,
                    "candidatesTokenCount": 5 * n,
                    "totalTokenCount": len(prompt.split()) + 1 + 5 * n,
                },
                "modelVersion": model,
            },
        )
