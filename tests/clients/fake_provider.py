"""A fake LLM provider for agent tests: a real Starlette app on uvicorn, 127.0.0.1, ephemeral port.

It speaks just enough of the OpenAI chat-completions (``POST /v1/chat/completions``) and Anthropic
Messages (``POST /v1/messages``) protocols to be scripted: each request pops the next :class:`Reply`
(status, JSON or raw body, headers, a delay before answering, a body that trickles in a few bytes at a
time). Every request is kept (path, headers, JSON body) so tests can check what the agent sent.

A provider that checks the conversation it is sent, as the real ones do, is built with
``validate=validate_openai`` or ``validate=validate_anthropic``: a request whose conversation breaks the
protocol (duplicate tool-call ids, a tool input that is not an object, a tool message answering no call...)
is answered HTTP 400 with the problem, without using up a scripted reply.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = [
    "Reply",
    "Seen",
    "FakeProvider",
    "running_provider",
    "openai_message",
    "openai_tool_call",
    "anthropic_message",
    "validate_openai",
    "validate_anthropic",
    "openai_error",
    "anthropic_error",
    "Validator",
    "NEVER",
]

NEVER = 3600.0
"""A ``Reply.delay`` no request waits out: the reply would come only when the provider shuts down. A test of a
timeout stalls this long, so the timeout fires however busy the machine is, and costs no more than the timeout."""

Validator = Callable[[Any], str | None]
"""Reads a request body; returns what is wrong with its conversation, or None."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (longer than the agent's request timeout = a timeout)."""
    raw: bytes | None = None
    """Send these bytes as the body, as they are (a body that is not JSON, or JSON of the wrong shape)."""
    trickle: float = 0.0
    """Seconds between chunks of ``chunk`` bytes: a body that trickles in (each read is quick, the whole is slow)."""
    chunk: int = 16


@dataclass
class Seen:
    """One request the fake received."""

    path: str
    headers: dict[str, str]
    body: Any
    at: float = 0.0
    """When it arrived (``time.monotonic()``)."""


class FakeProvider:
    """Scripted replies, served in order; a request past the end of the script gets HTTP 599."""

    def __init__(self, script: list[Reply], *, validate: Validator | None = None, models: Reply | None = None) -> None:
        self.script = list(script)
        self.validate = validate
        self.models = models
        """The answer to ``GET /v1/models`` (the agents' key check before a run); None answers 404, as a server
        without that endpoint does."""
        self.model_listings = 0
        """``GET /v1/models`` requests received."""
        self.requests: list[Seen] = []
        self.rejected: list[str] = []
        """Problems found by ``validate`` (each answered 400)."""
        self.url = ""
        self.closing = anyio.Event()

    async def _pause(self, seconds: float) -> None:
        """Sleep, but stop at once when the server shuts down (so a test never waits on a stalled reply)."""
        with anyio.move_on_after(seconds):
            await self.closing.wait()

    async def handle(self, request: Request) -> Response:
        """Answer with the next scripted reply."""
        body = await request.json()
        self.requests.append(Seen(path=request.url.path, headers=dict(request.headers), body=body, at=time.monotonic()))
        if self.validate is not None:
            problem = self.validate(body)
            if problem is not None:
                self.rejected.append(problem)
                return JSONResponse({"type": "error", "error": {"type": "invalid_request_error", "message": problem}}, status_code=400)
        if not self.script:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=599)
        reply = self.script.pop(0)
        if reply.delay:
            await self._pause(reply.delay)
        data = reply.raw if reply.raw is not None else json.dumps(reply.body if reply.body is not None else {}).encode()
        headers = {"content-type": "application/json", **reply.headers}
        if not reply.trickle:
            return Response(data, status_code=reply.status, headers=headers)

        async def drip() -> AsyncIterator[bytes]:
            for start in range(0, len(data), reply.chunk):
                yield data[start : start + reply.chunk]
                await self._pause(reply.trickle)

        return StreamingResponse(drip(), status_code=reply.status, headers=headers)

    async def list_models(self, request: Request) -> Response:
        """``GET /v1/models``: the scripted ``models`` reply, else 404 (scripted replies are not used up)."""
        self.model_listings += 1
        if self.models is None:
            return JSONResponse({"error": {"message": "not found"}}, status_code=404)
        body = self.models.raw if self.models.raw is not None else json.dumps(self.models.body if self.models.body is not None else {}).encode()
        return Response(body, status_code=self.models.status, headers={"content-type": "application/json", **self.models.headers})

    def app(self) -> Starlette:
        """The ASGI app."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.handle, methods=["POST"]),
                Route("/v1/messages", self.handle, methods=["POST"]),
                Route("/v1/models", self.list_models, methods=["GET"]),
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
async def running_provider(
    script: list[Reply], *, validate: Validator | None = None, models: Reply | None = None
) -> AsyncIterator[FakeProvider]:
    """Serve a :class:`FakeProvider` on 127.0.0.1 for the duration of the block."""
    provider = FakeProvider(script, validate=validate, models=models)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    config = uvicorn.Config(provider.app(), log_level="critical", lifespan="off", access_log=False, timeout_graceful_shutdown=1)
    server = _Server(config)
    provider.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(60):  # a guard against a hang, sized for a busy machine
            await server.ready.wait()
        try:
            yield provider
        finally:
            provider.closing.set()
            server.should_exit = True
    sock.close()


def openai_tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One tool call of an assistant message (``arguments`` is the raw string the model wrote)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def openai_message(content: str | None = None, tool_calls: Any = None, *, prompt: int = 10, completion: int = 5) -> dict[str, Any]:
    """A chat-completions response body (``tool_calls`` is put in as given, whatever its shape)."""
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


def openai_error(message: str, *, code: str | None = None, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An OpenAI error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_error(message: str, *, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An Anthropic error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def validate_openai(body: Any) -> str | None:
    """What a strict chat-completions server (vLLM's templates, OpenAI's own checks) refuses in a conversation."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return "messages: required"
    seen: set[str] = set()
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return f"messages[{index}]: tool message answers no pending tool call ({call_id!r})"
            pending.remove(call_id)
            continue
        if pending:
            return f"messages[{index}]: tool calls {pending} have no tool message"
        calls = (message.get("tool_calls") or []) if role == "assistant" else []
        for position, call in enumerate(calls):
            where = f"messages[{index}].tool_calls[{position}]"
            call_id = call.get("id") if isinstance(call, dict) else None
            if not isinstance(call_id, str) or not call_id:
                return f"{where}.id: required"
            if call_id in seen:
                return f"{where}.id: duplicate tool call id {call_id!r}"
            seen.add(call_id)
            pending.append(call_id)
            function = call.get("function") or {}
            if not isinstance(function.get("name"), str) or not function["name"]:
                return f"{where}.function.name: required"
            try:
                arguments = json.loads(function.get("arguments"))
            except (TypeError, ValueError):
                return f"{where}.function.arguments: not valid JSON"
            if not isinstance(arguments, dict):
                return f"{where}.function.arguments: must be a JSON object"
    return f"tool calls {pending} have no tool message" if pending else None


def validate_anthropic(body: Any) -> str | None:
    """What the Messages API refuses in a conversation (tool_use ids, object inputs, tool_result pairing)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return "messages: Field required"
    seen: set[str] = set()
    pending: list[str] = []
    for index, message in enumerate(messages):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if message.get("role") == "user":
            answered = [b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if sorted(answered) != sorted(pending):
                return f"messages.{index}: tool_use ids {pending} need exactly one tool_result each, got {answered}"
            pending = []
            continue
        for position, block in enumerate(blocks):
            where = f"messages.{index}.content.{position}"
            if not isinstance(block, dict):
                return f"{where}: Input should be an object"
            if block.get("type") == "text" and not block.get("text"):
                return f"{where}: text content blocks must be non-empty"
            if block.get("type") != "tool_use":
                continue
            if not isinstance(block.get("id"), str) or not block["id"]:
                return f"{where}.id: Field required"
            if block["id"] in seen:
                return f"{where}: `tool_use` ids must be unique ({block['id']!r})"
            seen.add(block["id"])
            pending.append(block["id"])
            if not isinstance(block.get("name"), str) or not block["name"]:
                return f"{where}.name: Field required"
            if not isinstance(block.get("input"), dict):
                return f"{where}.input: Input should be a valid dictionary"
    return None
