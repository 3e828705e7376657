"""The sealed control API: a token by default, Host/Origin checks before it, JSON bodies only."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.transport_security import TransportSecuritySettings

from servers.http import HttpServer, build_http_app, running_http
from tests.toy_env import environment

EVIL = "http://evil.example"
ROUTES = [
    ("GET", "/health"),
    ("GET", "/environment"),
    ("GET", "/episodes"),
    ("POST", "/episodes"),
    ("GET", "/episodes/ep-x"),
    ("GET", "/episodes/ep-x/record"),
    ("POST", "/episodes/ep-x/close"),
    ("POST", "/episodes/ep-x/grade"),
    ("DELETE", "/episodes/ep-x"),
]


def port_of(server: HttpServer) -> str:
    return server.url.rsplit(":", 1)[1]


async def test_a_server_gets_a_fresh_token_by_default() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as first, running_http(environment) as second:
            assert first.token is not None and second.token is not None
            assert len(first.token) >= 43 and first.token != second.token
            assert first.control_headers == {"Authorization": f"Bearer {first.token}"}
            assert first.token not in repr(first)
            async with httpx.AsyncClient(base_url=first.control_url) as http:
                for method, path in ROUTES:
                    denied = await http.request(method, path)
                    assert denied.status_code == 401, (method, path)
                    assert denied.json()["error"] == "unauthorized" and denied.headers["www-authenticate"] == "Bearer"
                wrong = await http.post("/episodes", json={}, headers=second.control_headers)  # another server's token
                assert wrong.status_code == 401
                assert first.manager.list() == []
                created = await http.post("/episodes", json={"task": "pay_back"}, headers=first.control_headers)
                assert created.status_code == 201
                # The agent connects to its episode with nothing but the URL.
                async with Client(created.json()["mcp_url"]) as client:
                    assert not (await client.call_tool("list_accounts", {})).is_error


async def test_a_given_token_is_required() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, token="s3cret") as server, httpx.AsyncClient(base_url=server.control_url) as http:
            assert server.token == "s3cret"
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}, {"Authorization": "Bearer"}):
                denied = await http.post("/episodes", json={}, headers=headers)
                assert denied.status_code == 401, headers
            assert (await http.get("/health")).status_code == 401
            assert server.manager.list() == []
            allowed = await http.post("/episodes", json={}, headers={"Authorization": "Bearer s3cret"})
            assert allowed.status_code == 201


async def test_no_token_is_an_explicit_opt_out() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, no_token=True) as server, httpx.AsyncClient(base_url=server.control_url) as http:
            assert server.token is None and server.control_headers == {}
            assert (await http.post("/episodes", json={})).status_code == 201


@pytest.mark.parametrize(
    ("options", "message"),
    [({"token": "t", "no_token": True}, "not both"), ({"token": ""}, "token is empty"), ({"max_sessions": 0}, "max_sessions")],
)
def test_contradictory_or_empty_token_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_http_app(environment, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("no_token", [False, True])
async def test_foreign_host_and_origin_are_refused_before_the_token(no_token: bool) -> None:
    with anyio.fail_after(20):
        async with running_http(environment, no_token=no_token) as server, httpx.AsyncClient(base_url=server.control_url) as http:
            auth = server.control_headers
            for method, path in ROUTES:
                rebound = await http.request(method, path, headers={**auth, "Host": "evil.example"})
                assert rebound.status_code == 421 and rebound.json()["error"] == "invalid_host", (method, path)
                foreign = await http.request(method, path, headers={**auth, "Origin": EVIL})
                assert foreign.status_code == 403 and foreign.json()["error"] == "invalid_origin", (method, path)
            spoofed = {**auth, "Host": f"localhost:{port_of(server)}", "Origin": f"http://127.0.0.1:{port_of(server)}"}
            assert (await http.get("/health", headers=spoofed)).status_code == 200  # loopback names pass
            assert server.manager.list() == []


@pytest.mark.parametrize("no_token", [False, True])
async def test_a_cross_origin_text_plain_post_creates_nothing(no_token: bool) -> None:
    # What a web page can send without a CORS preflight: a "simple" text/plain POST.
    body = b'{"task": "pay_back", "seed": 1}'
    with anyio.fail_after(20):
        async with running_http(environment, no_token=no_token) as server, httpx.AsyncClient(base_url=server.control_url) as http:
            for extra in ({}, server.control_headers):
                page = {"Origin": EVIL, "Content-Type": "text/plain", **extra}
                assert (await http.post("/episodes", content=body, headers=page)).status_code == 403
            same_host = {"Content-Type": "text/plain;charset=UTF-8", **server.control_headers}
            refused = await http.post("/episodes", content=body, headers=same_host)
            assert refused.status_code == 415 and refused.json()["error"] == "unsupported_media_type"
            assert server.manager.list() == []


async def test_post_bodies_must_be_json() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient(base_url=server.control_url) as http:
            auth = server.control_headers
            for headers in ({}, {"Content-Type": "application/x-www-form-urlencoded"}, {"Content-Type": "multipart/form-data"}):
                sent = await http.post("/episodes", content=b'{"seed": 1}', headers={**auth, **headers})
                assert sent.status_code == 415, headers
            assert server.manager.list() == []
            typed = await http.post("/episodes", content=b'{"seed": 1}', headers={**auth, "Content-Type": "application/json; charset=utf-8"})
            assert typed.status_code == 201
            empty = await http.post(f"/episodes/{typed.json()['id']}/close", headers=auth)  # no body, no content type
            assert empty.status_code == 200


async def test_without_an_origin_allow_list_every_origin_is_refused() -> None:
    # A non-loopback bind (or protection turned off) has no allow-list: no browser page is a control client.
    open_settings = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    with anyio.fail_after(20):
        async with running_http(environment, security=open_settings) as server, httpx.AsyncClient(base_url=server.control_url) as http:
            auth = server.control_headers
            assert (await http.get("/health", headers={**auth, "Host": "toolgym.example"})).status_code == 200
            local = f"http://127.0.0.1:{port_of(server)}"
            assert (await http.get("/health", headers={**auth, "Origin": local})).status_code == 403
            assert (await http.get("/health", headers={**auth, "Origin": EVIL})).status_code == 403
