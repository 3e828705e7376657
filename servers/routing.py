"""Routing MCP-over-HTTP requests to episodes: the two MCP endpoints and the resolver behind them.

One low-level MCP server and one SDK session manager serve every episode of the process; what makes
requests land in the right world is the episode id this module puts in the ASGI scope (decision 1):

- ``/episodes/{id}/mcp`` — the episode's own endpoint. The id comes from the path, so every protocol era
  works: 2026-07-28 requests (no sessions) and handshake-era sessions alike. Unknown or closed ids get a
  404 whose body is a JSON-RPC error (code -32004, data ``{"error": "episode_not_found", "episode": id}``)
  naming the id, before the SDK sees the request; MCP clients show its message.
- ``/mcp`` — the plain endpoint for clients configured with one URL (``claude mcp add --transport http``).
  Each handshake-era MCP session gets its own episode (free play, or the server's ``--task``), created on
  the session's first routed request and released when the client DELETEs the session or the SDK drops it
  as idle. At most ``max_sessions`` sessions are open at once (``--max-sessions``); one more ends the least
  recently used idle session (and releases its episode), and is refused with JSON-RPC error -32005
  (``EPISODE_LIMIT_REACHED``) only when every open session is serving a request (``servers/sessions.py``). Their episodes do not
  count against the episode manager's ``max_live``, so idle ``/mcp`` sessions never starve the control
  API's evaluation episodes (and those never starve ``/mcp``). A sessionless
  2026-07-28 request cannot be told apart from any other client's, so it is answered with JSON-RPC error
  -32022 (unsupported protocol version) listing the handshake versions: the v2 ``mcp.Client`` in its
  default ``auto`` mode then falls back to the handshake and gets a session (mcp/client/_probe.py).
  Clients that want the 2026-07-28 protocol create an episode through the control API and use its URL.

Handshake-era sessions are tied to their episodes (``servers/sessions.py``): closing or releasing an
episode ends its sessions. The router answers by itself only refusals and 404s, and reads at most
``ERROR_BODY_LIMIT`` bytes of a body to find the request id it puts in them; everything else goes to
the SDK, which does its own Host/Origin checks and body limit. A POST body is read whole before either
(``servers/bodies.py``): a client that leaves mid-body is dropped quietly, and a request whose id has the
wrong type gets JSON-RPC ``Invalid Request`` instead of the SDK's bodyless 202.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from fixtures.errors import EpisodeLimitReached, EpisodeNotFound
from servers.bodies import answer_invalid_ids, read_body, replay
from servers.episodes import Episode, EpisodeManager
from servers.fastcall import answer_tool_call, eligible
from servers.fastlist import ListingCache
from servers.mcp_server import EPISODE_NOT_FOUND
from servers.sessions import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, DEFAULT_SESSIONS_PER_EPISODE, SessionTable

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSIONS_PER_EPISODE",
    "ERROR_BODY_LIMIT",
    "EPISODE_SCOPE_KEY",
    "EPISODE_LIMIT_REACHED",
    "EpisodeRouter",
    "EpisodeEndpoint",
    "PlainEndpoint",
    "loopback_security",
]

log = logging.getLogger("toolgym.http")

EPISODE_SCOPE_KEY = "toolgym.episode"
"""ASGI scope key holding the episode id of a request to ``/episodes/{id}/mcp``."""

EPISODE_LIMIT_REACHED = -32005
"""JSON-RPC error code when ``/mcp`` cannot open one more session (``max_sessions`` are open)."""

ERROR_BODY_LIMIT = 64 * 1024
"""Most bytes of a request body read to find the id of a request the router refuses itself."""

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback bind (as the SDK's own default), None for other hosts.

    Why: a web page the user visits could otherwise reach a loopback MCP server through a rebound DNS name.
    """
    if host not in _LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class EpisodeRouter:
    """Finds the episode of each MCP request; owns the table of sessions and their episodes.

    Args:
        manager: the episodes of this server.
        session_task: task template of the episodes opened for ``/mcp`` sessions (None: free play).
        session_seed: their task seed (fixture seed in free play).
        max_sessions: cap on open ``/mcp`` sessions (their episodes are outside the manager's ``max_live``).
        sessions_per_episode: cap on handshake-era sessions opened on one episode's URL.
        session_idle_timeout: seconds without a POST after which a handshake-era session ends.
    """

    def __init__(
        self,
        manager: EpisodeManager,
        *,
        session_task: str | None = None,
        session_seed: int = 0,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        sessions_per_episode: int = DEFAULT_SESSIONS_PER_EPISODE,
        session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    ) -> None:
        self.manager = manager
        self.session_task = session_task
        self.session_seed = session_seed
        self.sessions = SessionTable(
            max_sessions=max_sessions, per_episode=sessions_per_episode, release=manager.release, idle_timeout=session_idle_timeout
        )
        self._creating: dict[str, anyio.Event] = {}

    @property
    def max_sessions(self) -> int:
        """Cap on open ``/mcp`` sessions."""
        return self.sessions.max_sessions

    @property
    def session_manager(self) -> StreamableHTTPSessionManager | None:
        """The SDK's session manager (set while the app's lifespan runs)."""
        return self.sessions.session_manager

    @session_manager.setter
    def session_manager(self, value: StreamableHTTPSessionManager | None) -> None:
        self.sessions.session_manager = value

    def limit_message(self) -> str:
        """Why one more ``/mcp`` session is refused (every open one is serving a request), and what to do."""
        return (
            f"all {self.max_sessions} MCP sessions on /mcp (the server's --max-sessions) are serving a request right "
            "now, so none can make room; retry when one finishes, close a client you no "
            "longer use, or ask the operator for a higher --max-sessions"
        )

    def episode_limit_message(self, ident: str) -> str:
        """Why one more session on an episode's URL is refused (every open one is serving a request), and what to do."""
        return (
            f"episode {ident!r} has {self.sessions.per_episode} open MCP sessions (the server's --sessions-per-episode), "
            "each serving a request right now, so none can make room; reuse the client "
            "you have (they share one world), close one you no longer use, or connect with protocol 2026-07-28 "
            "(mcp.Client's default mode), which needs no session"
        )

    async def resolve(self, ctx: ServerRequestContext[Any, Any]) -> Episode:
        """The episode a request belongs to: from the scope (episode URL) or from its MCP session (``/mcp``).

        Raises:
            EpisodeNotFound: the episode was closed or released, or the request has no session.
            MCPError: the session is not one ``/mcp`` admitted and the session cap is reached.
        """
        request = ctx.request
        if not isinstance(request, Request):
            raise EpisodeNotFound("this request did not arrive over HTTP; connect to /episodes/ID/mcp")
        ident = request.scope.get(EPISODE_SCOPE_KEY)
        if ident is not None:
            return self.manager.get(ident, live=True)
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            raise EpisodeNotFound("a request to /mcp needs an MCP session; initialize first")
        while session_id in self._creating:  # a concurrent request of this session is creating its episode
            await self._creating[session_id].wait()
        if session_id not in self.sessions.plain:
            # A session opened on an episode URL, then used on /mcp: it needs room like any /mcp session.
            if not self.sessions.admit_plain():
                raise MCPError(EPISODE_LIMIT_REACHED, self.limit_message())
            self.sessions.opened_plain(session_id)
        ident = self.sessions.plain[session_id]
        if ident is not None:
            # A released episode stays released: the session gets an error, never a silent fresh world.
            return self.manager.get(ident, live=True)
        return await self._open_episode(session_id)

    async def _open_episode(self, session_id: str) -> Episode:
        done = self._creating[session_id] = anyio.Event()
        try:
            episode = await self.manager.create_async(self.session_task, self.session_seed, capped=False)
        except EpisodeLimitReached as exc:  # the memory budget: the client reads why, nothing was made
            raise MCPError(EPISODE_LIMIT_REACHED, str(exc), {"error": "memory_limit"}) from None
        finally:
            del self._creating[session_id]
            done.set()
        if session_id not in self.sessions.plain:  # the session ended while its world was being made
            self.manager.release(episode.id)
            raise EpisodeNotFound("this MCP session has ended")
        self.sessions.plain[session_id] = episode.id
        log.info("MCP session %s… opened episode %s", session_id[:8], episode.id)
        return episode

    def end_session(self, session_id: str) -> None:
        """Forget an ended session and release the episode it owned on ``/mcp`` (client DELETE)."""
        ident = self.sessions.forget(session_id)
        if ident is not None:
            self.manager.release(ident)
            log.info("MCP session %s… ended; released episode %s", session_id[:8], ident)

    def episode_ended(self, episode: Episode) -> None:
        """Manager hook: an episode stopped being live, so every session tied to it ends now."""
        self.sessions.end_for_episode(episode.id)

    def sweep(self) -> list[str]:
        """End the sessions the SDK no longer tracks (idle-timed-out or crashed) and those without a POST for
        the session idle timeout; returns the ``/mcp`` ones the SDK dropped.

        Why: the SDK drops idle sessions on its own, without telling us; their episodes must not leak.
        """
        gone, owned = self.sessions.sweep()
        owned += self.sessions.expire_idle()
        for ident in owned:
            if ident is not None:
                self.manager.release(ident)
        return gone


async def _request_id(scope: Scope, receive: Receive) -> Any:
    """The JSON-RPC id of a POSTed request, or None (too large, unparseable, a notification, GET/DELETE).

    Reads at most ``ERROR_BODY_LIMIT`` bytes: a refusal must never buffer a whole (huge) body.
    """
    if scope.get("method") != "POST":
        return None
    declared = Headers(scope=scope).get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > ERROR_BODY_LIMIT):
        return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > ERROR_BODY_LIMIT:
            return None
        if not message.get("more_body", False):
            break
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return parsed.get("id") if isinstance(parsed, dict) else None


def _jsonrpc_error(status: int, request_id: Any, code: int, message: str, data: Any = None) -> Response:
    """A JSON-RPC error body: MCP clients surface its message (a bare HTTP error would read "Not Found")."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status)


async def _security_refusal(settings: TransportSecuritySettings | None, scope: Scope, receive: Receive) -> Response | None:
    request = Request(scope, receive)
    return await TransportSecurityMiddleware(settings).validate_request(request, is_post=request.method == "POST")


def _for_sdk(scope: Scope, **extra: Any) -> Scope:
    """A copy of ``scope`` whose path is the SDK handler's own (``/mcp``), carrying ``extra`` keys."""
    inner = dict(scope)
    inner["path"] = "/mcp"
    inner["raw_path"] = b"/mcp"
    inner.update(extra)
    return inner


def _opens_session(scope: Scope) -> bool:
    """Whether the SDK would open a handshake-era session for this request (no session id, not 2026-07-28)."""
    headers = Headers(scope=scope)
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
    return headers.get(MCP_SESSION_ID_HEADER) is None and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)


async def _serve_opening(
    manager: StreamableHTTPSessionManager, scope: Scope, receive: Receive, send: Send, opened: Any
) -> None:
    """Let the SDK answer a session-opening request; ``opened(session_id | None)`` is called exactly once."""
    pending = True

    async def watch(message: Message) -> None:
        nonlocal pending
        if pending and message["type"] == "http.response.start":
            pending = False
            sid = message["status"] < 400 and Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
            opened(sid or None)
        await send(message)

    try:
        await manager.handle_request(scope, receive, watch)
    finally:
        if pending:
            opened(None)


class EpisodeEndpoint:
    """ASGI app for ``/episodes/{episode_id}/mcp``: checks the id, then hands the request to the SDK."""

    def __init__(self, router: EpisodeRouter, security: TransportSecuritySettings | None) -> None:
        self.router = router
        self.security = security
        self.listings = ListingCache()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request addressed to an episode."""
        body: bytes | None = None
        if scope["method"] == "POST":
            body = await read_body(scope, receive, send)  # whole, before the SDK (servers/bodies.py)
            if body is None:
                return
            receive, send = replay(body, receive), answer_invalid_ids(body, send)
        router = self.router
        ident = scope["path_params"]["episode_id"]
        sessions = router.sessions
        manager = sessions.session_manager
        assert manager is not None, "the HTTP app's lifespan is not running"
        episode = router.manager._episodes.get(ident)  # noqa: SLF001 - the hot path: one dict lookup
        if episode is None or episode.state != "live":
            session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
            if scope["method"] == "DELETE" and session_id is not None and sessions.sdk_has(session_id):
                # A client may always end its own session, whatever became of the episode.
                sessions.forget(session_id)
                await manager.handle_request(_for_sdk(scope), receive, send)
                return
            await self._not_found(ident, scope, receive, send)
            return
        if body is not None and manager.json_response and eligible(scope):
            if await answer_tool_call(episode, self.security, scope, body, receive, send):
                return  # a 2026-07-28 tools/call answered straight from dispatch (servers/fastcall.py)
            answered, send = await self.listings.serve(self.security, scope, body, receive, send)
            if answered:
                return  # a 2026-07-28 server/discover or tools/list answered from the cache (servers/fastlist.py)
        inner = _for_sdk(scope, **{EPISODE_SCOPE_KEY: ident})
        if scope["method"] == "POST" and _opens_session(scope):
            refusal = await _security_refusal(self.security, scope, receive)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            if not sessions.admit_episode(ident):
                message = router.episode_limit_message(ident)
                request_id = await _request_id(scope, receive)
                await _jsonrpc_error(503, request_id, EPISODE_LIMIT_REACHED, message)(scope, receive, send)
                return
            await _serve_opening(manager, inner, receive, send, lambda sid: sessions.opened_episode(ident, sid))
            return
        session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        with sessions.serving(session_id, scope["method"]):
            await manager.handle_request(inner, receive, send)
        if scope["method"] == "DELETE" and session_id is not None and not sessions.sdk_has(session_id):
            sessions.forget(session_id)

    async def _not_found(self, ident: str, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await _security_refusal(self.security, scope, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        try:
            self.router.manager.get(ident, live=True)
            message = f"episode {ident!r} is not live"
        except EpisodeNotFound as exc:
            message = str(exc)
        request_id = await _request_id(scope, receive)
        data = {"error": "episode_not_found", "episode": ident}
        await _jsonrpc_error(404, request_id, EPISODE_NOT_FOUND, message, data)(scope, receive, send)


class PlainEndpoint:
    """ASGI app for ``/mcp``: one episode per handshake-era MCP session (see the module docstring)."""

    def __init__(self, router: EpisodeRouter, security: TransportSecuritySettings | None) -> None:
        self.router = router
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request to the plain endpoint."""
        if scope["method"] == "POST":
            body = await read_body(scope, receive, send)  # whole, before the SDK (servers/bodies.py)
            if body is None:
                return
            receive, send = replay(body, receive), answer_invalid_ids(body, send)
        refusal = await _security_refusal(self.security, scope, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._refuse_sessionless(scope, receive, send, version)
            return
        manager = self.router.session_manager
        assert manager is not None, "the HTTP app's lifespan is not running"
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            sessions = self.router.sessions
            if not sessions.admit_plain():
                request_id = await _request_id(scope, receive)
                await _jsonrpc_error(503, request_id, EPISODE_LIMIT_REACHED, self.router.limit_message())(scope, receive, send)
                return
            await _serve_opening(manager, _for_sdk(scope), receive, send, sessions.opened_plain)
            return
        with self.router.sessions.serving(session_id, scope["method"]):
            await manager.handle_request(_for_sdk(scope), receive, send)
        if scope["method"] == "DELETE":
            self.router.end_session(session_id)

    async def _refuse_sessionless(self, scope: Scope, receive: Receive, send: Send, version: str) -> None:
        """JSON-RPC -32022 naming the handshake versions, so auto-mode clients fall back to a session."""
        message = (
            "the plain /mcp endpoint serves one episode per MCP session, so it needs the initialize handshake; "
            "use a handshake protocol version, or create an episode (POST /control/episodes) and connect to its "
            f"mcp_url for protocol {version[:40]}"
        )
        data = types.UnsupportedProtocolVersionErrorData(supported=list(HANDSHAKE_PROTOCOL_VERSIONS), requested=version[:40])
        request_id = await _request_id(scope, receive)
        response = _jsonrpc_error(400, request_id, types.UNSUPPORTED_PROTOCOL_VERSION, message, data.model_dump(mode="json"))
        await response(scope, receive, send)
