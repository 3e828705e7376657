"""Real server processes for the fault suite: the toy bank served over HTTP or stdio, driven with raw bytes."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from anyio.abc import Process

REPO = Path(__file__).resolve().parents[2]
TOKEN = "fault-suite-token-0123456789abcdefghijklmnopqrstuv"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "faults", "version": "0"}},
}
MODERN = "2026-07-28"
"""The sessionless protocol version: a tools/call POST stands alone on an episode's URL."""

__all__ = [
    "MODERN", "REPO", "TOKEN", "HttpServer", "StdioServer", "http_server", "raw_http", "read_response", "stdio_server", "tool_call",
]


_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "faults", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def tool_call(ident: Any, name: str, arguments: dict[str, Any], *, modern: bool = False) -> dict[str, Any]:
    """A JSON-RPC tools/call request (``modern``: with the 2026-07-28 envelope a sessionless POST needs)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = dict(_ENVELOPE)
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


async def _collect(stream: Any, lines: list[str], ready: anyio.Event | None = None, marker: str = "") -> None:
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        while b"\n" in buffer:
            raw, buffer = buffer.split(b"\n", 1)
            line = raw.decode(errors="replace")
            lines.append(line)
            if ready is not None and marker and marker in line:
                ready.set()
    if ready is not None:
        ready.set()


@dataclass
class HttpServer:
    """A ``serve --transport http`` child process of the toy bank."""

    url: str
    process: Process
    stderr: list[str] = field(default_factory=list)
    health_url: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The control API's bearer header."""
        return {"Authorization": f"Bearer {TOKEN}"}

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) of the server's socket."""
        host, port = self.url.removeprefix("http://").rsplit(":", 1)
        return host, int(port)

    def log(self) -> str:
        """Everything the server wrote to stderr so far."""
        return "\n".join(self.stderr)

    async def create(self, http: httpx.AsyncClient, task: str | None = None, seed: int = 0) -> httpx.Response:
        """``POST /control/episodes``."""
        return await http.post(f"{self.url}/control/episodes", json={"task": task, "seed": seed}, headers=self.headers)

    async def call(self, http: httpx.AsyncClient, episode: str, body: dict[str, Any]) -> httpx.Response:
        """One sessionless (2026-07-28) MCP POST to an episode's endpoint (JSON with ``ensure_ascii``, so lone
        surrogates travel as ``\\ud800`` escapes, as a hostile client sends them)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN}
        headers["Mcp-Method"] = body.get("method", "")
        if isinstance(body.get("params"), dict) and "name" in body["params"]:
            headers["Mcp-Name"] = body["params"]["name"]
        return await http.post(f"{self.url}/episodes/{episode}/mcp", content=json.dumps(body).encode(), headers=headers)


@asynccontextmanager
async def http_server(*args: str, env: dict[str, str] | None = None, module: str = "tests.toy_env") -> AsyncIterator[HttpServer]:
    """``python -m MODULE serve --transport http --port 0 ARGS`` (the toy bank) until the block ends (then SIGINT)."""
    command = [sys.executable, "-m", module, "serve", "--transport", "http", "--port", "0", "--allocator", "python", *args]
    environment = {**os.environ, "TOOLGYM_TOKEN": TOKEN, **(env or {})}
    async with await anyio.open_process(command, cwd=REPO, env=environment) as process:
        lines: list[str] = []
        ready = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_collect, process.stderr, lines, ready, "Claude Code:")
            with anyio.fail_after(60):
                await ready.wait()
            url = next((line.split(": ", 1)[1].strip().removesuffix("/mcp") for line in lines if "MCP (one episode per session):" in line), None)
            if url is None:
                tg.cancel_scope.cancel()
                raise AssertionError("the server did not start:\n" + "\n".join(lines))
            health = next((line.split(": ", 1)[1].split()[0] for line in lines if "health (off the event loop):" in line), None)
            server = HttpServer(url=url, process=process, stderr=lines, health_url=health)
            try:
                yield server
            finally:
                if process.returncode is None:
                    process.send_signal(signal.SIGINT)
                    with anyio.move_on_after(15):
                        await process.wait()
                    if process.returncode is None:
                        process.kill()
                tg.cancel_scope.cancel()


@dataclass
class StdioServer:
    """A ``serve`` (stdio) child process of the toy bank, spoken to in raw JSON-RPC lines."""

    process: Process
    stderr: list[str]
    _buffer: bytes = b""

    async def send(self, message: dict[str, Any] | bytes) -> None:
        """Write one line (a dict as JSON; bytes as they are, newline added)."""
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self.process.stdin.send(data + b"\n")

    async def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next line from stdout, parsed (fails after ``timeout`` seconds without one)."""
        assert self.process.stdout is not None
        with anyio.fail_after(timeout):
            while b"\n" not in self._buffer:
                self._buffer += await self.process.stdout.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    async def request(self, message: dict[str, Any] | bytes, timeout: float = 10.0) -> dict[str, Any]:
        """Send one line, return the answer."""
        await self.send(message)
        return await self.receive(timeout)

    async def close(self) -> int:
        """Close stdin (the episode ends, its footer is written) and wait for the exit status."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with anyio.fail_after(20):
            return await self.process.wait()


@asynccontextmanager
async def stdio_server(*args: str) -> AsyncIterator[StdioServer]:
    """``python -m tests.toy_env serve ARGS`` (stdio), initialized (handshake done)."""
    command = [sys.executable, "-m", "tests.toy_env", "serve", *args]
    async with await anyio.open_process(command, cwd=REPO, env=dict(os.environ)) as process:
        lines: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(_collect, process.stderr, lines)
            server = StdioServer(process, lines)
            reply = await server.request(INITIALIZE, timeout=60)
            assert reply["result"]["serverInfo"]["name"] == "toolgym-toy", reply
            await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            try:
                yield server
            finally:
                if process.returncode is None:
                    process.kill()
                with anyio.move_on_after(5):
                    await process.wait()
                tg.cancel_scope.cancel()


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """One whole HTTP response from a raw connection: its head and its body (Content-Length bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return head, body


def raw_http(address: tuple[str, int]) -> socket.socket:
    """A plain TCP connection to the server (for clients that misbehave byte by byte)."""
    sock = socket.create_connection(address, timeout=30)
    return sock
