"""Clients that give up (issue 28): their creates leave no episode behind, and their races with the server leave a
count in health, never a traceback in its log. A real ``serve --transport http`` process, raw sockets."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx

from tests.faults.processes import INITIALIZE, TOKEN, HttpServer, http_server, raw_http, read_response

SLOW_TASKS = Path(__file__).with_name("slow_tasks.py")


def _request(server: HttpServer, method: str, path: str, body: dict[str, Any] | None = None, **headers: str) -> bytes:
    data = json.dumps(body).encode() if body is not None else b""
    host, port = server.address
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"Content-Length: {len(data)}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def _response(sock: socket.socket) -> tuple[str, bytes]:
    """One whole response: its head (as text) and body."""
    head, body = read_response(sock)
    return head.decode(), body


async def _health(server: HttpServer, http: httpx.AsyncClient) -> dict[str, Any]:
    return (await http.get(f"{server.url}/control/health", headers=server.headers)).json()  # type: ignore[no-any-return]


async def test_creates_whose_clients_left_make_no_episode() -> None:
    """Twelve creates queue behind the create thread (each setup takes 0.25 s); their clients give up and close.
    None of them becomes an episode nobody holds (seen on main: every one did, held until --idle-timeout, and
    admission counted them), and the server still creates for a client that waits."""
    async with http_server("--private-tasks", str(SLOW_TASKS)) as server, httpx.AsyncClient(timeout=30) as http:
        request = _request(server, "POST", "/control/episodes", {"task": "slow_pay_back", "seed": 0}, Authorization=f"Bearer {TOKEN}")
        clients = [raw_http(server.address) for _ in range(12)]
        for sock in clients:
            sock.sendall(request)
        with anyio.fail_after(20):
            while (await _health(server, http))["limits"]["episodes"]["open"] < 12:  # all twelve held by the server
                await anyio.sleep(0.02)
        for sock in clients:
            sock.close()  # their timeout: they give up while their worlds are queued or being made
        with anyio.fail_after(20):
            while (health := await _health(server, http))["creates"]["in_progress"]:
                await anyio.sleep(0.05)
        listed = (await http.get(f"{server.url}/control/episodes", headers=server.headers)).json()["episodes"]
        assert listed == [] and health["limits"]["episodes"]["open"] == 0
        assert health["creates"]["abandoned"] == 12
        created = await server.create(http, "slow_pay_back")
        assert created.status_code == 201, created.text
        assert (await _health(server, http))["limits"]["episodes"]["open"] == 1
        assert "Traceback" not in server.log()


async def test_a_create_answered_to_a_client_that_never_reads_it_is_undone() -> None:
    """The client gives up just as its answer arrives: the episode is made and answered, but never read. Closing a
    socket with unread data resets the connection; that reset, before any other request of the client, undoes
    the create (on main the episode stayed until --idle-timeout, 30 minutes)."""
    async with http_server() as server, httpx.AsyncClient(timeout=30) as http:
        request = _request(server, "POST", "/control/episodes", {"task": "pay_back", "seed": 0}, Authorization=f"Bearer {TOKEN}")
        unread = raw_http(server.address)
        unread.sendall(request)
        read = raw_http(server.address)  # a client that reads its answer and keeps its connection: it holds its episode
        read.sendall(request)
        head, body = _response(read)
        assert head.startswith("HTTP/1.1 201"), head
        kept = json.loads(body)["id"]
        with anyio.fail_after(20):
            while (await _health(server, http))["limits"]["episodes"]["open"] < 2:  # both made and answered
                await anyio.sleep(0.02)
        await anyio.sleep(0.2)  # the answer sits in the unread client's socket
        unread.close()
        with anyio.fail_after(20):
            while (health := await _health(server, http))["limits"]["episodes"]["open"] > 1:
                await anyio.sleep(0.05)
        listed = (await http.get(f"{server.url}/control/episodes", headers=server.headers)).json()["episodes"]
        assert [e["id"] for e in listed] == [kept] and health["creates"]["abandoned"] == 1
        read.close()  # read and closed: nothing is undone
        await anyio.sleep(0.3)
        assert [e["id"] for e in (await http.get(f"{server.url}/control/episodes", headers=server.headers)).json()["episodes"]] == [kept]


async def test_clients_that_leave_mid_request_cost_a_count_not_a_traceback() -> None:
    """A client ends its session (DELETE) right behind a notification on the same connection — what an SDK client
    that gives up does — and others drop their connection mid-call. On main each race printed two tracebacks (the
    SDK's ClosedResourceError, then uvicorn's "Unexpected ASGI message 'http.response.start' sent, after
    response already completed")."""
    async with http_server() as server, httpx.AsyncClient(timeout=30) as http:
        for _ in range(10):
            sock = raw_http(server.address)
            sock.sendall(_request(server, "POST", "/mcp", INITIALIZE))
            head, _ = _response(sock)
            session = next(line.split(": ", 1)[1] for line in head.split("\r\n") if line.lower().startswith("mcp-session-id"))
            headers = {"Mcp_Session_Id": session, "MCP_Protocol_Version": "2025-11-25"}
            sock.sendall(
                _request(server, "POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, **headers)
                + _request(server, "DELETE", "/mcp", None, **headers)
            )
            _response(sock)
            await anyio.sleep(0.05)
            sock.close()
        episode = (await server.create(http)).json()["id"]
        for ident in range(10):  # a call, then the connection gone before its answer
            sock = raw_http(server.address)
            call = {"jsonrpc": "2.0", "id": ident, "method": "tools/list", "params": {}}
            sock.sendall(_request(server, "POST", f"/episodes/{episode}/mcp", call, MCP_Protocol_Version="2026-07-28"))
            sock.close()
        await anyio.sleep(0.5)
        health = await _health(server, http)
        assert health["status"] == "ok"
        dropped = health["dropped"]
        assert dropped["session_ended"] + dropped["client_left"] >= 1, dropped
        log = server.log()
        assert "Traceback" not in log and "Exception in ASGI application" not in log and "Error handling POST" not in log, log
