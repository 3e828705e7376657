"""The connection deadlines' timers (servers/deadlines.py) on a stand-in transport; real sockets: tests/faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from servers.deadlines import with_deadlines


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closing = False
        self.aborted = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 5000) if name in ("peername", "sockname") else default

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self.written += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.aborted = self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


PROTOCOLS = [HttpToolsProtocol, H11Protocol]
"""uvicorn's two HTTP/1.1 implementations: httptools (ours by default) and h11 (the fallback)."""


def _protocol(head: float = 5.0, write: float = 5.0, base: type[Any] = HttpToolsProtocol) -> tuple[Any, _Transport]:
    config = Config(_app, lifespan="off")
    protocol = with_deadlines(base, head, 5.0, write)(config=config, server_state=ServerState(), app_state={})
    transport = _Transport()
    protocol.connection_made(transport)
    return protocol, transport


@pytest.mark.parametrize("base", PROTOCOLS)
async def test_a_head_that_never_completes_gets_408_and_a_close(base: type[Any]) -> None:
    protocol, transport = _protocol(head=0.05, base=base)
    protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n")  # no blank line: the head never ends
    await asyncio.sleep(0.15)
    assert transport.written.startswith(b"HTTP/1.1 408") and transport.closing


@pytest.mark.parametrize("base", PROTOCOLS)
async def test_a_complete_head_cancels_the_deadline(base: type[Any]) -> None:
    protocol, transport = _protocol(head=0.05, base=base)
    protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    await asyncio.sleep(0.15)  # past the head deadline
    async with asyncio.timeout(30):  # and the app's answer, however long a busy machine takes to write it
        while not transport.written:
            await asyncio.sleep(0.01)
    assert transport.written.startswith(b"HTTP/1.1 200") and not transport.aborted


async def test_a_response_nobody_reads_is_dropped_after_the_write_deadline() -> None:
    protocol, transport = _protocol(write=0.05)
    protocol.pause_writing()  # the transport's buffer is over its high-water mark: the client stopped reading
    await asyncio.sleep(0.15)
    assert transport.aborted
    other, kept = _protocol(write=0.05)
    other.pause_writing()
    other.resume_writing()  # it read after all
    await asyncio.sleep(0.15)
    assert not kept.aborted
