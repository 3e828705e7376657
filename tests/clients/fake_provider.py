"""A fake LLM provider for agent tests: a real Starlette app on uvicorn, 127.0.0.1, ephemeral port.

It speaks just enough of the OpenAI chat-completions (``POST /v1/chat/completions``) and Anthropic
Messages (``POST /v1/messages``) protocols to be scripted: each request pops the next :class:`Reply`
(status, JSON body, headers, an optional delay to provoke client timeouts). Every request is kept
(path, headers, JSON body) so tests can check what the agent sent.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["Reply", "FakeProvider", "running_provider", "openai_message", "openai_tool_call", "anthropic_message"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (longer than the agent's request timeout = a timeout)."""


@dataclass
class Seen:
    """One request the fake received."""

    path: str
    headers: dict[str, str]
    body: Any


class FakeProvider:
    """Scripted replies, served in order; a request past the end of the script gets HTTP 599."""

    def __init__(self, script: list[Reply]) -> None:
        self.script = list(script)
        self.requests: list[Seen] = []
        self.url = ""

    async def handle(self, request: Request) -> Response:
        """Answer with the next scripted reply."""
        body = await request.json()
        self.requests.append(Seen(path=request.url.path, headers=dict(request.headers), body=body))
        if not self.script:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=599)
        reply = self.script.pop(0)
        if reply.delay:
            await anyio.sleep(reply.delay)
        return JSONResponse(reply.body if reply.body is not None else {}, status_code=reply.status, headers=reply.headers)

    def app(self) -> Starlette:
        """The ASGI app."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.handle, methods=["POST"]),
                Route("/v1/messages", self.handle, methods=["POST"]),
            ]
        )


class _Server(uvicorn.Server):
    """uvicorn that says when it accepts connections (no polling)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@asynccontextmanager
async def running_provider(script: list[Reply]) -> AsyncIterator[FakeProvider]:
    """Serve a :class:`FakeProvider` on 127.0.0.1 for the duration of the block."""
    provider = FakeProvider(script)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    config = uvicorn.Config(provider.app(), log_level="error", lifespan="off", access_log=False, timeout_graceful_shutdown=2)
    server = _Server(config)
    provider.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            await server.ready.wait()
        try:
            yield provider
        finally:
            server.should_exit = True
    sock.close()


def openai_tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One tool call of an assistant message (``arguments`` is the raw string the model wrote)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def openai_message(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, *, prompt: int = 10, completion: int = 5) -> dict[str, Any]:
    """A chat-completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def anthropic_message(blocks: list[dict[str, Any]], *, input_tokens: int = 12, output_tokens: int = 7) -> dict[str, Any]:
    """A Messages API response body."""
    uses_tools = any(b.get("type") == "tool_use" for b in blocks)
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": "tool_use" if uses_tools else "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
