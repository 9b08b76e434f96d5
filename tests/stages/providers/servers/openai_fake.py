"""OpenAI's wire protocol: /v1/chat/completions and /v1/completions (and Azure's paths)."""

from __future__ import annotations

from typing import Any

from .base import CUT, FakeServer, Recorded, Reply, cut_text, last_user_text, sample_text

MISSING_MODEL = "missing-model"
BAD_KEY = "bad-key"


def thinking_text(index: int) -> str:
    """Reasoning with a draft in it, as reasoning models write: code that is not the answer."""
    return f"Let me draft it.\n```python\ndef answer():\n    return 'draft', {index}\n```\nNo."


class OpenAIFake(FakeServer):
    """Answers `n` choices per request; models listed in `rejects` refuse those parameters
    with the 400 OpenAI sends reasoning models ("Unsupported parameter: 'max_tokens'...")."""

    def __init__(
        self,
        latency_s: float = 0.0,
        rejects: dict[str, set[str]] | None = None,
        rendezvous: int = 0,
        reasoning_field: str | None = None,
    ) -> None:
        super().__init__(latency_s, rendezvous)
        self.rejects = rejects or {}
        # "reasoning_content" (DeepSeek, SGLang, older vLLM) or "reasoning" (newer vLLM): the
        # thinking sent beside the answer, holding a draft that must not be taken for it
        self.reasoning_field = reasoning_field

    def answer(self, request: Recorded) -> Reply:
        body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
        if (
            request.headers.get("authorization") == f"Bearer {BAD_KEY}"
            or request.headers.get("api-key") == BAD_KEY
        ):
            return Reply(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
        model = body.get("model") or request.path.split("/deployments/")[-1].split("/")[0]
        if model == MISSING_MODEL:
            return Reply(
                404,
                {
                    "error": {
                        "message": f"The model `{model}` does not exist",
                        "type": "invalid_request_error",
                        "code": "model_not_found",
                    }
                },
            )
        for param in sorted(self.rejects.get(model, set())):
            if param in body:
                return Reply(
                    400,
                    {
                        "error": {
                            "message": f"Unsupported parameter: '{param}' is not supported "
                            "with this model.",
                            "type": "invalid_request_error",
                            "param": param,
                            "code": "unsupported_parameter",
                        }
                    },
                )
        n = int(body.get("n") or 1)
        if request.path.split("?")[0].endswith("/chat/completions"):
            messages = body.get("messages") or []
            prompt = last_user_text(messages)
            prefix = (
                messages[-1]["content"] if messages and messages[-1]["role"] == "assistant" else ""
            )
            cut = CUT in prompt
            choices = [
                {
                    "index": i,
                    "message": {
                        "role": "assistant",
                        "content": (f"[continues {prefix!r}]" if prefix else "")
                        + (cut_text if cut else sample_text)(prompt, i),
                        **(
                            {self.reasoning_field: thinking_text(i)} if self.reasoning_field else {}
                        ),
                    },
                    "finish_reason": "length" if cut else "stop",
                    "logprobs": None,
                }
                for i in range(n)
            ]
            kind = "chat.completion"
        elif request.path.split("?")[0].endswith("/completions"):
            prompt = str(body.get("prompt") or "")
            choices = [
                {
                    "index": i,
                    "text": sample_text(prompt, i),
                    "finish_reason": "length",
                    "logprobs": None,
                }
                for i in range(n)
            ]
            kind = "text_completion"
        else:
            return Reply(
                404,
                {"error": {"message": f"no route {request.path}", "type": "invalid_request_error"}},
            )
        # Reverse the order: the API does not promise choices sorted by index.
        choices.reverse()
        return Reply(
            200,
            {
                "id": "cmpl-fake",
                "object": kind,
                "created": 0,
                "model": model,
                "choices": choices,
                "usage": {
                    "prompt_tokens": len(prompt.split()) + 1,
                    "completion_tokens": 7 * n,
                    "total_tokens": len(prompt.split()) + 1 + 7 * n,
                },
            },
        )
