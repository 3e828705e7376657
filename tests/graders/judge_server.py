"""A real local HTTP server speaking OpenAI chat completions, standing in for an LLM judge provider.

It runs uvicorn + starlette on 127.0.0.1 with an ephemeral port (TCP_NODELAY set on the listening
socket). ``decide(request_json)`` returns either the assistant message text, or ``(status, body)`` for an
HTTP error. Every request body and its headers are kept for assertions.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

Decide = Callable[[dict[str, Any]], "str | tuple[int, dict[str, Any]]"]


@dataclass
class FakeJudge:
    """What the fake judge saw."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


@asynccontextmanager
async def fake_judge(decide: Decide) -> AsyncIterator[FakeJudge]:
    """Serve ``/v1/chat/completions`` on an ephemeral loopback port for the duration of the block."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    judge = FakeJudge(base_url=f"http://127.0.0.1:{port}/v1")

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        judge.requests.append(body)
        judge.headers.append(dict(request.headers))
        decision = decide(body)
        if isinstance(decision, tuple):
            status, payload = decision
            return JSONResponse(payload, status_code=status)
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(judge.requests)}",
                "object": "chat.completion",
                "model": body.get("model", "judge"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": decision}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", ws="none", access_log=False))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(60):  # a guard against a hang, sized for a busy machine
            while not server.started:
                await anyio.sleep(0.005)
        try:
            yield judge
        finally:
            server.should_exit = True
    sock.close()
