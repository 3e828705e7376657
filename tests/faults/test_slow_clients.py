"""Slow and silent clients over real sockets: request heads and bodies have deadlines, a client that drops
out mid-body leaves no traceback, idle keep-alive connections still work, and health has a listener of its
own that a silent client cannot hold up."""

from __future__ import annotations

import socket
import time

import anyio
import httpx

from servers.deadlines import DEFAULT_HEAD_TIMEOUT
from tests.faults.processes import TOKEN, HttpServer, http_server, read_response

DEADLINE = 0.5
"""The server's --head-timeout and --body-timeout in these tests."""


def _answer(sock: socket.socket, limit: float = DEFAULT_HEAD_TIMEOUT) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started = time.monotonic()
    sock.settimeout(limit)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data, time.monotonic() - started
        data += chunk


def _one_response(sock: socket.socket) -> bytes:
    """One whole HTTP response read from a kept-alive connection (head, then Content-Length bytes)."""
    head, body = read_response(sock)
    return head + b"\r\n\r\n" + body


def _head(server: HttpServer, method: str, path: str, length: int) -> bytes:
    host, port = server.address
    return (
        f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _ask(server: HttpServer, data: bytes) -> tuple[bytes, float]:
    sock = socket.create_connection(server.address, timeout=10)
    try:
        if data:
            sock.sendall(data)
        return _answer(sock)
    finally:
        sock.close()


async def test_slow_and_silent_clients() -> None:
    async with http_server("--head-timeout", str(DEADLINE), "--body-timeout", str(DEADLINE)) as server:
        await _heads_and_bodies_have_deadlines(server)
        await _idle_keep_alive_connections_are_not_cut_by_the_head_deadline(server)
        await _a_client_dropping_out_mid_body_leaves_no_traceback(server)


async def _heads_and_bodies_have_deadlines(server: HttpServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        episode = (await server.create(http)).json()["id"]
    host, port = server.address
    cases = {
        "silent connection": b"",
        "head cut short": f"GET /control/health HTTP/1.1\r\nHost: {host}:{port}\r\n".encode(),
        "control body never sent": _head(server, "POST", "/control/episodes", 200) + b'{"task":',
        "MCP body never sent": _head(server, "POST", f"/episodes/{episode}/mcp", 200) + b'{"jsonrpc":',
    }
    async with anyio.create_task_group() as tg:  # at once: each waits out the same deadline
        for case, data in cases.items():
            tg.start_soon(_expect_timeout, server, case, data)


async def _expect_timeout(server: HttpServer, case: str, data: bytes) -> None:
    answer, took = await anyio.to_thread.run_sync(_ask, server, data)
    # Closed long before the server's default deadlines: the short ones it was given are the ones applied (a busy
    # machine adds seconds to the 0.5 s, never the tens that would mean the defaults ruled).
    assert took < DEFAULT_HEAD_TIMEOUT / 2, f"{case}: the connection stayed open {took:.1f}s"
    assert answer.startswith(b"HTTP/1.1 408"), f"{case}: {answer[:200]!r}"
    assert b"request_timeout" in answer


async def _idle_keep_alive_connections_are_not_cut_by_the_head_deadline(server: HttpServer) -> None:
    host, port = server.address
    request = f"GET /control/health HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()

    def two_requests() -> list[bytes]:
        with socket.create_connection(server.address, timeout=10) as sock:
            sock.sendall(request)
            answers = [_one_response(sock)]
            time.sleep(DEADLINE * 3)  # idle longer than a head may take: keep-alive rules, not the deadline
            sock.sendall(request)
            answers.append(_one_response(sock))
            return answers

    answers = await anyio.to_thread.run_sync(two_requests)
    assert all(a.startswith(b"HTTP/1.1 200") for a in answers), answers


async def _a_client_dropping_out_mid_body_leaves_no_traceback(server: HttpServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        episode = (await server.create(http)).json()["id"]
        for path in ("/control/episodes", f"/episodes/{episode}/mcp", "/mcp"):

            def drop(path: str = path) -> None:
                with socket.create_connection(server.address, timeout=10) as sock:
                    sock.sendall(_head(server, "POST", path, 5000) + b'{"jsonrpc":"2.0","id":1,')

            await anyio.to_thread.run_sync(drop)
        await anyio.sleep(0.5)
        health = await http.get(f"{server.url}/control/health", headers=server.headers)  # still serving
        assert health.status_code == 200
    log = server.log()
    assert "Traceback" not in log and "ClientDisconnect" not in log and "Error handling" not in log, log


async def test_health_has_a_listener_of_its_own() -> None:
    async with http_server("--health-port", "0") as server:
        await _health_has_a_listener_of_its_own(server)


async def _health_has_a_listener_of_its_own(server: HttpServer) -> None:
    assert server.health_url is not None
    silent = socket.create_connection(server.address, timeout=10)  # holds a slot of the main port, says nothing
    host, port = server.health_url.removeprefix("http://").split("/")[0].rsplit(":", 1)
    quiet_health = socket.create_connection((host, int(port)), timeout=10)  # and one of the health port
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            answer = await http.get(server.health_url, headers={"Authorization": f"Bearer {TOKEN}"})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert body["status"] == "ok" and body["env"] == "toy" and body["loop"]["stalled"] is False
            assert set(body["released"]) == {"records", "bytes", "max_records", "max_bytes"}
            refused = await http.get(server.health_url)
            assert refused.status_code == 401
    finally:
        silent.close()
        quiet_health.close()
