"""A scripted OpenAI-compatible chat-completions server that plays given tool calls, one per turn.

It reads the conversation it is sent, finds the script by the user prompt, counts the tool calls already
made and answers with the next one (a text-only reply once the script is done), so concurrent rollouts of
different tasks each get their own script in order. A prompt may have :class:`Alternatives` — several
scripts handed to its conversations in turn, so the rollouts of one group (same prompt) play differently; the
call ids carry which one a conversation got. Streaming (SSE, what harnesses ask for) and plain JSON replies are
both spoken; with ``validate`` (``tests.clients.fake_provider.validate_openai``) a conversation that breaks the
protocol is answered HTTP 400, as a strict server would. A real Starlette app on uvicorn, 127.0.0.1,
ephemeral port.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["OracleProvider", "Alternatives", "ReleasingProvider", "running_oracle_provider"]

Calls = list[dict[str, Any]]


class Alternatives(list[Calls]):
    """Several scripts for one prompt: the n-th conversation of that prompt plays ``self[n % len(self)]``."""


class OracleProvider:
    """Replies by script: ``scripts[prompt]`` is the list of ``{"tool", "arguments"}`` calls to make."""

    def __init__(
        self, scripts: dict[str, Calls | Alternatives], *, model: str = "scripted-oracle",
        validate: Callable[[Any], str | None] | None = None,
    ) -> None:
        self.scripts = scripts
        self.model = model
        self.validate = validate
        self.url = ""
        self.requests: list[dict[str, Any]] = []
        self.unknown_prompts: list[str] = []
        self.refused: list[str] = []
        """What ``validate`` found wrong in conversations it was sent."""
        self.started: dict[str, list[int]] = {}
        """Per prompt, the alternative each new conversation was given, in order."""

    def reply_for(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message answering the conversation in ``body``."""
        messages = body.get("messages") or []
        prompt = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        given = self.scripts.get(prompt)
        if given is None:
            self.unknown_prompts.append(prompt)
            return {"role": "assistant", "content": "I do not know this task."}
        calls = [c for m in messages if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
        made = len(calls)
        choice = 0
        if isinstance(given, Alternatives):
            if calls:  # the conversation's alternative, from its first call id (call_<alternative>_<n>)
                choice = int(str(calls[0].get("id", "call_0_0")).split("_")[1])
            else:
                started = self.started.setdefault(prompt, [])
                choice = len(started) % len(given)
                started.append(choice)
            script = given[choice]
        else:
            script = given
        if made >= len(script):
            return {"role": "assistant", "content": "Done."}
        step = script[made]
        call = {
            "id": f"call_{choice}_{made}",
            "type": "function",
            "function": {"name": step["tool"], "arguments": json.dumps(step.get("arguments") or {})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    async def handle(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        problem = self.validate(body) if self.validate is not None else None
        if problem is not None:
            self.refused.append(problem)
            return JSONResponse({"error": {"message": problem, "type": "invalid_request_error"}}, status_code=400)
        message = self.reply_for(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            return JSONResponse({
                "id": "chatcmpl-oracle", "object": "chat.completion", "created": 0, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage,
            })
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": 0, **message["tool_calls"][0]}]
        base = {"id": "chatcmpl-oracle", "object": "chat.completion.chunk", "created": 0, "model": self.model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "choices": [], "usage": usage},
        ]

        async def events() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield f"data: {json.dumps(chunk)}\n\n".encode()
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    def app(self) -> Starlette:
        """The ASGI app (``/v1/chat/completions`` and ``/v1/models``)."""

        async def models(request: Request) -> Response:
            return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "test"}]})

        return Starlette(routes=[
            Route("/v1/chat/completions", self.handle, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ])


class ReleasingProvider(OracleProvider):
    """An infrastructure failure on demand: before answering, releases every live episode of the toolgym server
    at ``control_url`` behind the adapter's back (the model then says it is done), so no grade can be given."""

    def __init__(self, control_url: str, headers: dict[str, str]) -> None:
        super().__init__({})
        self.control_url = control_url
        self.headers = headers

    async def handle(self, request: Request) -> Response:
        async with httpx.AsyncClient() as client:
            listed = (await client.get(f"{self.control_url}/episodes", headers=self.headers)).json()
            for episode in listed["episodes"]:
                await client.delete(f"{self.control_url}/episodes/{episode['id']}", headers=self.headers)
        return await super().handle(request)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@asynccontextmanager
async def running_oracle_provider(
    scripts: dict[str, Calls | Alternatives], *, validate: Callable[[Any], str | None] | None = None,
    provider: OracleProvider | None = None,
) -> AsyncIterator[OracleProvider]:
    """Serve an :class:`OracleProvider` (or the given one) on 127.0.0.1 (ephemeral port) for the duration of the block."""
    provider = provider if provider is not None else OracleProvider(scripts, validate=validate)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    config = uvicorn.Config(provider.app(), log_level="critical", lifespan="off", access_log=False, timeout_graceful_shutdown=1)
    server = _Server(config)
    provider.url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(60):  # a guard against a hang, sized for a busy machine
            await server.ready.wait()
        try:
            yield provider
        finally:
            server.should_exit = True
    sock.close()
